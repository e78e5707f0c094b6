// GPU tier: what the library's own operations report to the trace hooks — kernel launches with
// their names and byte ranges, copies, allocations, frees, record_stream, event and stream
// operations — in the order they are queued.

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/random/distributions.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "cudakit/tensor/factories.hpp"
#include "support/gpu_test.hpp"

namespace {

using cudakit::MemoryAccess;
using cudakit::TraceEvent;
using cudakit::TraceEventKind;
namespace ten = cudakit::tensor;

struct Seen {
  TraceEvent event;
  std::string name;
  std::vector<MemoryAccess> accesses;
};

class Recorder {
 public:
  Recorder() {
    id_ = cudakit::attach_trace_listener([this](const TraceEvent& e) {
      std::lock_guard lock(mutex_);
      seen_.push_back({e, e.name ? e.name : "", {e.accesses.begin(), e.accesses.end()}});
    });
  }
  ~Recorder() { cudakit::detach_trace_listener(id_); }
  std::vector<Seen> of(TraceEventKind kind) {
    std::lock_guard lock(mutex_);
    std::vector<Seen> out;
    for (const auto& s : seen_) if (s.event.kind == kind) out.push_back(s);
    return out;
  }

 private:
  std::uint64_t id_;
  std::mutex mutex_;
  std::vector<Seen> seen_;
};

bool covers(const MemoryAccess& a, const void* p, std::size_t bytes) {
  const auto* begin = static_cast<const char*>(a.begin);
  const auto* q = static_cast<const char*>(p);
  return begin <= q && q + bytes <= begin + a.bytes;
}

TEST(TraceHooksGpu, TensorAndRandomKernelsReportNamesAndRanges) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream stream;
  const ten::TensorOptions on_gpu{ten::DType::float32, ten::Device{ten::Device::Type::cuda, 0}};
  ten::Tensor a = ten::empty({1000}, on_gpu, stream);
  ten::Tensor b = ten::empty({1000}, on_gpu, stream);
  Recorder recorder;
  cudakit::random::uniform_(a, 0, 1, nullptr, stream);
  cudakit::random::uniform_(b, 0, 1, nullptr, stream);
  ten::Tensor c = ten::add(a, b, stream);
  stream.synchronize();

  const auto launches = recorder.of(TraceEventKind::kernel_launch);
  ASSERT_GE(launches.size(), 3u);
  const Seen& add = launches.back();
  EXPECT_EQ(add.name, "tensor.map");
  EXPECT_EQ(add.event.stream, stream.handle());
  EXPECT_TRUE(add.event.accesses_declared);
  ASSERT_EQ(add.accesses.size(), 3u);
  EXPECT_EQ(add.accesses[0].mode, MemoryAccess::Mode::write);
  EXPECT_TRUE(covers(add.accesses[0], c.data_ptr(), 4000));
  EXPECT_EQ(add.accesses[0].bytes, 4000u);
  EXPECT_TRUE(covers(add.accesses[1], a.data_ptr(), 4000));
  EXPECT_TRUE(covers(add.accesses[2], b.data_ptr(), 4000));
  bool drew_a = false;
  for (const auto& l : launches) {
    if (l.name.rfind("random.draw", 0) != 0) continue;
    ASSERT_FALSE(l.accesses.empty()) << l.name;
    EXPECT_EQ(l.accesses[0].mode, MemoryAccess::Mode::write);
    drew_a = drew_a || covers(l.accesses[0], a.data_ptr(), 4);
  }
  EXPECT_TRUE(drew_a) << "no random.draw launch wrote a";
  // c's block was allocated for this stream while the recorder listened.
  bool allocated_c = false;
  for (const auto& s : recorder.of(TraceEventKind::allocation)) {
    allocated_c = allocated_c || (s.event.pointer == c.data_ptr() && s.event.bytes == 4000 &&
                                  s.event.stream == stream.handle());
  }
  EXPECT_TRUE(allocated_c);
}

TEST(TraceHooksGpu, StridedOperandsReportTheirWholeSpan) {
  CUDAKIT_REQUIRE_GPU();
  const ten::TensorOptions on_gpu{ten::DType::float32, ten::Device{ten::Device::Type::cuda, 0}};
  ten::Tensor m = ten::zeros({64, 32}, on_gpu);
  ten::Tensor column_view = m.t();  // 32 x 64, strides (1, 32): not contiguous
  Recorder recorder;
  ten::Tensor out = ten::neg(column_view);
  cudakit::synchronize();
  const auto launches = recorder.of(TraceEventKind::kernel_launch);
  ASSERT_FALSE(launches.empty());
  const Seen& neg = launches.back();
  ASSERT_EQ(neg.accesses.size(), 2u);
  EXPECT_EQ(neg.accesses[1].begin, m.data_ptr());
  EXPECT_EQ(neg.accesses[1].bytes, 64u * 32u * 4u);
}

TEST(TraceHooksGpu, CopiesAllocatorAndStreamOperations) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream side;
  Recorder recorder;
  void* block = cudakit::memory::allocate(1 << 20, side);
  cudakit::memory::record_stream(block, cudakit::current_stream());
  const ten::TensorOptions on_gpu{ten::DType::float32, ten::Device{ten::Device::Type::cuda, 0}};
  ten::Tensor host = ten::zeros({256});
  ten::Tensor device = host.to(on_gpu.device, side);
  cudakit::Event done;
  done.record(side);
  cudakit::current_stream().wait_event(done);
  cudakit::current_stream().wait_stream(side);
  done.synchronize();
  side.synchronize();
  cudakit::memory::deallocate(block);

  const auto allocations = recorder.of(TraceEventKind::allocation);
  ASSERT_FALSE(allocations.empty());
  EXPECT_EQ(allocations.front().event.pointer, block);
  EXPECT_EQ(allocations.front().event.bytes, std::size_t{1} << 20);
  const auto record = recorder.of(TraceEventKind::record_stream);
  ASSERT_EQ(record.size(), 1u);
  EXPECT_EQ(record[0].event.pointer, block);
  const auto frees = recorder.of(TraceEventKind::free);
  ASSERT_FALSE(frees.empty());
  EXPECT_EQ(frees.back().event.pointer, block);
  EXPECT_GE(frees.back().event.bytes, std::size_t{1} << 20);
  const auto copies = recorder.of(TraceEventKind::memcpy);
  ASSERT_FALSE(copies.empty());
  EXPECT_EQ(copies.back().event.copy_kind, cudaMemcpyHostToDevice);
  EXPECT_EQ(copies.back().event.bytes, 1024u);
  EXPECT_EQ(copies.back().event.pointer, device.data_ptr());
  EXPECT_GE(recorder.of(TraceEventKind::event_create).size(), 2u);  // done, wait_stream's marker
  EXPECT_GE(recorder.of(TraceEventKind::event_record).size(), 2u);
  EXPECT_GE(recorder.of(TraceEventKind::event_wait).size(), 2u);
  ASSERT_EQ(recorder.of(TraceEventKind::stream_wait).size(), 1u);
  EXPECT_EQ(recorder.of(TraceEventKind::stream_wait)[0].event.other_stream, side.handle());
  EXPECT_EQ(recorder.of(TraceEventKind::event_synchronize).size(), 1u);
  EXPECT_EQ(recorder.of(TraceEventKind::stream_synchronize).size(), 1u);
}

TEST(TraceHooksGpu, AListenerThatThrowsStopsTheLaunchBeforeItIsQueued) {
  CUDAKIT_REQUIRE_GPU();
  const ten::TensorOptions on_gpu{ten::DType::float32, ten::Device{ten::Device::Type::cuda, 0}};
  ten::Tensor a = ten::zeros({16}, on_gpu);
  const auto id = cudakit::attach_trace_listener([](const TraceEvent& e) {
    if (e.kind == TraceEventKind::kernel_launch) throw std::runtime_error("refused");
  });
  EXPECT_THROW((void)ten::add(a, 1.0), std::runtime_error);
  cudakit::detach_trace_listener(id);
  cudakit::synchronize();
  EXPECT_EQ(a.to(ten::Device::cpu()).to_vector<float>(), std::vector<float>(16, 0.0f));
}

TEST(MovedFromOwner, StreamThrowsOnEveryUseAndNeverBecomesTheNullStream) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream a;
  const cudaStream_t handle = a.handle();
  cudakit::Stream b(std::move(a));
  EXPECT_EQ(b.handle(), handle);
  for (const auto& use : std::vector<std::function<void()>>{
           [&] { (void)a.handle(); }, [&] { (void)a.device(); }, [&] { a.synchronize(); },
           [&] { (void)a.query(); }, [&] { (void)a.id(); }, [&] { (void)a.ref(); },
           [&] { (void)cudakit::memory::allocate(16, a); }, [&] { b.wait_stream(a); }}) {
    try {
      use();
      ADD_FAILURE() << "a moved-from Stream was used without an error";
    } catch (const cudakit::StateError& e) {
      EXPECT_NE(std::string(e.what()).find("this Stream was moved from"), std::string::npos)
          << e.what();
    }
  }
  a = cudakit::Stream();
  EXPECT_NO_THROW(a.synchronize());
}

}  // namespace
