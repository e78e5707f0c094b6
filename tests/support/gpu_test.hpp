#pragma once
// GPU-tier tests skip, visibly, where no CUDA device exists: GTEST_SKIP is counted as skipped by
// both gtest and CTest, never as passed.

#include <gtest/gtest.h>

#include "cudakit/core/device.hpp"

#define CUDAKIT_REQUIRE_GPU()                                              \
  do {                                                                     \
    if (!::cudakit::is_available()) GTEST_SKIP() << "no CUDA device";      \
  } while (0)

#define CUDAKIT_REQUIRE_GPUS(n)                                                              \
  do {                                                                                       \
    if (::cudakit::device_count() < (n))                                                     \
      GTEST_SKIP() << "needs " << (n) << " CUDA devices, found " << ::cudakit::device_count(); \
  } while (0)
