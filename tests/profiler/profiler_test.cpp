// What the profiler does without a GPU: it refuses to start where CUPTI is unavailable, and
// ranges outside a profiler record nothing.

#include <gtest/gtest.h>

#include "cudakit/core/cupti_hub.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/profiler/profiler.hpp"
#include "cudakit/profiler/record_function.hpp"

namespace cudakit::profiler {
namespace {

TEST(ProfilerHost, DoesNotStartWithoutCupti) {
  if (CuptiHub::instance().available()) GTEST_SKIP() << "CUPTI is available here";
  EXPECT_THROW(Profiler{}, StateError);
}

TEST(ProfilerHost, RecordFunctionWithoutProfilerRecordsNothing) {
  auto range = record_function("idle");  // must not touch CUPTI or throw
  SUCCEED();
}

}  // namespace
}  // namespace cudakit::profiler
