// current_blas_handle: the calling thread's handle, on the current stream, the one matmul uses.
#include "cudakit/tensor/blas_handle.hpp"

#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <thread>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/stream_guard.hpp"
#include "support/gpu_test.hpp"

namespace {

cudaStream_t stream_of(cublasHandle_t handle) {
  cudaStream_t stream = nullptr;
  EXPECT_EQ(cublasGetStream(handle, &stream), CUBLAS_STATUS_SUCCESS);
  return stream;
}

TEST(BlasHandleGpu, OneHandlePerThreadSetToTheCurrentStream) {
  CUDAKIT_REQUIRE_GPU();
  const cublasHandle_t handle = cudakit::tensor::current_blas_handle();
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(cudakit::tensor::current_blas_handle(), handle);
  EXPECT_EQ(stream_of(handle), cudakit::current_stream().handle());
  cudakit::Stream side;
  {
    cudakit::StreamGuard guard(side.ref());
    EXPECT_EQ(cudakit::tensor::current_blas_handle(), handle);
    EXPECT_EQ(stream_of(handle), side.ref().handle());
  }
  EXPECT_EQ(cudakit::tensor::current_blas_handle(), handle);
  EXPECT_EQ(stream_of(handle), cudakit::current_stream().handle());
  cublasHandle_t other = nullptr;
  std::thread([&] { other = cudakit::tensor::current_blas_handle(); }).join();
  EXPECT_NE(other, nullptr);
  EXPECT_NE(other, handle);
}

}  // namespace
