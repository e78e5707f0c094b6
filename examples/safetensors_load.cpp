// Loads a safetensors checkpoint straight into device memory and says how: which path each byte
// took (cuFile, cudakit's O_DIRECT engine, the page cache), how fast, and each tensor's place.
//
//   example_safetensors_load MODEL.safetensors [--device N]
//
// With no GPU it loads into host memory, by the same engine.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "cudakit/core/device.hpp"
#include "cudakit/gds/safetensors.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.safetensors [--device N]\n", argv[0]);
    return 2;
  }
  int device = 0;
  if (argc == 4 && std::string(argv[2]) == "--device") device = std::atoi(argv[3]);
  try {
    const auto where = cudakit::is_available() ? cudakit::tensor::Device::cuda(device) : cudakit::tensor::Device::cpu();
    const auto checkpoint = cudakit::gds::load_safetensors(argv[1], where);
    for (const auto& [name, tensor] : checkpoint.tensors) {
      std::printf("%-48s %s\n", name.c_str(), tensor.description().c_str());
    }
    for (const auto& [key, value] : checkpoint.metadata) std::printf("metadata %s = %s\n", key.c_str(), value.c_str());
    std::printf("%s\n", checkpoint.report.to_string().c_str());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return 0;
}
