#pragma once
// @brief The cuBLAS handle cudakit's matmul uses (torch.cuda.current_blas_handle).

#include <cublas_api.h>

namespace cudakit::tensor {

// The calling thread's cuBLAS handle for its current device, set to the thread's current stream
// and to the workspace of that (thread, stream) from the caching allocator (See Note [cuBLAS
// workspaces]): the one the next matmul on this thread uses. Work a program queues with it runs
// on the current stream. Valid until the thread exits; the handle stays cudakit's: do not
// destroy it, and set its stream back if you change it. The first call on a thread creates it.
// @return the handle (cuBLAS's cublasHandle_t), bound to the current stream of the current device
// @throws CudaError without a device.
// @throws CublasError when cuBLAS cannot create the handle or set its stream or workspace.
// @throws OutOfMemoryError when the caching allocator cannot provide the workspace.
[[nodiscard]] cublasHandle_t current_blas_handle();

}  // namespace cudakit::tensor
