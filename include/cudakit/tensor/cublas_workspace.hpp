#pragma once
// @brief cuBLAS workspaces from cudakit's caching allocator, sized as torch sizes them
// (CUBLAS_WORKSPACE_CONFIG). See Note [cuBLAS workspaces] in src/tensor/cublas_context.cpp.

#include <cstddef>
#include <string_view>

namespace cudakit::tensor {

// Bytes described by a CUBLAS_WORKSPACE_CONFIG value, ":SIZE:COUNT[:SIZE:COUNT...]" with SIZE in
// KiB: the sum of SIZE * COUNT KiB (":4096:8" is 32 MiB).
// @throws InvalidArgumentError naming the text and what is wrong with it.
[[nodiscard]] std::size_t parse_cublas_workspace_config(std::string_view config);

// The workspace each (thread, stream) gets on `device` (-1: current): CUBLAS_WORKSPACE_CONFIG if
// set, otherwise torch's defaults: 32 MiB on compute capability 9.0 and newer, 8 MiB + 128 KiB
// before.
[[nodiscard]] std::size_t cublas_workspace_size(int device = -1);

// Returns the calling thread's eager workspaces to the caching allocator (stream-ordered), and
// the workspaces of captures that ended without a Graph to end them (raw stream captures); the
// next matmul allocates afresh (torch's clearCublasWorkspaces).
void clear_cublas_workspaces();

}  // namespace cudakit::tensor
