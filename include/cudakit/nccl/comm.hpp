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
// Stream-ordered on the current stream of each device (one NCCL broadcast per device, in one
// group; the source takes part as the root even when it is not listed); returns before the
// copies complete.
// @param tensor a contiguous CUDA tensor
// @param devices the CUDA ordinals to copy to, each once (an empty list gives an empty result)
// @return one tensor per entry of `devices`, in their order
// @throws InvalidArgumentError for a host or strided tensor, a dtype NCCL has no type for, or a
//   negative or repeated device.
// @throws NcclError when NCCL fails.
// @throws StateError when NCCL is not available.
[[nodiscard]] std::vector<tensor::Tensor> broadcast(const tensor::Tensor& tensor, std::span<const int> devices);
// broadcast of each tensor, one after the other, ordered as broadcast() orders one.
// @param tensors contiguous CUDA tensors
// @param devices the CUDA ordinals to copy to, each once
// @return result[i] holds tensors[i] on every device, in the order of `devices`
// @throws InvalidArgumentError as broadcast().
// @throws NcclError as broadcast().
[[nodiscard]] std::vector<std::vector<tensor::Tensor>> broadcast_coalesced(std::span<const tensor::Tensor> tensors,
                                                                           std::span<const int> devices);
// The sum of `inputs` (one per distinct device, one dtype and size) on `destination` (-1: the
// first input's device). Stream-ordered on the current stream of each input's device (one NCCL
// reduce per device, in one group); a destination that holds no input gets the sum copied from
// the first input's device, on its current stream. Returns before the work completes.
// @param inputs contiguous CUDA tensors, one per device, of one dtype and element count
// @param destination the CUDA ordinal the sum is to be on (-1: the first input's device)
// @return a new tensor on `destination` with the elementwise sum
// @throws InvalidArgumentError naming what differs, for an empty list, a host or strided tensor,
//   two inputs on one device, or a dtype NCCL has no type for.
// @throws NcclError when NCCL fails.
// @throws StateError when NCCL is not available.
[[nodiscard]] tensor::Tensor reduce_add(std::span<const tensor::Tensor> inputs, int destination = -1);
// reduce_add of each list: inputs[d][i] is tensor i on device d. Ordered as reduce_add() orders
// one.
// @param inputs per device, the same number of tensors
// @param destination the CUDA ordinal the sums are to be on (-1: the first device's)
// @return the sum of tensor i over the devices, for each i (none for an empty `inputs`)
// @throws InvalidArgumentError when the devices hold different numbers of tensors, and as
//   reduce_add().
// @throws NcclError as reduce_add().
[[nodiscard]] std::vector<tensor::Tensor> reduce_add_coalesced(std::span<const std::vector<tensor::Tensor>> inputs,
                                                               int destination = -1);
// `tensor` cut along dimension 0 into one piece per device (sizes `chunk_sizes`, or as even as
// possible), each copied to its device. Each copy is ordered as Tensor::to orders it: on the
// current stream of its destination device.
// @param tensor the tensor to cut (on any device), at least 1-dimensional
// @param devices the CUDA ordinals, one per piece
// @param chunk_sizes the rows of each piece (one per device, adding up to tensor.size(0)); by
//   default pieces of ceil(rows / devices), the last ones smaller or empty (torch.chunk's rule)
// @return piece i on devices[i]
// @throws InvalidArgumentError when the sizes do not add up, for an empty device list, a
//   0-dimensional or undefined tensor, or a negative chunk size.
[[nodiscard]] std::vector<tensor::Tensor> scatter(const tensor::Tensor& tensor, std::span<const int> devices,
                                                  std::optional<std::vector<std::int64_t>> chunk_sizes = std::nullopt);
// `tensors` joined along dimension 0 on `destination` (-1: the first tensor's device). Each
// piece is copied as Tensor::copy_ copies, on the current stream of `destination`.
// @param tensors tensors of one dtype whose sizes agree beyond dimension 0 (on any devices)
// @param destination the CUDA ordinal of the result (-1: the first tensor's, or cuda:0 when it
//   is on the host)
// @return a new tensor on `destination` holding the tensors in order
// @throws InvalidArgumentError when their other sizes or dtypes differ, for an empty list, or
//   for 0-dimensional or undefined tensors.
[[nodiscard]] tensor::Tensor gather(std::span<const tensor::Tensor> tensors, int destination = -1);

}  // namespace cudakit::nccl::comm
