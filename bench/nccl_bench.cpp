// NCCL collectives through cudakit: time per operation, algorithm and bus bandwidth (nccl-tests'
// definitions, See Note [Bus bandwidth]) over sizes 8 B .. 1 GiB, for every operation, one JSON
// line per (operation, size). Two modes:
//   nccl_bench                         one process, one communicator per visible GPU
//   nccl_bench --processes N           N processes (children of this one), one GPU each, meeting
//                                      through the TCP store; rank 0 prints
// Options: --min-bytes B --max-bytes B (default 8 and 1 GiB, sizes x4 apart) --ops a,b,...
// --warmup W (5) --iterations I (0: by size, 20..200; the median of three blocks of them).
// bench/torch_nccl_bench.py measures torch.distributed the same way; bench/nccl_table.py puts
// the two side by side.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/nccl/communicator.hpp"
#include "cudakit/nccl/group.hpp"
#include "cudakit/nccl/store/tcp_store_server.hpp"
#include "cudakit/nccl/version.hpp"

namespace {

using cudakit::nccl::Buffer;
using cudakit::nccl::Communicator;
using cudakit::nccl::DataType;

// Note [Bus bandwidth]
// As nccl-tests define them, with S the operation's size in bytes (all_gather: the output;
// reduce_scatter: the input; the others: the buffer) and t its time: algbw = S / t, and busbw =
// algbw x a factor that makes it comparable to the links' peak whatever the rank count n:
// all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast, reduce,
// send_recv 1.
double bus_factor(const std::string& op, int n) {
  if (op == "all_reduce") return 2.0 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "all_to_all") return static_cast<double>(n - 1) / n;
  return 1.0;
}

const std::vector<std::string> kOps = {"all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter", "all_to_all",
                                       "send_recv"};

struct Options {
  std::size_t min_bytes = 8, max_bytes = std::size_t(1) << 30;
  std::vector<std::string> ops = kOps;
  int warmup = 5, iterations = 0, processes = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--min-bytes") o.min_bytes = std::stoull(next());
    else if (a == "--max-bytes") o.max_bytes = std::stoull(next());
    else if (a == "--warmup") o.warmup = std::stoi(next());
    else if (a == "--iterations") o.iterations = std::stoi(next());
    else if (a == "--processes") o.processes = std::stoi(next());
    else if (a == "--ops") {
      o.ops.clear();
      std::stringstream list(next());
      for (std::string op; std::getline(list, op, ',');) {
        if (std::find(kOps.begin(), kOps.end(), op) == kOps.end()) {
          std::fprintf(stderr, "unknown op '%s'\n", op.c_str());
          std::exit(2);
        }
        o.ops.push_back(op);
      }
    } else {
      std::fprintf(stderr, "unknown option '%s'\n", a.c_str());
      std::exit(2);
    }
  }
  return o;
}

// One rank's buffers for one size (floats; the size rounded to whole floats x ranks).
struct RankBuffers {
  Communicator comm;
  void* in = nullptr;
  void* out = nullptr;
};

// Issues `op` of `bytes` on every local rank, inside one group when there are several, and for
// send_recv, whose two halves torch also issues as one group (batch_isend_irecv). One rank's
// collective is not wrapped: torch.distributed issues it alone, and a group around it is one
// more NCCL group end per operation than the peer pays.
void issue(std::vector<RankBuffers>& ranks, const std::string& op, std::size_t bytes) {
  const int n = ranks[0].comm.world_size();
  const std::size_t count = bytes / 4;  // elements of the op's size S
  std::optional<cudakit::nccl::Group> group;
  if (ranks.size() > 1 || op == "send_recv") group.emplace();
  for (RankBuffers& r : ranks) {
    const int d = r.comm.device();
    auto buf = [&](void* p, std::size_t c) { return Buffer{p, c, DataType::float32, d, true}; };
    Communicator& c = r.comm;
    if (op == "all_reduce") c.all_reduce(buf(r.in, count), buf(r.out, count), cudakit::nccl::ReduceOp::sum);
    else if (op == "reduce") c.reduce(buf(r.in, count), buf(r.out, count), 0, cudakit::nccl::ReduceOp::sum);
    else if (op == "broadcast") c.broadcast(buf(r.in, count), buf(r.out, count), 0);
    else if (op == "all_gather") c.all_gather(buf(r.in, count / n), buf(r.out, count / n * n));
    else if (op == "reduce_scatter") c.reduce_scatter(buf(r.in, count / n * n), buf(r.out, count / n), cudakit::nccl::ReduceOp::sum);
    else if (op == "all_to_all") c.all_to_all(buf(r.in, count / n * n), buf(r.out, count / n * n));
    else {
      c.send(buf(r.in, count), (c.rank() + 1) % n);
      c.recv(buf(r.out, count), (c.rank() + n - 1) % n);
    }
  }
  if (group) group->end();
}

void synchronize(std::vector<RankBuffers>& ranks) {
  for (RankBuffers& r : ranks) cudakit::current_stream(r.comm.device()).synchronize();
}

constexpr std::size_t kTimedBlocks = 3;  // Note [Timed blocks of collectives]

void run(std::vector<RankBuffers>& ranks, const Options& o, const char* mode, bool print) {
  const int n = ranks[0].comm.world_size();
  for (RankBuffers& r : ranks) {
    r.in = cudakit::memory::allocate(std::max<std::size_t>(o.max_bytes, 4 * n), cudakit::current_stream(r.comm.device()));
    r.out = cudakit::memory::allocate(std::max<std::size_t>(o.max_bytes, 4 * n), cudakit::current_stream(r.comm.device()));
  }
  const auto v = cudakit::nccl::version();
  for (const std::string& op : o.ops) {
    for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 4) {
      // Below one float per rank the operation is empty: skipped.
      if (bytes / 4 / static_cast<std::size_t>(n) == 0 && (op == "all_gather" || op == "reduce_scatter" || op == "all_to_all"))
        continue;
      const int iterations = o.iterations > 0 ? o.iterations
                                              : static_cast<int>(std::clamp<double>(4e9 / static_cast<double>(bytes), 20, 200));
      for (int i = 0; i < o.warmup; ++i) issue(ranks, op, bytes);
      synchronize(ranks);
      // Note [Timed blocks of collectives]
      // One stall of milliseconds (the host descheduled, NCCL's proxy thread late) inside one
      // timed loop of a few hundred microseconds made one size's figure many times its
      // neighbours', on either side (notes/performance-rows.md has the run). The loop runs as
      // kTimedBlocks blocks and the size's figure is their median, as bench/torch_nccl_bench.py
      // does.
      std::array<double, kTimedBlocks> block_us{};
      for (double& block : block_us) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < iterations; ++i) issue(ranks, op, bytes);
        synchronize(ranks);
        block = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / iterations;
      }
      std::sort(block_us.begin(), block_us.end());
      const double us = block_us[kTimedBlocks / 2];
      const double algbw = static_cast<double>(bytes) / us / 1e3;  // GB/s
      if (print)
        std::printf("{\"bench\":\"nccl\",\"impl\":\"cudakit\",\"mode\":\"%s\",\"op\":\"%s\",\"bytes\":%zu,\"ranks\":%d,"
                    "\"iterations\":%d,\"time_us\":%.3f,\"algbw_GBps\":%.3f,\"busbw_GBps\":%.3f,\"nccl\":\"%s\"}\n",
                    mode, op.c_str(), bytes, n, iterations, us, algbw, algbw * bus_factor(op, n), v.str().c_str());
      std::fflush(stdout);
    }
  }
  for (RankBuffers& r : ranks) {
    cudakit::memory::deallocate(r.in);
    cudakit::memory::deallocate(r.out);
  }
}

int spawn_processes(int argc, char** argv, int processes) {
  int port = 0;
  {
    cudakit::nccl::TcpStoreServer probe("127.0.0.1", 0);  // a free port for rank 0's store
    port = probe.port();
  }
  std::vector<pid_t> children;
  for (int r = 0; r < processes; ++r) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const std::string rank = std::to_string(r);
      ::setenv("RANK", rank.c_str(), 1);
      ::setenv("LOCAL_RANK", rank.c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(processes).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::execv("/proc/self/exe", argv);
      ::_exit(127);
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  (void)argc;
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cudakit::is_available()) {
    std::printf("no CUDA device: NCCL benchmarks skipped\n");
    return 0;
  }
  if (!cudakit::nccl::library_loaded()) {
    std::printf("libnccl is not available: NCCL benchmarks skipped\n");
    return 0;
  }
  const Options o = parse(argc, argv);
  if (o.processes > 0 && std::getenv("RANK") == nullptr) return spawn_processes(argc, argv, o.processes);
  if (std::getenv("RANK") != nullptr) {
    Communicator comm = Communicator::from_rendezvous({}, {.name = "nccl_bench"});
    std::vector<RankBuffers> ranks = {{comm}};
    run(ranks, o, "multi_process", comm.rank() == 0);
    return 0;
  }
  std::vector<int> devices(static_cast<std::size_t>(cudakit::device_count()));
  std::iota(devices.begin(), devices.end(), 0);
  std::vector<RankBuffers> ranks;
  for (Communicator& c : Communicator::for_devices(devices)) ranks.push_back({c});
  run(ranks, o, "single_process", true);
  return 0;
}
