#pragma once
// The GPU tests' fixture for TunableOp: enabled and tuning, no results file unless a test sets
// one, 500 ms a shape, no results before or after; the options restored after the test.

#include <gtest/gtest.h>

#include "cudakit/core/device.hpp"
#include "cudakit/tunable/tunable.hpp"
#include "support/gpu_test.hpp"

namespace cudakit::testing {

class TuningGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CUDAKIT_REQUIRE_GPU();
    saved_ = tunable::options();
    tunable::TuningOptions o = saved_;
    o.enabled = true;
    o.tuning = true;
    o.filename = "";  // no file unless a test sets one
    o.max_shape_tuning_ms = 500;
    tunable::set_options(o);
    tunable::clear_results();
  }
  void TearDown() override {
    if (is_available()) {
      tunable::clear_results();
      tunable::set_options(saved_);
    }
  }
  tunable::TuningOptions saved_;
};

}  // namespace cudakit::testing
