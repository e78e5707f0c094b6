#include "cudakit/core/error.hpp"

#include <cuda.h>
#include <gtest/gtest.h>

#include <string>

namespace {

using cudakit::CudaError;
using cudakit::Error;
using cudakit::OutOfMemoryError;

TEST(Error, CheckMacroNamesTheApiAndTheCallAndKeepsTheLocationOutOfTheMessage) {
  try {
    CUDAKIT_CHECK_CUDA(cudaErrorInvalidValue);
    FAIL() << "no throw";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.cuda_status(), cudaErrorInvalidValue);
    EXPECT_EQ(e.api(), "cudaErrorInvalidValue");
    EXPECT_FALSE(e.is_driver_error());
    EXPECT_NE(std::string(e.location().file_name()).find("error_test.cpp"), std::string::npos);
    const std::string what = e.what();
    EXPECT_NE(what.find("cudaErrorInvalidValue"), std::string::npos) << what;
    // The location is for debugging cudakit, not for the user reading the message.
    EXPECT_EQ(what.find("error_test.cpp"), std::string::npos) << what;
  }
}

TEST(Error, ApiNameIsTakenFromTheCallText) {
  EXPECT_EQ(cudakit::detail::api_name_from_call("cudaMalloc(&p, 16)"), "cudaMalloc");
  EXPECT_EQ(cudakit::detail::api_name_from_call("::cudaFree(p)"), "cudaFree");
  EXPECT_EQ(cudakit::detail::api_name_from_call("api.cuMemMap(a, b)"), "cuMemMap");
  EXPECT_EQ(cudakit::detail::api_name_from_call("table->cuMemCreate (x)"), "cuMemCreate");
}

TEST(Error, EveryErrorIsExactlyOneStdException) {
  // See Note [Error hierarchy]: catch (std::exception&) must catch all of them.
  auto caught_as_std = [](auto&& thrower) {
    try {
      thrower();
    } catch (const std::exception& e) {
      return std::string(e.what());
    } catch (...) {
      return std::string("<not a std::exception>");
    }
    return std::string("<no throw>");
  };
  EXPECT_NE(caught_as_std([] { throw OutOfMemoryError("alloc", "asked 1 GiB", 1 << 30); })
                .find("asked 1 GiB"),
            std::string::npos);
  EXPECT_NE(caught_as_std([] { throw CudaError(cudaErrorNotReady, "x"); }).find("x: "),
            std::string::npos);
  EXPECT_NE(caught_as_std([] { throw cudakit::InvalidArgumentError("f", "bad n=3"); })
                .find("bad n=3"),
            std::string::npos);
}

TEST(Error, OutOfMemoryIsBadAllocAndCudakitError) {
  try {
    throw OutOfMemoryError("DeviceAllocator::allocate", "requested 2.00 GiB", 2ull << 30);
  } catch (const std::bad_alloc& e) {
    const auto* as_error = dynamic_cast<const Error*>(&e);
    ASSERT_NE(as_error, nullptr);
    EXPECT_EQ(as_error->status(), static_cast<int>(cudaErrorMemoryAllocation));
    EXPECT_EQ(as_error->api(), "DeviceAllocator::allocate");
    EXPECT_NE(std::string(e.what()).find("out of memory: requested 2.00 GiB"), std::string::npos);
  }
}

TEST(Error, MemoryAllocationStatusBecomesOutOfMemoryError) {
  EXPECT_THROW(CUDAKIT_CHECK_CUDA(cudaErrorMemoryAllocation), OutOfMemoryError);
}

TEST(Error, DriverErrorsCarryTheirResult) {
  try {
    CUDAKIT_CHECK_DRIVER(CUDA_ERROR_INVALID_VALUE);
    FAIL();
  } catch (const CudaError& e) {
    EXPECT_TRUE(e.is_driver_error());
    EXPECT_EQ(e.status(), static_cast<int>(CUDA_ERROR_INVALID_VALUE));
    EXPECT_NE(std::string(e.what()).find("CUresult 1"), std::string::npos) << e.what();
  }
}

TEST(Error, WarnNeverThrows) {
  testing::internal::CaptureStderr();
  CUDAKIT_WARN_CUDA(cudaErrorInvalidValue);
  CUDAKIT_WARN_CUDA(cudaErrorCudartUnloading);  // silent: the runtime is going away
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("cudaErrorInvalidValue"), std::string::npos);
  EXPECT_EQ(err.find("cudaErrorCudartUnloading"), std::string::npos);
}

}  // namespace
