#include "cudakit/tensor/device.hpp"

#include "cudakit/core/device.hpp"

namespace cudakit::tensor {

Device Device::cuda(int index) {
  return Device{Type::cuda, cudakit::detail::resolve_device(index, "Device::cuda")};
}

std::string Device::str() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index);
}

}  // namespace cudakit::tensor
