#pragma once
// NCCL's GPU tests skip, visibly, without a GPU, with too few GPUs, or without libnccl.

#include "cudakit/nccl/version.hpp"
#include "support/gpu_test.hpp"

#define CUDAKIT_REQUIRE_NCCL_GPUS(n)                                                  \
  do {                                                                                \
    CUDAKIT_REQUIRE_GPUS(n);                                                          \
    if (!cudakit::nccl::library_loaded()) GTEST_SKIP() << "libnccl is not available"; \
  } while (0)
#define CUDAKIT_REQUIRE_NCCL() CUDAKIT_REQUIRE_NCCL_GPUS(1)
