#include <cudakit/core/device.hpp>
#include <cudakit/core/error.hpp>
#include <cudakit/version.hpp>

#include <cstdio>

int main() {
  // Works with or without a GPU: the count is 0 on a machine without one.
  std::printf("cudakit %s sees %d device(s)\n", CUDAKIT_VERSION_STRING, cudakit::device_count());
  try {
    cudakit::set_device(1 << 20);
  } catch (const cudakit::InvalidArgumentError&) {
    return 0;
  } catch (const cudakit::CudaError&) {
    return cudakit::device_count() == 0 ? 0 : 1;
  }
  return 1;
}
