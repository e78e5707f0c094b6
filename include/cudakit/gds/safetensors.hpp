#pragma once
// safetensors checkpoints: the header parsed (an 8-byte little-endian length, then a JSON object
// of tensors with dtype, shape and data_offsets), each tensor loaded straight to its place in
// device memory by one batched GdsFile load; and the writer of the same format.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudakit/core/optional_stream.hpp"
#include "cudakit/gds/gds_options.hpp"
#include "cudakit/gds/io_report.hpp"
#include "cudakit/gds/save_file.hpp"
#include "cudakit/tensor/device.hpp"
#include "cudakit/tensor/dtype.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::gds {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;                // as the file spells it: "F32", "BF16", "I64", ...
  std::size_t element_size = 0;     // bytes per element of that dtype
  std::optional<tensor::DType> cudakit_dtype;  // none for dtypes cudakit's tensor lacks (F8_E4M3, ...)
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;          // data_offsets, relative to the data section
  std::uint64_t end = 0;
};

struct SafetensorsHeader {
  std::uint64_t header_bytes = 0;   // the JSON's length (the file's first 8 bytes)
  std::uint64_t data_offset = 0;    // where the data section starts: 8 + header_bytes
  std::uint64_t data_bytes = 0;     // the largest data_offsets end
  std::vector<SafetensorsEntry> tensors;  // in the order of their data
  std::map<std::string, std::string> metadata;  // "__metadata__"
};

// The header's length from the file's first 8 bytes.
// @throws InvalidArgumentError when fewer than 8 bytes are given or the length exceeds
// safetensors' limit of 100,000,000 bytes.
[[nodiscard]] std::uint64_t safetensors_header_length(std::string_view first_bytes);

// Parses a file's first 8 + header_length bytes (`bytes` may hold more). `file_size`, where
// known, is checked against the data section.
// @throws InvalidArgumentError naming what is wrong and where: a length that is too large or
// larger than the bytes given, JSON that does not parse or is not an object, a tensor without a
// string dtype, an unknown dtype, a negative or non-integer dimension, data_offsets that are not
// two ordered integers, a byte count that disagrees with shape and dtype (or overflows), two
// tensors whose bytes overlap, a tensor that ends past the end of the file, metadata that is not
// an object of strings.
[[nodiscard]] SafetensorsHeader parse_safetensors_header(std::string_view bytes,
                                                         std::optional<std::uint64_t> file_size = {});

struct SafetensorsLoad {
  std::map<std::string, tensor::Tensor> tensors;
  std::map<std::string, std::string> metadata;
  IoReport report;  // the tensors' batched load (the header read is not counted)
};

// Loads every tensor of a safetensors file onto `device` (cpu or cuda), each read straight into
// its tensor. @throws IoError / InvalidArgumentError from the header and the load, naming the
// path; InvalidArgumentError for a dtype cudakit's tensor lacks.
[[nodiscard]] SafetensorsLoad load_safetensors(const std::filesystem::path& path, tensor::Device device,
                                               GdsOptions options = GdsOptions::from_environment(),
                                               OptionalStream stream = {});

// Writes `tensors` (contiguous, any device) as a safetensors file, in name order.
IoReport save_safetensors(const std::filesystem::path& path,
                          const std::map<std::string, tensor::Tensor>& tensors,
                          const std::map<std::string, std::string>& metadata = {},
                          SaveOptions save = {}, GdsOptions options = GdsOptions::from_environment(),
                          OptionalStream stream = {});

// "F32" for float32, ...: the safetensors name of a cudakit dtype.
[[nodiscard]] const char* safetensors_dtype_name(tensor::DType dtype) noexcept;

}  // namespace cudakit::gds
