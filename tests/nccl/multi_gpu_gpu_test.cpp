// NCCL on two or more GPUs: single-process (one communicator per device) and multi-process (a
// child of this binary per rank, meeting through the TCP store), every operation and dtype at
// several sizes, a killed rank and a mismatched collective. Each skips, visibly, with fewer GPUs.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <thread>

#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/nccl/nccl_error.hpp"
#include "cudakit/nccl/communicator.hpp"
#include "cudakit/nccl/group.hpp"
#include "cudakit/nccl/store/tcp_store_server.hpp"
#include "cudakit/nccl/version.hpp"
#include "cudakit/tensor/factories.hpp"
#include "nccl/store_processes.hpp"
#include "nccl/require_nccl.hpp"
#include "support/scratch_dir.hpp"

namespace {

using namespace std::chrono_literals;
using cudakit::nccl::Communicator;
using cudakit::nccl::CommunicatorOptions;
using cudakit::nccl::ReduceOp;
using cudakit::tensor::Device;
using cudakit::tensor::DType;
using cudakit::tensor::Tensor;

constexpr const char* kChildMode = "nccl_gpu_rank";

const DType kDtypes[] = {DType::float32, DType::float16, DType::bfloat16, DType::float64,
                         DType::int32,   DType::int64,   DType::uint8,    DType::bool_};
const std::int64_t kSizes[] = {1, 4099, 1 << 16};  // an odd size among them

// Rank r's element i: (r + 1) * ((i % 7) + 1), exact in every dtype for up to 8 ranks (bool:
// true).
Tensor rank_data(int rank, std::int64_t n, DType dtype, int device) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[i] = (rank + 1) * static_cast<double>(i % 7 + 1);
  return cudakit::tensor::from_host(v, {n}).to(dtype).to(Device::cuda(device));
}
Tensor empty_on(std::int64_t n, DType dtype, int device) {
  return cudakit::tensor::empty({n}, {.dtype = dtype, .device = Device::cuda(device)});
}
std::vector<double> values_of(const Tensor& t) { return t.to(DType::float64).to_vector<double>(); }

// What every rank's all_reduce(sum) must give at element i, for `world` ranks.
double summed(std::int64_t i, int world, DType dtype) {
  const double base = static_cast<double>(i % 7 + 1);
  if (dtype == DType::bool_) return 1.0;
  if (dtype == DType::uint8) return std::fmod(base * world * (world + 1) / 2, 256.0);
  return base * world * (world + 1) / 2;
}

// Runs every operation on `comms` (rank r = comms[r], all in this process or one each) and
// checks the results of rank `me` (-1: all ranks, single-process).
void check_every_operation(std::vector<Communicator>& comms, int world, DType dtype, std::int64_t n) {
  const std::size_t local = comms.size();
  std::vector<Tensor> in(local), out(local), gathered(local), scattered(local), exchanged(local), bcast(local);
  for (std::size_t k = 0; k < local; ++k) {
    const int r = comms[k].rank(), d = comms[k].device();
    in[k] = rank_data(r, n * world, dtype, d);
    out[k] = empty_on(n * world, dtype, d);
    gathered[k] = empty_on(n * world * world, dtype, d);
    scattered[k] = empty_on(n, dtype, d);
    exchanged[k] = empty_on(n * world, dtype, d);
    bcast[k] = empty_on(n * world, dtype, d);
  }
  auto each = [&](auto&& op) {
    cudakit::nccl::Group group;
    for (std::size_t k = 0; k < local; ++k) op(k);
    group.end();
  };
  each([&](std::size_t k) { comms[k].all_reduce(in[k], out[k], ReduceOp::sum); });
  each([&](std::size_t k) { comms[k].all_gather(in[k], gathered[k]); });
  each([&](std::size_t k) { comms[k].reduce_scatter(in[k], scattered[k], ReduceOp::max); });
  each([&](std::size_t k) { comms[k].broadcast(in[k], bcast[k], world - 1); });
  each([&](std::size_t k) { comms[k].all_to_all(in[k], exchanged[k]); });
  for (std::size_t k = 0; k < local; ++k) {
    const int r = comms[k].rank();
    const auto o = values_of(out[k]), g = values_of(gathered[k]), s = values_of(scattered[k]), b = values_of(bcast[k]),
               x = values_of(exchanged[k]);
    const auto last = values_of(rank_data(world - 1, n * world, dtype, comms[k].device()));
    for (std::int64_t i = 0; i < n * world; ++i) {
      ASSERT_EQ(o[i], summed(i, world, dtype)) << "all_reduce rank " << r << " i " << i;
      ASSERT_EQ(b[i], last[i]) << "broadcast from the last rank, i " << i;
    }
    for (int src = 0; src < world; ++src) {
      const auto theirs = values_of(rank_data(src, n * world, dtype, comms[k].device()));
      for (std::int64_t i = 0; i < n * world; ++i) ASSERT_EQ(g[src * n * world + i], theirs[i]) << "all_gather";
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(x[src * n + i], theirs[r * n + i]) << "all_to_all";
    }
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(s[i], last[r * n + i]) << "reduce_scatter max";
  }
}

TEST(NcclSingleProcess, EveryOperationAndDtypeOnAllDevices) {
  CUDAKIT_REQUIRE_NCCL_GPUS(2);
  std::vector<int> devices(static_cast<std::size_t>(cudakit::device_count()));
  std::iota(devices.begin(), devices.end(), 0);
  auto comms = Communicator::for_devices(devices);
  EXPECT_EQ(Communicator::for_devices(devices)[0].native_handle(), comms[0].native_handle()) << "cached";
  for (DType dtype : kDtypes)
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(std::string(cudakit::tensor::dtype_name(dtype)) + " n=" + std::to_string(n));
      check_every_operation(comms, static_cast<int>(devices.size()), dtype, n);
    }
}

// Every NCCL type (int8, uint32, uint64 and the float8s have no tensor dtype) and every
// reduction on raw buffers: every rank holds the same bytes, so min and max give them back, as
// do broadcast and all_gather; sum, prod and avg must be taken (or refused before launch where
// NCCL cannot do them: See Note [What NCCL refuses]) and leave the communicators working.
TEST(NcclSingleProcess, EveryNcclDtypeAndReductionOnRawBuffers) {
  CUDAKIT_REQUIRE_NCCL_GPUS(2);
  using cudakit::nccl::Buffer;
  using cudakit::nccl::DataType;
  std::vector<int> devices(static_cast<std::size_t>(cudakit::device_count()));
  std::iota(devices.begin(), devices.end(), 0);
  auto comms = Communicator::for_devices(devices);
  const std::size_t world = devices.size();
  constexpr std::size_t kCount = 4096;
  for (int t = 0; t < cudakit::nccl::kDataTypeCount; ++t) {
    const auto dtype = static_cast<DataType>(t);
    SCOPED_TRACE(std::string(cudakit::nccl::data_type_name(dtype)));
    const std::size_t bytes = kCount * cudakit::nccl::element_size(dtype);
    std::vector<unsigned char> host(bytes);
    for (std::size_t i = 0; i < bytes; ++i) host[i] = static_cast<unsigned char>(0x30 + i % 8);
    std::vector<void*> in(world), out(world), gathered(world);
    for (std::size_t k = 0; k < world; ++k) {
      const auto stream = cudakit::current_stream(devices[k]);
      in[k] = cudakit::memory::allocate(bytes, stream);
      out[k] = cudakit::memory::allocate(bytes, stream);
      gathered[k] = cudakit::memory::allocate(bytes * world, stream);
      ASSERT_EQ(cudaMemcpyAsync(in[k], host.data(), bytes, cudaMemcpyHostToDevice, stream.handle()), cudaSuccess);
    }
    auto buffer = [&](void* p, std::size_t count, std::size_t k) { return Buffer{p, count, dtype, devices[k], true}; };
    auto expect_back = [&](const std::vector<void*>& where, std::size_t copies, const char* what) {
      for (std::size_t k = 0; k < world; ++k) {
        std::vector<unsigned char> back(bytes * copies);
        cudakit::current_stream(devices[k]).synchronize();
        ASSERT_EQ(cudaMemcpy(back.data(), where[k], back.size(), cudaMemcpyDeviceToHost), cudaSuccess);
        for (std::size_t c = 0; c < copies; ++c)
          ASSERT_TRUE(std::equal(host.begin(), host.end(), back.begin() + static_cast<std::ptrdiff_t>(c * bytes)))
              << what << " on rank " << k << ", copy " << c;
      }
    };
    auto each = [&](auto&& op) -> bool {
      try {
        cudakit::nccl::Group group;
        for (std::size_t k = 0; k < world; ++k) op(k);
        group.end();
        return true;
      } catch (const cudakit::InvalidArgumentError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find(std::string(cudakit::nccl::data_type_name(dtype))), std::string::npos) << m;
        EXPECT_NE(m.find(cudakit::nccl::version().str()), std::string::npos) << m;
        return false;
      }
    };
    for (const ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg}) {
      const bool taken = each([&](std::size_t k) { comms[k].all_reduce(buffer(in[k], kCount, k), buffer(out[k], kCount, k), op); });
      if (taken && (op == ReduceOp::min || op == ReduceOp::max)) expect_back(out, 1, "all_reduce min/max");
      (void)each([&](std::size_t k) { comms[k].reduce(buffer(in[k], kCount, k), buffer(out[k], kCount, k), 0, op); });
    }
    ASSERT_TRUE(each([&](std::size_t k) { comms[k].broadcast(buffer(in[k], kCount, k), buffer(out[k], kCount, k), 0); }));
    expect_back(out, 1, "broadcast");
    ASSERT_TRUE(each([&](std::size_t k) { comms[k].all_gather(buffer(in[k], kCount, k), buffer(gathered[k], kCount * world, k)); }));
    expect_back(gathered, world, "all_gather");
    for (std::size_t k = 0; k < world; ++k) {
      comms[k].check();
      cudakit::current_stream(devices[k]).synchronize();
      cudakit::memory::deallocate(in[k]);
      cudakit::memory::deallocate(out[k]);
      cudakit::memory::deallocate(gathered[k]);
    }
  }
}

TEST(NcclSingleProcess, ATensorOnAnotherDeviceIsRefusedNamingBoth) {
  CUDAKIT_REQUIRE_NCCL_GPUS(2);
  const int devices[] = {0, 1};
  auto comms = Communicator::for_devices(devices);
  const Tensor on_one = rank_data(0, 8, DType::float32, 1);
  try {
    comms[0].all_reduce(on_one);
    FAIL();
  } catch (const cudakit::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("is on cuda:1 but the communicator is on cuda:0"), std::string::npos) << e.what();
  }
}

// ---- multi-process: children of this binary, one per GPU ----

int env_int(const char* name) { return std::atoi(cudakit::testing::env_or(name, "-1").c_str()); }

TEST(NcclRankChild, Rank) {
  if (cudakit::testing::child_mode() != kChildMode) GTEST_SKIP() << "runs as a child of the multi-process tests";
  const std::string scenario = cudakit::testing::env_or("NCCL_SCENARIO", "");
  CommunicatorOptions options;
  options.timeout = std::chrono::milliseconds(env_int("NCCL_TIMEOUT_MS"));
  options.name = scenario;
  cudakit::nccl::RendezvousOptions rendezvous;  // RANK, WORLD_SIZE, LOCAL_RANK, MASTER_* from the parent
  rendezvous.timeout = 30s;
  Communicator comm = Communicator::from_rendezvous(rendezvous, options);
  const int rank = comm.rank(), world = comm.world_size();
  if (scenario == "all_ops") {
    std::vector<Communicator> comms = {comm};
    for (DType dtype : kDtypes)
      for (std::int64_t n : kSizes) check_every_operation(comms, world, dtype, n);
    // send/recv around a ring.
    const Tensor mine = rank_data(rank, 1000, DType::float32, comm.device()), got = empty_on(1000, DType::float32, comm.device());
    {
      cudakit::nccl::Group group;
      comm.send(mine, (rank + 1) % world);
      comm.recv(got, (rank + world - 1) % world);
      group.end();
    }
    EXPECT_EQ(values_of(got), values_of(rank_data((rank + world - 1) % world, 1000, DType::float32, comm.device())));
    return;
  }
  const Tensor t = rank_data(rank, 1 << 16, DType::float32, comm.device());
  comm.all_reduce(t);  // #1: every rank
  cudaDeviceSynchronize();
  if (scenario == "killed" && rank == world - 1) std::_Exit(3);  // dies before #2
  const Tensor half = rank_data(rank, rank == world - 1 ? 1 << 10 : 1 << 16, DType::float32, comm.device());
  if (scenario == "mismatch") comm.all_reduce(half);  // #2: the last rank's is smaller
  else comm.all_reduce(t);
  const auto start = std::chrono::steady_clock::now();
  while (!comm.failed() && std::chrono::steady_clock::now() - start < 20s) std::this_thread::sleep_for(20ms);
  if (scenario == "mismatch" && rank == world - 1 && !comm.failed()) return;  // its part may complete
  ASSERT_TRUE(comm.failed()) << "no timeout within 20 s";
  try {
    comm.check();
  } catch (const cudakit::NcclError& e) {
    const std::string m = e.what();
    std::printf("rank %d error: %s\n", rank, m.c_str());
    EXPECT_EQ(e.operation(), "all_reduce#2") << m;
    if (scenario == "killed")
      EXPECT_NE(m.find("rank " + std::to_string(world - 1) + " sent no flight records"), std::string::npos) << m;
    else
      EXPECT_NE(m.find("operation #2 differs across ranks"), std::string::npos) << m;
  }
}

// Starts one child per GPU on `scenario`; returns their results.
std::vector<cudakit::testing::RankResult> run_ranks(const std::string& scenario, int timeout_ms,
                                                    std::chrono::seconds limit) {
  cudakit::testing::ScratchDir scratch;
  const int world = cudakit::device_count();
  int port = 0;
  {
    cudakit::nccl::TcpStoreServer probe("127.0.0.1", 0);  // a free port for rank 0's store
    port = probe.port();
  }
  std::vector<cudakit::testing::RankProcess> processes;
  for (int r = 0; r < world; ++r) {
    processes.push_back(cudakit::testing::start_rank_process(
        "NcclRankChild.Rank", kChildMode,
        {"RANK=" + std::to_string(r), "LOCAL_RANK=" + std::to_string(r), "WORLD_SIZE=" + std::to_string(world),
         "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port), "NCCL_SCENARIO=" + scenario,
         "NCCL_TIMEOUT_MS=" + std::to_string(timeout_ms)},
        (scratch.path() / ("rank" + std::to_string(r) + ".log")).string()));
  }
  return cudakit::testing::wait_rank_processes(processes, limit);
}

TEST(NcclMultiProcess, EveryOperationAndDtypeOneProcessPerGpu) {
  CUDAKIT_REQUIRE_NCCL_GPUS(2);
  if (!cudakit::testing::child_mode().empty()) GTEST_SKIP();
  const auto results = run_ranks("all_ops", 60000, 300s);
  for (std::size_t r = 0; r < results.size(); ++r)
    EXPECT_TRUE(results[r].passed()) << "rank " << r << ":\n" << results[r].output;
}

TEST(NcclMultiProcess, AKilledRankTimesTheOthersOutNamingIt) {
  CUDAKIT_REQUIRE_NCCL_GPUS(2);
  if (!cudakit::testing::child_mode().empty()) GTEST_SKIP();
  const auto results = run_ranks("killed", 3000, 120s);
  for (std::size_t r = 0; r + 1 < results.size(); ++r)
    EXPECT_TRUE(results[r].passed()) << "rank " << r << ":\n" << results[r].output;
  EXPECT_EQ(results.back().exit_code, 3) << results.back().output;
}

TEST(NcclMultiProcess, AMismatchedCollectiveIsReportedFromTheFlightRecords) {
  CUDAKIT_REQUIRE_NCCL_GPUS(2);
  if (!cudakit::testing::child_mode().empty()) GTEST_SKIP();
  const auto results = run_ranks("mismatch", 3000, 120s);
  for (std::size_t r = 0; r < results.size(); ++r)
    EXPECT_TRUE(results[r].passed()) << "rank " << r << ":\n" << results[r].output;
}

}  // namespace
