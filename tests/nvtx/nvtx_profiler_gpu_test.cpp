// NVTX ranges on the host timeline of cudakit's own profiler (through the trace hooks), and
// torch.cuda.profiler's start/stop (cudaProfilerStart/Stop) on a real device.

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "cudakit/core/cupti_hub.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/nvtx/ranges.hpp"
#include "cudakit/nvtx/scoped_range.hpp"
#include "cudakit/profiler/cuda_profiler_api.hpp"
#include "cudakit/profiler/profiler.hpp"
#include "support/gpu_test.hpp"
#include "support/kernels.hpp"

namespace {

namespace nvtx = cudakit::nvtx;

TEST(NvtxProfilerGpu, RangesAppearOnTheProfilersHostTimeline) {
  CUDAKIT_REQUIRE_GPU();
  if (!cudakit::CuptiHub::instance().available()) FAIL() << cudakit::CuptiHub::instance().reason();
  nvtx::range_push("before the profiler");  // its pop finds nothing open: dropped
  cudakit::profiler::Profiler prof;
  nvtx::range_pop();
  {
    nvtx::ScopedRange outer("nvtx.outer");
    static const nvtx::RegisteredString kInner("nvtx.inner");
    nvtx::ScopedRange inner(kInner);
    cudakit::testing::launch_empty(nullptr);
  }
  const nvtx::RangeId id = nvtx::range_start("nvtx.started");
  nvtx::range_end(id);
  prof.stop();
  const auto& ranges = prof.events().ranges;
  const auto find = [&](const std::string& name) {
    return std::find_if(ranges.begin(), ranges.end(), [&](const auto& r) { return r.name == name; });
  };
  const auto outer = find("nvtx.outer"), inner = find("nvtx.inner"), started = find("nvtx.started");
  ASSERT_NE(outer, ranges.end());
  ASSERT_NE(inner, ranges.end());
  ASSERT_NE(started, ranges.end());
  EXPECT_EQ(find("before the profiler"), ranges.end());
  EXPECT_LE(outer->start_ns, inner->start_ns);
  EXPECT_LE(inner->end_ns, outer->end_ns);
  EXPECT_LT(inner->start_ns, inner->end_ns);
  EXPECT_LE(outer->end_ns, started->start_ns);
  // The profiler's listener is gone once it stopped.
  EXPECT_FALSE(cudakit::trace_hooks_active());
}

TEST(CudaProfilerApiGpu, StartStopAndScope) {
  CUDAKIT_REQUIRE_GPU();
  EXPECT_NO_THROW(cudakit::profiler::start());
  cudakit::testing::launch_empty(nullptr);
  EXPECT_NO_THROW(cudakit::profiler::stop());
  {
    cudakit::profiler::ProfileScope scope;
    cudakit::testing::launch_empty(nullptr);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
