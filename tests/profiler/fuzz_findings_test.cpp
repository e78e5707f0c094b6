// Inputs the fuzz targets (fuzz/) found to break the profiler's readers, each of which must now
// be refused with an InvalidArgumentError that says what is wrong.
#include <gtest/gtest.h>

#include <string>

#include "cudakit/core/error.hpp"
#include "support/expect_refused.hpp"
#include "cudakit/graphs/kernel_annotations.hpp"
#include "cudakit/profiler/trace_merge.hpp"

namespace cudakit::profiler {
namespace {

using cudakit::testing::expect_refused;

// A number too large for a double is nlohmann's out_of_range, not its parse_error, and escaped
// both readers.
TEST(ProfilerFuzzFindings, NumbersNoDoubleHoldsAreRefused) {
  expect_refused([] { (void)graphs::kernel_annotations_from_json(R"({"1": [{"scale": 884901128849018e9018}]})"); },
                 "annotations: not valid JSON: number overflow parsing '884901128849018e9018'");
  expect_refused([] { (void)merge_trace_annotations(R"({"traceEvents": [{"ts": -1e400}]})", {}); },
                 "trace: not valid JSON: number overflow parsing '-1e400'");
}

}  // namespace
}  // namespace cudakit::profiler
