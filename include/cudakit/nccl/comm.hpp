#pragma once
// @brief torch.cuda.comm: copies and reductions of tensors across the devices of one process —
// broadcast and reduce_add through NCCL (a cached communicator per device list), scatter and
// gather through peer copies. Each is ordered on the current stream of every device it uses.

#include <optional>
#include <span>
#include <vector>

#include "cudakit/tensor/tensor.hpp"

namespace cudakit::nccl::comm {

// `tensor` on each of `devices` (the entry for the tensor's own device is the tensor itself).
// @throws InvalidArgumentError for a host or strided tensor, an empty or repeating device list.
[[nodiscard]] std::vector<tensor::Tensor> broadcast(const tensor::Tensor& tensor, std::span<const int> devices);
// broadcast of each tensor: result[i] holds tensors[i] on every device.
[[nodiscard]] std::vector<std::vector<tensor::Tensor>> broadcast_coalesced(std::span<const tensor::Tensor> tensors,
                                                                           std::span<const int> devices);
// The sum of `inputs` (one per distinct device, one dtype and size) on `destination` (-1: the
// first input's device). @throws InvalidArgumentError naming what differs.
[[nodiscard]] tensor::Tensor reduce_add(std::span<const tensor::Tensor> inputs, int destination = -1);
// reduce_add of each list: inputs[d][i] is tensor i on device d.
[[nodiscard]] std::vector<tensor::Tensor> reduce_add_coalesced(std::span<const std::vector<tensor::Tensor>> inputs,
                                                               int destination = -1);
// `tensor` cut along dimension 0 into one piece per device (sizes `chunk_sizes`, or as even as
// possible), each copied to its device. @throws InvalidArgumentError when the sizes do not add up.
[[nodiscard]] std::vector<tensor::Tensor> scatter(const tensor::Tensor& tensor, std::span<const int> devices,
                                                  std::optional<std::vector<std::int64_t>> chunk_sizes = std::nullopt);
// `tensors` joined along dimension 0 on `destination` (-1: the first tensor's device). @throws InvalidArgumentError when their other sizes or dtypes differ.
[[nodiscard]] tensor::Tensor gather(std::span<const tensor::Tensor> tensors, int destination = -1);

}  // namespace cudakit::nccl::comm
