// tunable::fp8_linear on the tensors of a safetensors file: the header parsed as the loader parses
// it, each tensor built on the host from the file's own bytes (small ones: the recogniser reads
// names, dtypes and shapes, and an MX scale's values), then every FP8 layer recognised. Any
// layout, consistent or not, must be recognised or refused with cudakit's error.
#include <map>
#include <string>

#include "cudakit/gds/safetensors.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tunable/fp8_linear.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view bytes) {
    namespace tensor = cudakit::tensor;
    const cudakit::gds::SafetensorsHeader header = cudakit::gds::parse_safetensors_header(bytes, bytes.size());
    std::map<std::string, tensor::Tensor> tensors;
    for (const cudakit::gds::SafetensorsEntry& entry : header.tensors) {
      if (!entry.cudakit_dtype) continue;
      tensor::Shape shape = entry.shape;
      if (*entry.cudakit_dtype == tensor::DType::float4_e2m1fn_x2) {
        if (shape.empty() || shape.back() % 2 != 0) continue;
        shape.back() /= 2;
      }
      if (entry.end - entry.begin > (1u << 16)) continue;  // the header checked the bytes fit
      tensors.emplace(entry.name, tensor::from_host(bytes.data() + header.data_offset + entry.begin, shape,
                                                    *entry.cudakit_dtype));
    }
    for (const std::string& prefix : cudakit::tunable::fp8_linear_prefixes(tensors)) {
      try {
        (void)cudakit::tunable::fp8_linear(tensors, prefix);
      } catch (const cudakit::InvalidArgumentError&) {
        // A refused layout; the next layer is still read.
      }
    }
  });
}
