// NCCL on one GPU: every operation and dtype on a one-rank communicator, capture and replay, the
// allocator's ordering, the trace hooks, validation before launch, and the watchdog's abort.

#include "cudakit/nccl/communicator.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "cudakit/nccl/detail/nccl_api.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/nccl/nccl_error.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/nccl/group.hpp"
#include "cudakit/nccl/validation.hpp"
#include "cudakit/nccl/version.hpp"
#include "cudakit/tensor/factories.hpp"
#include "nccl/require_nccl.hpp"
#include "support/kernels.hpp"

namespace {

using namespace std::chrono_literals;
using cudakit::nccl::Buffer;
using cudakit::nccl::Communicator;
using cudakit::nccl::CommunicatorOptions;
using cudakit::nccl::DataType;
using cudakit::nccl::ReduceOp;
using cudakit::tensor::DType;
using cudakit::tensor::Tensor;

Communicator one_rank(CommunicatorOptions options = {}) {
  return Communicator::init_rank(1, 0, cudakit::nccl::unique_id(), 0, options);
}

Tensor cuda_tensor(std::int64_t n, DType dtype) {
  return cudakit::tensor::empty({n}, {.dtype = dtype, .device = cudakit::tensor::Device::cuda(0)});
}

// n elements 1, 2, ..., wrapping below 100 (exact in every dtype, bool: all true).
Tensor counting(std::int64_t n, DType dtype) {
  std::vector<double> values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) values[i] = static_cast<double>(i % 99 + 1);
  return cudakit::tensor::from_host(values, {n}).to(dtype).to(cudakit::tensor::Device::cuda(0));
}

std::vector<double> values_of(const Tensor& t) { return t.to(DType::float64).to_vector<double>(); }

// ---- every tensor dtype, every operation ----

class OneRankTensorOps : public ::testing::TestWithParam<DType> {};

TEST_P(OneRankTensorOps, EveryOperationOnOneRankGivesItsInput) {
  CUDAKIT_REQUIRE_NCCL();
  Communicator comm = one_rank();
  const DType dtype = GetParam();
  for (const std::int64_t n : {1, 1000, 1 << 18}) {
    const Tensor input = counting(n, dtype);
    const std::vector<double> expected = values_of(input);
    for (const ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg}) {
      if (dtype == DType::bool_ && op == ReduceOp::avg) {
        EXPECT_THROW(comm.all_reduce(input, cuda_tensor(n, dtype), op), cudakit::InvalidArgumentError);
        continue;
      }
      const Tensor out = cuda_tensor(n, dtype);
      comm.all_reduce(input, out, op);
      EXPECT_EQ(values_of(out), expected) << "all_reduce " << cudakit::nccl::reduce_op_name(op) << " n=" << n;
      const Tensor reduced = cuda_tensor(n, dtype);
      comm.reduce(input, reduced, 0, op);
      EXPECT_EQ(values_of(reduced), expected) << "reduce " << cudakit::nccl::reduce_op_name(op);
      const Tensor scattered = cuda_tensor(n, dtype);
      comm.reduce_scatter(input, scattered, op);
      EXPECT_EQ(values_of(scattered), expected) << "reduce_scatter";
    }
    const Tensor inplace = counting(n, dtype);
    comm.all_reduce(inplace);
    EXPECT_EQ(values_of(inplace), expected) << "in place";
    const Tensor broadcast = cuda_tensor(n, dtype);
    comm.broadcast(input, broadcast, 0);
    EXPECT_EQ(values_of(broadcast), expected) << "broadcast";
    const Tensor gathered = cuda_tensor(n, dtype);
    comm.all_gather(input, gathered);
    EXPECT_EQ(values_of(gathered), expected) << "all_gather";
    const Tensor exchanged = cuda_tensor(n, dtype);
    comm.all_to_all(input, exchanged);
    EXPECT_EQ(values_of(exchanged), expected) << "all_to_all";
    const Tensor received = cuda_tensor(n, dtype);
    {
      cudakit::nccl::Group group;
      comm.send(input, 0);
      comm.recv(received, 0);
      group.end();
    }
    EXPECT_EQ(values_of(received), expected) << "send/recv to itself";
  }
  comm.check();
}

INSTANTIATE_TEST_SUITE_P(Dtypes, OneRankTensorOps,
                         ::testing::Values(DType::float32, DType::float16, DType::bfloat16, DType::float64, DType::int32,
                                           DType::int64, DType::uint8, DType::bool_),
                         [](const auto& info) { return std::string(cudakit::tensor::dtype_name(info.param)); });

// See Note [A one-rank all_to_all is a copy]: queued at the call on the caller's stream, behind
// the work already there, inside a group too, and numbered and recorded like any operation.
TEST(OneRankAllToAll, IsACopyOrderedOnTheStreamAndRecordedInsideAGroupToo) {
  CUDAKIT_REQUIRE_NCCL();
  Communicator comm = one_rank();
  cudakit::Stream stream;
  const std::int64_t n = 1 << 20;
  const Tensor input = counting(n, DType::float32);
  const Tensor output = cuda_tensor(n, DType::float32);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the tensors were made on another stream
  ASSERT_EQ(cudaMemsetAsync(output.data_ptr(), 0, n * 4, stream.handle()), cudaSuccess);
  const std::uint64_t issued = comm.operations_issued();
  // Held back behind a spin: a copy not ordered on the stream would land before the memset above.
  cudakit::testing::launch_spin(stream.handle(), 20'000'000);
  {
    cudakit::nccl::Group group;
    comm.all_to_all(input, output, stream);
    group.end();
  }
  stream.synchronize();
  EXPECT_EQ(values_of(output), values_of(input));
  EXPECT_EQ(comm.operations_issued(), issued + 1);
  const auto records = comm.flight_recorder().records();
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.back().op, "all_to_all");
  EXPECT_EQ(records.back().input_count, static_cast<std::uint64_t>(n));
  // An empty exchange is an operation too, with nothing to copy.
  comm.all_to_all(cuda_tensor(0, DType::float32), cuda_tensor(0, DType::float32), stream);
  stream.synchronize();
  EXPECT_EQ(comm.operations_issued(), issued + 2);
  comm.check();
}

// ---- every NCCL dtype on raw buffers (int8, uint32, uint64 and the float8s have no tensor dtype) ----

// Whether NCCL can do `op` ("all_reduce", "broadcast", ...; `reduction` for the reducing ones)
// on `dtype` on this device, from what NCCL documents: float8 exists from 2.24 on and is
// reduced on sm_90 or later only. (float8 avg on one rank, which NCCL itself refuses, cudakit
// does as the sum that equals it: accepted.)
bool nccl_takes(DataType dtype, bool reduction) {
  const bool float8 = dtype == DataType::float8_e4m3 || dtype == DataType::float8_e5m2;
  if (!float8) return true;
  const auto v = cudakit::nccl::version();
  if (v.major * 100 + v.minor < 224) return false;
  int major = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  return !reduction || major >= 9;
}

TEST(OneRankBufferOps, EveryNcclDtypeCopiesItsBytes) {
  CUDAKIT_REQUIRE_NCCL();
  Communicator comm = one_rank();
  constexpr std::size_t kCount = 4096;
  const std::string version = cudakit::nccl::version().str();
  for (int t = 0; t < cudakit::nccl::kDataTypeCount; ++t) {
    const auto dtype = static_cast<DataType>(t);
    const std::string name(cudakit::nccl::data_type_name(dtype));
    const std::size_t bytes = kCount * cudakit::nccl::element_size(dtype);
    // Bytes 0x30..0x37: a small positive finite number in every type, so that the reductions
    // of one rank are exact.
    std::vector<unsigned char> host(bytes);
    for (std::size_t i = 0; i < bytes; ++i) host[i] = static_cast<unsigned char>(0x30 + i % 8);
    void* in = cudakit::memory::allocate(bytes);
    void* out = cudakit::memory::allocate(bytes);
    const cudaStream_t stream = cudakit::current_stream(0).handle();
    ASSERT_EQ(cudaMemcpyAsync(in, host.data(), bytes, cudaMemcpyHostToDevice, stream), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(out, 0, bytes, stream), cudaSuccess);
    const Buffer input{in, kCount, dtype, 0, true}, output{out, kCount, dtype, 0, true};
    auto expect_copied = [&](const std::string& what) {
      std::vector<unsigned char> back(bytes);
      ASSERT_EQ(cudaMemcpyAsync(back.data(), out, bytes, cudaMemcpyDeviceToHost, stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      EXPECT_EQ(back, host) << what << " " << name;
      ASSERT_EQ(cudaMemsetAsync(out, 0, bytes, stream), cudaSuccess);
    };
    // Runs `call` (operation `what`), which NCCL takes or cudakit refuses before launching it.
    auto run = [&](const std::string& what, bool reduction, auto call) {
      const std::uint64_t issued = comm.operations_issued();
      if (nccl_takes(dtype, reduction)) {
        call();
        expect_copied(what);
        return;
      }
      try {
        call();
        ADD_FAILURE() << what << " of " << name << " was accepted; NCCL " << version << " cannot do it";
      } catch (const cudakit::InvalidArgumentError& e) {
        const std::string m = e.what();
        for (const std::string& part : {what, name, version})
          EXPECT_NE(m.find(part), std::string::npos) << "the refusal does not name " << part << ": " << m;
      }
      EXPECT_EQ(comm.operations_issued(), issued) << what << " of " << name << ": refused, yet issued";
    };
    for (const ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg}) {
      const std::string op_name(cudakit::nccl::reduce_op_name(op));
      run("all_reduce " + op_name, true, [&] { comm.all_reduce(input, output, op); });
      run("reduce " + op_name, true, [&] { comm.reduce(input, output, 0, op); });
      run("reduce_scatter " + op_name, true, [&] { comm.reduce_scatter(input, output, op); });
    }
    run("broadcast", false, [&] { comm.broadcast(input, output, 0); });
    run("all_gather", false, [&] { comm.all_gather(input, output); });
    run("all_to_all", false, [&] { comm.all_to_all(input, output); });
    cudakit::memory::deallocate(in);
    cudakit::memory::deallocate(out);
  }
  comm.check();
  EXPECT_FALSE(comm.failed()) << "no operation of the loop reached NCCL and was refused there";
}

// ---- a communicator NCCL has failed, and the process after it ----

// Hands NCCL, behind cudakit's back, an operation NCCL 2.28 refuses on one rank (float8 avg,
// See Note [What NCCL refuses]): NCCL makes that its communicator's asynchronous error.
bool poison(Communicator& comm, void* buffer) {
  const auto& nccl = cudakit::detail::nccl_api();
  const ncclResult_t r = nccl.ncclAllReduce(buffer, buffer, 64, ncclFloat8e4m3, ncclAvg,
                                            static_cast<ncclComm_t>(comm.native_handle()),
                                            cudakit::current_stream(0).handle());
  return r != ncclSuccess && r != ncclInProgress;
}

TEST(OneRankRecovery, AfterNcclFailsACommunicatorNewOnesAreMadeAndUsed) {
  CUDAKIT_REQUIRE_NCCL();
  void* buffer = cudakit::memory::allocate(64);
  // The watchdog would notice NCCL's error within its interval and abort the communicator
  // itself; a long interval leaves the destroy path (and the operation's) to the test.
  CommunicatorOptions slow_watch;
  slow_watch.poll_interval = 60s;
  {
    Communicator destroyed_failed = one_rank(slow_watch);
    if (!poison(destroyed_failed, buffer)) {
      cudakit::memory::deallocate(buffer);
      GTEST_SKIP() << "NCCL " << cudakit::nccl::version().str()
                   << " takes float8 avg on one rank: no operation known to make it fail";
    }
  }  // destroyed with NCCL's asynchronous error set: aborted, no group left open
  {
    Communicator used_after_failure = one_rank(slow_watch);
    ASSERT_TRUE(poison(used_after_failure, buffer));
    const Tensor t = counting(16, DType::float32);
    try {
      used_after_failure.all_reduce(t);
      ADD_FAILURE() << "an operation on a communicator NCCL has failed was accepted";
    } catch (const cudakit::NcclError& e) {
      EXPECT_EQ(e.rank(), 0) << e.what();
    }
    EXPECT_TRUE(used_after_failure.failed());
    EXPECT_THROW(used_after_failure.all_reduce(t), cudakit::NcclError) << "and it stays failed";
  }
  cudakit::memory::deallocate(buffer);
  EXPECT_EQ(cudakit::detail::nccl_api().ncclGroupEnd(), ncclInvalidUsage) << "a group was left open on this thread";
  Communicator fresh = one_rank();
  const Tensor t = counting(1000, DType::float32);
  fresh.all_reduce(t);
  EXPECT_EQ(values_of(t)[999], 10.0) << "a new communicator works (999 % 99 + 1)";
  const int devices[] = {0};
  std::vector<Communicator> grouped = Communicator::for_devices(devices);
  const Tensor u = counting(8, DType::int32);
  grouped[0].all_reduce(u, ReduceOp::max);
  EXPECT_EQ(values_of(u)[7], 8.0) << "a group-made communicator works";
  fresh.check();
}

// ---- validation before launch ----

TEST(OneRankValidation, BadInputIsRefusedBeforeAnythingIsLaunched) {
  CUDAKIT_REQUIRE_NCCL();
  Communicator comm = one_rank();
  const Tensor a = counting(8, DType::float32);
  auto refused = [&](auto call, const std::string& part) {
    try {
      call();
      ADD_FAILURE() << "accepted; expected: " << part;
    } catch (const cudakit::InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  refused([&] { comm.all_gather(a, cuda_tensor(9, DType::float32)); }, "the output has 9 elements; it must have 8");
  refused([&] { comm.all_reduce(a, cuda_tensor(8, DType::int32)); }, "the output's dtype int32 differs from the input's float32");
  refused([&] { comm.broadcast(a, 1); }, "the root 1 is outside 0..0");
  refused([&] { comm.send(a, 2); }, "the peer 2 is outside 0..0");
  refused([&] { comm.all_reduce(cudakit::tensor::from_host(std::vector<float>(8), {8})); }, "is host memory");
  refused([&] { comm.all_reduce(counting(16, DType::float32).view({4, 4}).t()); }, "is not contiguous");
  refused([&] { comm.all_to_all(a, a); }, "cannot work in place");
  EXPECT_EQ(comm.operations_issued(), 0u) << "a refused operation is never issued";
  comm.all_reduce(a);
  EXPECT_EQ(values_of(a)[7], 8.0) << "the communicator works after refusals";
  EXPECT_FALSE(comm.failed());
}

// ---- the trace hooks see collectives, with their buffers and stream ----

TEST(OneRankTrace, CollectivesReportTheirStreamAndByteRanges) {
  CUDAKIT_REQUIRE_NCCL();
  Communicator comm = one_rank();
  // The stream first: the tensors' memory is record_stream'ed on it, and a stream must outlive
  // the frees that wait for it (the allocator records an event on it then).
  cudakit::Stream side(0);
  const Tensor in = counting(256, DType::float32), out = cuda_tensor(1024 / 4, DType::float32);
  std::vector<cudakit::TraceEvent> seen;
  std::vector<std::vector<cudakit::MemoryAccess>> accesses;
  const auto id = cudakit::attach_trace_listener([&](const cudakit::TraceEvent& e) {
    if (e.kind != cudakit::TraceEventKind::collective && e.kind != cudakit::TraceEventKind::record_stream) return;
    seen.push_back(e);
    accesses.emplace_back(e.accesses.begin(), e.accesses.end());
  });
  comm.all_reduce(in, out, ReduceOp::sum, side);
  comm.all_reduce(out, ReduceOp::max, side);
  cudakit::detach_trace_listener(id);
  side.synchronize();
  std::vector<std::size_t> collectives;
  bool recorded_on_side = false;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (seen[i].kind == cudakit::TraceEventKind::collective) collectives.push_back(i);
    else if (seen[i].other_stream == side.handle()) recorded_on_side = true;
  }
  ASSERT_EQ(collectives.size(), 2u);
  const auto& first = seen[collectives[0]];
  EXPECT_STREQ(first.name, "all_reduce");
  EXPECT_EQ(first.stream, side.handle());
  EXPECT_EQ(first.device, 0);
  ASSERT_EQ(accesses[collectives[0]].size(), 2u);
  EXPECT_EQ(accesses[collectives[0]][0].begin, in.data_ptr());
  EXPECT_EQ(accesses[collectives[0]][0].bytes, 1024u);
  EXPECT_EQ(accesses[collectives[0]][0].mode, cudakit::MemoryAccess::Mode::read);
  EXPECT_EQ(accesses[collectives[0]][1].mode, cudakit::MemoryAccess::Mode::write);
  ASSERT_EQ(accesses[collectives[1]].size(), 1u) << "in place: one range";
  EXPECT_EQ(accesses[collectives[1]][0].mode, cudakit::MemoryAccess::Mode::read_write);
  EXPECT_TRUE(recorded_on_side) << "tensors used on another stream than their allocation's are record_stream'ed";
}

// ---- capture and replay ----

TEST(OneRankGraphs, ACollectiveCapturedInAGraphRunsOnEveryReplay) {
  CUDAKIT_REQUIRE_NCCL();
  Communicator comm = one_rank();
  cudakit::Stream stream(0);
  Tensor in = counting(4096, DType::float32);
  const Tensor out = cuda_tensor(4096, DType::float32);
  ASSERT_EQ(cudaStreamBeginCapture(stream.handle(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  comm.all_reduce(in, out, ReduceOp::sum, stream);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream.handle(), &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (double value : {3.0, 5.0}) {
    in.fill_(value, stream);
    ASSERT_EQ(cudaGraphLaunch(exec, stream.handle()), cudaSuccess);
    stream.synchronize();
    EXPECT_EQ(values_of(out), std::vector<double>(4096, value));
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  comm.check();
}

// ---- the watchdog ----

// Note [Provoking a timeout on one GPU]
// One rank cannot make NCCL itself wait for a peer inside a collective, and two ranks of one
// communicator on one GPU are refused by NCCL ("duplicate GPU"). The watchdog watches the
// operation's completion event, though, whatever holds it back: a kernel that spins for a few
// seconds ahead of the collective on its stream holds it back as a peer that never comes
// would. NCCL runs a one-rank collective on the program's buffers alone, so aborting the
// communicator while it waits is safe; the spin ends by itself. The two-GPU tests provoke
// real hangs (a killed rank, a mismatched collective).
TEST(OneRankWatchdog, AnOperationPastItsTimeoutAbortsTheCommunicatorWithANamedError) {
  CUDAKIT_REQUIRE_NCCL();
  CommunicatorOptions options;
  options.timeout = 300ms;
  options.poll_interval = 20ms;
  Communicator comm = one_rank(options);
  cudakit::Stream stream(0);
  const Tensor t = counting(64, DType::float32);
  comm.all_reduce(t, ReduceOp::sum, stream);  // #1 completes
  stream.synchronize();
  cudakit::testing::launch_spin(stream.handle(), 3'000'000'000ull);
  comm.all_reduce(t, ReduceOp::sum, stream);  // #2 waits behind the spin
  const auto start = std::chrono::steady_clock::now();
  while (!comm.failed() && std::chrono::steady_clock::now() - start < 10s) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(comm.failed()) << "the watchdog did not notice in 10 s";
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2500ms) << "noticed only after the spin";
  try {
    comm.check();
    FAIL() << "check() did not throw";
  } catch (const cudakit::NcclError& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.rank(), 0);
    EXPECT_EQ(e.operation(), "all_reduce#2");
    EXPECT_NE(m.find("timed out"), std::string::npos) << m;
    EXPECT_NE(m.find("operation #2 (all_reduce) has not completed on rank 0"), std::string::npos) << m;
  }
  EXPECT_THROW(comm.all_reduce(t), cudakit::NcclError) << "a failed communicator refuses new work";
  const auto records = comm.flight_recorder().records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].state, cudakit::nccl::FlightState::completed);
  EXPECT_EQ(records[1].state, cudakit::nccl::FlightState::timed_out);
  stream.synchronize();
}

TEST(OneRankWatchdog, AnInitWhoseOtherRanksNeverComeFailsInBoundedTime) {
  CUDAKIT_REQUIRE_NCCL();
  CommunicatorOptions options;
  options.timeout = 1s;
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)Communicator::init_rank(2, 0, cudakit::nccl::unique_id(), 0, options);
    FAIL() << "a two-rank init with one rank succeeded";
  } catch (const cudakit::NcclError& e) {
    EXPECT_EQ(e.rank(), 0);
    EXPECT_NE(std::string(e.what()).find("not every one of the 2 ranks joined"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);
}

TEST(OneRankSplit, SplittingKeepsTheRankOrDropsIt) {
  CUDAKIT_REQUIRE_NCCL();
  Communicator comm = one_rank();
  auto same = comm.split(0, 0);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->world_size(), 1);
  const Tensor t = counting(16, DType::float32);
  same->all_reduce(t);
  EXPECT_EQ(values_of(t)[15], 16.0);
  EXPECT_FALSE(comm.split(-1, 0)) << "a negative color leaves this rank out";
}

// The allocator's segments registered automatically (See Note [Registering the allocator's
// segments]): what exists at creation, what is mapped later, deregistered as it is returned.
TEST(OneRankRegistration, AllocatorSegmentsAreRegisteredAndFollowTheAllocator) {
  CUDAKIT_REQUIRE_NCCL();
  auto& allocator = cudakit::memory::device_allocator(0);
  cudakit::memory::empty_cache();  // what earlier tests left cached, returned
  const Tensor early = counting(1 << 16, DType::float32);
  CommunicatorOptions options;
  options.register_allocator_segments = true;
  Communicator comm = one_rank(options);
  auto registered = [&](const void* p) {
    const auto segments = comm.registered_segments();
    for (const auto& range : allocator.backing(p).ranges) {
      const cudakit::nccl::RegisteredSegment wanted{range.base, range.size};
      if (std::find(segments.begin(), segments.end(), wanted) == segments.end()) return false;
    }
    return true;
  };
  ASSERT_FALSE(comm.registered_segments().empty()) << "the segments that existed at creation are registered";
  EXPECT_TRUE(registered(early.data_ptr()));
  const std::size_t at_creation = comm.registered_segments().size();
  {
    // 256 MiB more than all the cached free memory, so that a new segment (or expandable
    // chunk) is mapped for it.
    const auto stats = allocator.stats();
    const auto cached_free = static_cast<std::int64_t>(stats.reserved_bytes[0].current - stats.allocated_bytes[0].current);
    const std::int64_t kBig = (cached_free + (std::int64_t{256} << 20)) / 4;
    Tensor big = cuda_tensor(kBig, DType::float32);
    big.fill_(7.0);
    EXPECT_GT(comm.registered_segments().size(), at_creation) << "a segment mapped after creation is registered";
    EXPECT_TRUE(registered(big.data_ptr()));
    const Tensor out = cuda_tensor(kBig, DType::float32);
    comm.all_reduce(big, out, ReduceOp::max);
    const std::vector<double> back = values_of(out);
    EXPECT_EQ(back.front(), 7.0);
    EXPECT_EQ(back.back(), 7.0);
    comm.check();
  }
  cudakit::current_stream(0).synchronize();
  const std::size_t before_release = comm.registered_segments().size();
  cudakit::memory::empty_cache();
  EXPECT_LT(comm.registered_segments().size(), before_release) << "a segment returned to the driver is deregistered first";
  EXPECT_TRUE(registered(early.data_ptr())) << "a segment still in use stays registered";
  comm.all_reduce(early);
  EXPECT_EQ(values_of(early)[5], 6.0);
  comm.check();
  EXPECT_FALSE(comm.failed());
}

TEST(OneRankRegistration, ARegisteredBufferStillWorks) {
  CUDAKIT_REQUIRE_NCCL();
  Communicator comm = one_rank();
  const Tensor t = counting(1 << 20, DType::float32);
  auto registration = comm.register_buffer(t.data_ptr(), t.nbytes());
  comm.all_reduce(t);
  EXPECT_EQ(values_of(t)[5], 6.0);
}

}  // namespace
