#include "cudakit/nccl/store/tcp_store.hpp"

#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "cudakit/core/error.hpp"
#include "cudakit/nccl/nccl_error.hpp"
#include "cudakit/nccl/store/file_store.hpp"
#include "cudakit/nccl/store/rendezvous.hpp"
#include "nccl/store_processes.hpp"
#include "support/scratch_dir.hpp"

namespace {

using namespace std::chrono_literals;
using cudakit::NcclError;
using cudakit::nccl::FileStore;
using cudakit::nccl::Store;
using cudakit::nccl::store_barrier;
using cudakit::nccl::TcpStore;
using cudakit::nccl::TcpStoreServer;
using cudakit::testing::child_mode;
using cudakit::testing::RankProcess;
using cudakit::testing::start_rank_process;
using cudakit::testing::wait_rank_processes;

constexpr const char* kChildMode = "nccl_store_rank";

std::string message_of(auto&& f) {
  try {
    f();
  } catch (const NcclError& e) {
    return e.what();
  }
  return "(no NcclError)";
}

// ---- one process ----

TEST(TcpStore, SetGetAddCheckAndWait) {
  TcpStoreServer server("127.0.0.1", 0);
  TcpStore store("127.0.0.1", server.port(), 0, 2s);
  store.set("a", std::string("x\0y", 3));
  EXPECT_EQ(store.get("a"), std::string("x\0y", 3));
  EXPECT_EQ(store.add("n", 5), 5);
  EXPECT_EQ(store.add("n", -2), 3);
  const std::string present[] = {"a", "n"}, absent[] = {"a", "zzz"};
  EXPECT_TRUE(store.check(present));
  EXPECT_FALSE(store.check(absent));
  // A wait is answered when another client sets the key.
  std::thread setter([&] {
    TcpStore other("127.0.0.1", server.port(), 1, 2s);
    std::this_thread::sleep_for(50ms);
    other.set("late", "1");
  });
  const std::string late[] = {"late"};
  store.wait(late, 2s);
  setter.join();
  EXPECT_EQ(server.key_count(), 3u);
}

TEST(TcpStore, AWaitTimesOutInBoundedTimeNamingKeyAddressAndRank) {
  TcpStoreServer server("127.0.0.1", 0);
  TcpStore store("127.0.0.1", server.port(), 3, 2s);
  const auto start = std::chrono::steady_clock::now();
  const std::string keys[] = {"never"};
  const std::string message = message_of([&] { store.wait(keys, 200ms); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
  EXPECT_NE(message.find("'never'"), std::string::npos) << message;
  EXPECT_NE(message.find("tcp://127.0.0.1:" + std::to_string(server.port())), std::string::npos) << message;
  EXPECT_NE(message.find("rank 3"), std::string::npos) << message;
  // The connection is usable afterwards.
  store.set("k", "v");
  EXPECT_EQ(store.get("k"), "v");
}

TEST(TcpStore, AnUnreachableStoreFailsInBoundedTimeWithItsAddress) {
  int port = 0;
  {
    TcpStoreServer probe("127.0.0.1", 0);  // a port nobody listens on once it is gone
    port = probe.port();
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string message = message_of([&] { TcpStore store("127.0.0.1", port, 5, 300ms); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_NE(message.find("cannot reach the store at tcp://127.0.0.1:" + std::to_string(port)), std::string::npos)
      << message;
  EXPECT_NE(message.find("rank 5"), std::string::npos) << message;
}

TEST(TcpStore, AClientReconnectsToARestartedStore) {
  auto server = std::make_unique<TcpStoreServer>("127.0.0.1", 0);
  const int port = server->port();
  TcpStore store("127.0.0.1", port, 0, 2s);
  store.set("before", "1");
  server.reset();
  server = std::make_unique<TcpStoreServer>("127.0.0.1", port);
  store.set("after", "2");  // over a new connection
  EXPECT_EQ(store.get("after"), "2");
  const std::string lost[] = {"before"};
  EXPECT_FALSE(store.check(lost)) << "a restarted store starts empty";
  // add is not retried over a new connection (it may have been applied): it says so.
  server.reset();
  server = std::make_unique<TcpStoreServer>("127.0.0.1", port);
  const std::string message = message_of([&] { (void)store.add("n", 1); });
  EXPECT_NE(message.find("closed the connection"), std::string::npos) << message;
  EXPECT_EQ(store.add("n", 1), 1);
}

TEST(TcpStore, APeerSpeakingAnotherProtocolIsDroppedWithAReason) {
  TcpStoreServer server("127.0.0.1", 0);
  TcpStore good("127.0.0.1", server.port(), 0, 2s);
  // A raw client that sends garbage: the server answers with an error and drops it, and keeps
  // serving the others.
  const int raw = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(server.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(raw, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string garbage = "GET / HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(raw, garbage.data(), garbage.size(), 0), static_cast<ssize_t>(garbage.size()));
  char buffer[512];
  std::string reply;
  while (true) {
    const ssize_t n = ::recv(raw, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    reply.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(raw);
  EXPECT_NE(reply.find("malformed store message"), std::string::npos);
  good.set("still", "serving");
  EXPECT_EQ(good.get("still"), "serving");
}

// The watchdog shares its communicator's store with the program's thread: requests from several
// threads on one client go one at a time, and the server sees every one.
TEST(TcpStoreConcurrency, ThreadsSharingOneClientAndOthersWithTheirOwnCountExactly) {
  TcpStoreServer server("127.0.0.1", 0);
  TcpStore shared("127.0.0.1", server.port(), 0, 5s);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      TcpStore own("127.0.0.1", server.port(), t + 1, 5s);
      for (int i = 0; i < 50; ++i) {
        shared.add("count", 1);
        own.add("count", 1);
        shared.set("last/" + std::to_string(t), std::to_string(i));
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(shared.add("count", 0), 400);
  for (int t = 0; t < 4; ++t) EXPECT_EQ(shared.get("last/" + std::to_string(t)), "49");
}

// ---- several processes: each rank a child of this binary ----

// What each child does: set its key, read everyone's, count itself in, and meet at barriers.
void run_rank(Store& store, int rank, int world_size) {
  store.set("rank/" + std::to_string(rank), std::to_string(rank * 7));
  store_barrier(store, "set", world_size);
  for (int r = 0; r < world_size; ++r) ASSERT_EQ(store.get("rank/" + std::to_string(r)), std::to_string(r * 7));
  store.add("arrived", 1);
  store_barrier(store, "counted", world_size);
  ASSERT_EQ(store.add("arrived", 0), world_size);
}

int env_int(const char* name) { return std::atoi(cudakit::testing::env_or(name, "-1").c_str()); }

TEST(NcclStoreChild, Rank) {
  if (child_mode() != kChildMode) GTEST_SKIP() << "runs as a child of the store tests";
  const std::string scenario = cudakit::testing::env_or("STORE_SCENARIO", "");
  const int rank = env_int("RANK"), world_size = env_int("WORLD_SIZE");
  const auto timeout = std::chrono::milliseconds(env_int("STORE_TIMEOUT_MS"));
  std::unique_ptr<Store> store;
  if (scenario == "file") store = std::make_unique<FileStore>(cudakit::testing::env_or("STORE_PATH", ""), rank, timeout);
  else store = std::make_unique<TcpStore>("127.0.0.1", env_int("MASTER_PORT"), rank, timeout);
  if (scenario == "missing") {
    // One rank of the world never comes: the barrier says how many did, in bounded time.
    const std::string message = message_of([&] { store_barrier(*store, "all", world_size); });
    EXPECT_NE(message.find(std::to_string(world_size - 1) + " of " + std::to_string(world_size) + " ranks arrived"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("rank " + std::to_string(rank)), std::string::npos) << message;
    return;
  }
  run_rank(*store, rank, world_size);
}

std::vector<RankProcess> start_ranks(int count, int world_size, const std::vector<std::string>& extra,
                                     const cudakit::testing::ScratchDir& scratch) {
  std::vector<RankProcess> processes;
  for (int r = 0; r < count; ++r) {
    std::vector<std::string> env = extra;
    env.push_back("RANK=" + std::to_string(r));
    env.push_back("WORLD_SIZE=" + std::to_string(world_size));
    processes.push_back(start_rank_process("NcclStoreChild.Rank", kChildMode, env,
                                           (scratch.path() / ("rank" + std::to_string(r) + ".log")).string()));
  }
  return processes;
}

void expect_all_passed(const std::vector<cudakit::testing::RankResult>& results) {
  for (std::size_t r = 0; r < results.size(); ++r)
    EXPECT_TRUE(results[r].passed()) << "rank " << r << " exited " << results[r].exit_code << ":\n" << results[r].output;
}

class TcpStoreProcesses : public ::testing::TestWithParam<int> {};

TEST_P(TcpStoreProcesses, EveryRankSeesEveryOthersKeysAndCount) {
  if (!child_mode().empty()) GTEST_SKIP();
  cudakit::testing::ScratchDir scratch;
  TcpStoreServer server("127.0.0.1", 0);
  const int world_size = GetParam();
  const auto results = wait_rank_processes(
      start_ranks(world_size, world_size,
                  {"STORE_SCENARIO=tcp", "STORE_TIMEOUT_MS=10000", "MASTER_PORT=" + std::to_string(server.port())}, scratch),
      20s);
  expect_all_passed(results);
}
INSTANTIATE_TEST_SUITE_P(WorldSizes, TcpStoreProcesses, ::testing::Values(2, 16));

TEST(TcpStoreJoins, RanksStartedBeforeTheStoreJoinItWhenItComes) {
  if (!child_mode().empty()) GTEST_SKIP();
  cudakit::testing::ScratchDir scratch;
  int port = 0;
  {
    TcpStoreServer probe("127.0.0.1", 0);
    port = probe.port();
  }
  auto processes = start_ranks(3, 3, {"STORE_SCENARIO=tcp", "STORE_TIMEOUT_MS=10000", "MASTER_PORT=" + std::to_string(port)},
                               scratch);
  std::this_thread::sleep_for(300ms);
  TcpStoreServer server("127.0.0.1", port);
  expect_all_passed(wait_rank_processes(processes, 20s));
}

TEST(TcpStoreJoins, AMissingRankTimesTheJoinOutNamingHowManyCame) {
  if (!child_mode().empty()) GTEST_SKIP();
  cudakit::testing::ScratchDir scratch;
  TcpStoreServer server("127.0.0.1", 0);
  const auto start = std::chrono::steady_clock::now();
  const auto results = wait_rank_processes(
      start_ranks(2, 3, {"STORE_SCENARIO=missing", "STORE_TIMEOUT_MS=400", "MASTER_PORT=" + std::to_string(server.port())},
                  scratch),
      20s);
  expect_all_passed(results);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(FileStoreProcesses, RanksMeetInADirectory) {
  if (!child_mode().empty()) GTEST_SKIP();
  cudakit::testing::ScratchDir scratch;
  const std::string path = (scratch.path() / "store").string();
  expect_all_passed(
      wait_rank_processes(start_ranks(4, 4, {"STORE_SCENARIO=file", "STORE_TIMEOUT_MS=10000", "STORE_PATH=" + path}, scratch), 20s));
}

TEST(FileStore, AWaitTimesOutNamingTheMissingKeysAndTheDirectory) {
  cudakit::testing::ScratchDir scratch;
  FileStore store(scratch.path() / "s", 2, 1s);
  store.set("here", "1");
  const std::string keys[] = {"here", "gone"};
  const std::string message = message_of([&] { store.wait(keys, 50ms); });
  EXPECT_NE(message.find("'gone'"), std::string::npos) << message;
  EXPECT_EQ(message.find("'here'"), std::string::npos) << message;
  EXPECT_NE(message.find("file://"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 2"), std::string::npos) << message;
}

}  // namespace
