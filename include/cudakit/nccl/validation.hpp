#pragma once
// The checks every collective makes before anything is launched: bad input is refused with the
// values in the message (InvalidArgumentError), never handed to NCCL.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cudakit/nccl/buffer.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::nccl {

// `buffer` is contiguous CUDA memory on `device`. `what` names it in the message ("input").
void check_buffer(const char* api, const char* what, const Buffer& buffer, int device);
// `output` has `input`'s dtype and `expected_count` elements (the op's size rule, named by
// `rule`, e.g. "world_size x input").
void check_output(const char* api, const Buffer& input, const Buffer& output, std::size_t expected_count,
                  const char* rule);
// `input`'s count is a multiple of `world_size` (reduce_scatter, all_to_all).
void check_divisible(const char* api, const Buffer& input, int world_size);
// `rank` (a root or a peer, named by `what`) lies in 0..world_size-1.
void check_rank(const char* api, const char* what, int rank, int world_size);

// Why `buffers` cannot take part in one single-process collective (torch.cuda.nccl's
// is_available): each must be contiguous CUDA memory, on distinct devices, of one dtype and
// count; nullopt when they can.
[[nodiscard]] std::optional<std::string> tensor_list_problem(std::span<const Buffer> buffers);
// torch.cuda.nccl.is_available(tensors).
[[nodiscard]] bool is_available(std::span<const tensor::Tensor> tensors);

}  // namespace cudakit::nccl
