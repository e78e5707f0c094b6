#include "cudakit/nccl/comm.hpp"

#include <algorithm>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/nccl/communicator.hpp"
#include "cudakit/nccl/group.hpp"
#include "cudakit/nccl/validation.hpp"
#include "cudakit/tensor/factories.hpp"

namespace cudakit::nccl::comm {

using cudakit::detail::concat;
using tensor::Device;
using tensor::Tensor;

namespace {

void check_cuda_tensor(const char* api, const Tensor& t) {
  t.check_defined(api);
  if (!t.device().is_cuda()) throw InvalidArgumentError(api, concat("the tensor ", t.description(), " is not on a CUDA device"));
  if (!t.is_contiguous()) throw InvalidArgumentError(api, concat("the tensor ", t.description(), " is not contiguous"));
}

std::size_t index_of(std::span<const int> devices, int device) {
  return static_cast<std::size_t>(std::find(devices.begin(), devices.end(), device) - devices.begin());
}

}  // namespace

std::vector<Tensor> broadcast(const Tensor& t, std::span<const int> devices) {
  const char* api = "nccl::comm::broadcast";
  check_cuda_tensor(api, t);
  const int source = t.device().index;
  std::vector<int> all(devices.begin(), devices.end());
  // The source takes part as the root even where it is not one of the destinations.
  if (index_of(all, source) == all.size()) all.push_back(source);
  std::vector<Communicator> comms = Communicator::for_devices(all);
  const int root = static_cast<int>(index_of(all, source));
  std::vector<Tensor> outputs(all.size());
  for (std::size_t i = 0; i < all.size(); ++i)
    outputs[i] = static_cast<int>(i) == root
                     ? t
                     : tensor::empty(t.sizes(), {.dtype = t.dtype(), .device = Device::cuda(all[i])});
  {
    Group group;
    for (std::size_t i = 0; i < all.size(); ++i) comms[i].broadcast(t, outputs[i], root);
    group.end();
  }
  outputs.resize(devices.size());
  return outputs;
}

std::vector<std::vector<Tensor>> broadcast_coalesced(std::span<const Tensor> tensors, std::span<const int> devices) {
  std::vector<std::vector<Tensor>> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(broadcast(t, devices));
  return out;
}

Tensor reduce_add(std::span<const Tensor> inputs, int destination) {
  const char* api = "nccl::comm::reduce_add";
  std::vector<Buffer> buffers;
  for (const Tensor& t : inputs) {
    check_cuda_tensor(api, t);
    buffers.push_back(Buffer::of(t, api));
  }
  if (const auto problem = tensor_list_problem(buffers)) throw InvalidArgumentError(api, *problem);
  std::vector<int> devices;
  for (const Tensor& t : inputs) devices.push_back(t.device().index);
  if (destination < 0) destination = devices.front();
  const std::size_t at = index_of(devices, destination);
  const int root = at < devices.size() ? static_cast<int>(at) : 0;
  std::vector<Communicator> comms = Communicator::for_devices(devices);
  const Tensor result = tensor::empty(inputs[0].sizes(), {.dtype = inputs[0].dtype(), .device = Device::cuda(devices[root])});
  {
    Group group;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      comms[i].reduce(inputs[i], static_cast<int>(i) == root ? result : inputs[i], root, ReduceOp::sum);
    group.end();
  }
  return devices[root] == destination ? result : result.to(Device::cuda(destination));
}

std::vector<Tensor> reduce_add_coalesced(std::span<const std::vector<Tensor>> inputs, int destination) {
  const char* api = "nccl::comm::reduce_add_coalesced";
  if (inputs.empty()) return {};
  for (std::size_t d = 1; d < inputs.size(); ++d)
    if (inputs[d].size() != inputs[0].size())
      throw InvalidArgumentError(api, concat("device ", d, " has ", inputs[d].size(), " tensors, device 0 has ", inputs[0].size()));
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < inputs[0].size(); ++i) {
    std::vector<Tensor> column;
    for (const auto& per_device : inputs) column.push_back(per_device[i]);
    out.push_back(reduce_add(column, destination));
  }
  return out;
}

std::vector<Tensor> scatter(const Tensor& t, std::span<const int> devices, std::optional<std::vector<std::int64_t>> chunk_sizes) {
  const char* api = "nccl::comm::scatter";
  t.check_defined(api);
  if (devices.empty()) throw InvalidArgumentError(api, "the device list is empty");
  if (t.dim() == 0) throw InvalidArgumentError(api, "a 0-dimensional tensor cannot be cut along dimension 0");
  const std::int64_t rows = t.size(0);
  std::vector<std::int64_t> sizes;
  if (chunk_sizes) {
    sizes = *chunk_sizes;
    if (sizes.size() != devices.size())
      throw InvalidArgumentError(api, concat(sizes.size(), " chunk sizes for ", devices.size(), " devices"));
    std::int64_t total = 0;
    for (std::int64_t s : sizes) {
      if (s < 0) throw InvalidArgumentError(api, concat("chunk size ", s, " is negative"));
      total += s;
    }
    if (total != rows) throw InvalidArgumentError(api, concat("the chunk sizes add up to ", total, ", the tensor has ", rows, " rows"));
  } else {
    // torch.chunk's rule: pieces of ceil(rows / n), the last ones smaller or empty.
    const auto n = static_cast<std::int64_t>(devices.size());
    const std::int64_t piece = (rows + n - 1) / n;
    for (std::int64_t i = 0; i < n; ++i) sizes.push_back(std::clamp<std::int64_t>(rows - i * piece, 0, piece));
  }
  std::vector<Tensor> out;
  std::int64_t start = 0;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    out.push_back(t.slice(0, start, start + sizes[i]).to(Device::cuda(devices[i])));
    start += sizes[i];
  }
  return out;
}

Tensor gather(std::span<const Tensor> tensors, int destination) {
  const char* api = "nccl::comm::gather";
  if (tensors.empty()) throw InvalidArgumentError(api, "the list is empty");
  const Tensor& first = tensors[0];
  first.check_defined(api);
  if (first.dim() == 0) throw InvalidArgumentError(api, "0-dimensional tensors cannot be joined along dimension 0");
  std::int64_t rows = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    t.check_defined(api);
    if (t.dtype() != first.dtype() || t.dim() != first.dim() ||
        !std::equal(t.sizes().begin() + 1, t.sizes().end(), first.sizes().begin() + 1))
      throw InvalidArgumentError(api, concat("tensor ", i, " is ", t.description(), ", tensor 0 ", first.description(),
                                             ": they differ beyond dimension 0"));
    rows += t.size(0);
  }
  if (destination < 0) destination = first.device().is_cuda() ? first.device().index : 0;
  tensor::Shape shape = first.sizes();
  shape[0] = rows;
  Tensor out = tensor::empty(shape, {.dtype = first.dtype(), .device = Device::cuda(destination)});
  std::int64_t start = 0;
  for (const Tensor& t : tensors) {
    out.slice(0, start, start + t.size(0)).copy_(t);
    start += t.size(0);
  }
  return out;
}

}  // namespace cudakit::nccl::comm
