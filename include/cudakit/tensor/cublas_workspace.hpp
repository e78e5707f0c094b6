#pragma once
// @brief cuBLAS workspaces from cudakit's caching allocator, sized as torch sizes them
// (CUBLAS_WORKSPACE_CONFIG). See Note [cuBLAS workspaces] in src/tensor/cublas_context.cpp.

#include <cstddef>
#include <string_view>

namespace cudakit::tensor {

// Bytes described by a CUBLAS_WORKSPACE_CONFIG value, ":SIZE:COUNT[:SIZE:COUNT...]" with SIZE in
// KiB: the sum of SIZE * COUNT KiB (":4096:8" is 32 MiB).
// @param config the variable's value, e.g. ":4096:8" or ":4096:2:16:8"
// @return the total in bytes (0 for ":0:0", which leaves cuBLAS its own workspace)
// @throws InvalidArgumentError naming the text and what is wrong with it.
[[nodiscard]] std::size_t parse_cublas_workspace_config(std::string_view config);

// The workspace each (thread, stream) gets on `device` (-1: current): CUBLAS_WORKSPACE_CONFIG if
// set, otherwise torch's defaults: 32 MiB on compute capability 9.0 and newer, 8 MiB + 128 KiB
// before.
// @param device a CUDA ordinal, or -1 for the calling thread's current device
// @return the workspace size in bytes
// @throws InvalidArgumentError when CUBLAS_WORKSPACE_CONFIG is set but malformed, or (the
//   variable unset) for an ordinal that does not exist.
// @throws CudaError without a device (only when the variable is unset).
[[nodiscard]] std::size_t cublas_workspace_size(int device = -1);

// Returns the calling thread's eager workspaces to the caching allocator (stream-ordered), and
// the workspaces of captures that ended without a Graph to end them (raw stream captures); the
// next matmul allocates afresh (torch's clearCublasWorkspaces). The memory goes back stream-
// ordered: later work on each workspace's stream may reuse it at once; the call does not wait
// for the GPU. Workspaces of other threads are not touched.
void clear_cublas_workspaces();

}  // namespace cudakit::tensor
