#pragma once
// @brief safetensors checkpoints: the header parsed (an 8-byte little-endian length, then a JSON object
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

// One tensor of a safetensors header, as the file describes it.
struct SafetensorsEntry {
  std::string name;  // the tensor's name (the header's key)
  std::string dtype;                // as the file spells it: "F32", "BF16", "F8_E4M3", ...
  std::size_t element_size = 0;     // bytes per element of that dtype; 0 for F4 and F6_* (see bits)
  int bits = 0;                     // bits per element: 4 (F4), 6 (F6_*), 8, 16, 32 or 64
  // The tensor's dtype in cudakit; none for F6_E2M3, F6_E3M2, F8_E4M3FNUZ and F8_E5M2FNUZ.
  // See Note [safetensors dtypes].
  std::optional<tensor::DType> cudakit_dtype;
  std::vector<std::int64_t> shape;  // as the header has it: elements (F4: values, two per byte)
  std::uint64_t begin = 0;          // data_offsets, relative to the data section
  std::uint64_t end = 0;  // one past the last byte, relative to the data section
};

// A parsed safetensors header: where the data is, each tensor's entry and the metadata.
struct SafetensorsHeader {
  std::uint64_t header_bytes = 0;   // the JSON's length (the file's first 8 bytes)
  std::uint64_t data_offset = 0;    // where the data section starts: 8 + header_bytes
  std::uint64_t data_bytes = 0;     // the largest data_offsets end
  std::vector<SafetensorsEntry> tensors;  // in the order of their data
  std::map<std::string, std::string> metadata;  // "__metadata__"
};

// The header's length from the file's first 8 bytes.
// @param first_bytes the file's start: at least 8 bytes (more are ignored)
// @return the JSON header's length in bytes (little-endian uint64)
// @throws InvalidArgumentError when fewer than 8 bytes are given or the length exceeds
// safetensors' limit of 100,000,000 bytes.
[[nodiscard]] std::uint64_t safetensors_header_length(std::string_view first_bytes);

// Parses a file's first 8 + header_length bytes (`bytes` may hold more). `file_size`, where
// known, is checked against the data section. Reads untrusted input: every field is checked.
// @param bytes the file's first 8 + header_length bytes, or more
// @param file_size the file's size, when known
// @return the header, its tensors in the order of their data
// @throws InvalidArgumentError naming what is wrong and where: a length that is too large or
// larger than the bytes given, JSON that does not parse or is not an object, a tensor without a
// string dtype, an unknown dtype, a negative or non-integer dimension, data_offsets that are not
// two ordered integers, a byte count that disagrees with shape and dtype (or overflows), two
// tensors whose bytes overlap, a tensor that ends past the end of the file, metadata that is not
// an object of strings.
[[nodiscard]] SafetensorsHeader parse_safetensors_header(std::string_view bytes,
                                                         std::optional<std::uint64_t> file_size = {});

// What load_safetensors returns: the tensors by name, the file's metadata and the load's report.
struct SafetensorsLoad {
  std::map<std::string, tensor::Tensor> tensors;  // every tensor, by name
  std::map<std::string, std::string> metadata;  // the header's "__metadata__" (empty if none)
  IoReport report;  // the tensors' batched load (the header read is not counted)
  // With raw_unknown_dtypes: the header entries of the tensors loaded as their raw bytes.
  std::vector<SafetensorsEntry> raw;
};

// How load_safetensors converts what it reads.
struct SafetensorsReadOptions {
  // Every float16, bfloat16, float32 and float64 tensor is converted to this dtype on load (the
  // model's dtype); FP8, integer, bool and complex tensors keep theirs, as FP8 weights mean
  // something only with their scales.
  std::optional<tensor::DType> dtype;
  // Per tensor, by name: converts that tensor (any dtype that converts), before `dtype` applies.
  std::map<std::string, tensor::DType> dtypes;
  // A tensor whose dtype cudakit lacks (F6_*, the FNUZ FP8 formats) loads as its bytes: a 1-D
  // uint8 tensor, its entry in SafetensorsLoad::raw. Without it, such a file is refused.
  bool raw_unknown_dtypes = false;
  // A host load of a file whose tensor bytes the page cache holds (as far as 256 pages spread over
  // them tell) maps the file (private,
  // copy-on-write) instead of copying it, as safetensors' loader does: those tensors are the
  // cached pages (a conversion reads them), and the report's path is IoPath::mapped. Tensors whose
  // bytes are not aligned to their element size are still read. While such tensors live, the
  // file must not be truncated (cudakit's saves replace it instead; another program's truncation
  // makes reading them fault). See Note [Host loads of cached files].
  bool map_cached_host_file = true;
};

// Loads every tensor of a safetensors file onto `device` (cpu or cuda), each read straight into
// its tensor (a converted one is read, then converted on `stream`). Every check runs before the
// first tensor is allocated: a refused file allocates and reads nothing. The tensors are
// allocated for `stream` and the file's bytes are in them when the call returns; conversions
// (SafetensorsReadOptions) are queued on `stream` and may still run.
// @param path the .safetensors file
// @param device where the tensors go
// @param options how GdsFile moves the bytes
// @param stream the stream of the allocations, copies and conversions (default: the current
//   stream of `device`)
// @return the tensors, the metadata and the load's report
// @throws IoError when the file cannot be opened or read.
// @throws InvalidArgumentError naming the path, for a header that does not parse, and naming the
//   tensor and its dtype for a dtype cudakit's tensor lacks (unless raw_unknown_dtypes) or a
//   conversion that is not defined.
// @throws OutOfMemoryError when the tensors cannot be allocated.
[[nodiscard]] SafetensorsLoad load_safetensors(const std::filesystem::path& path, tensor::Device device,
                                               GdsOptions options = GdsOptions::from_environment(),
                                               OptionalStream stream = {});
// load_safetensors with dtype conversions and raw loading of unknown dtypes (`read`).
// @param path the .safetensors file
// @param device where the tensors go
// @param read the conversions and whether unknown dtypes load as bytes
// @param options how GdsFile moves the bytes
// @param stream the stream of the allocations, copies and conversions
// @return the tensors (converted as `read` asks), the metadata, the report and the raw entries
// @throws InvalidArgumentError as the overload above, and for a name in read.dtypes that the file
//   does not hold.
// @throws IoError when the file cannot be opened or read.
[[nodiscard]] SafetensorsLoad load_safetensors(const std::filesystem::path& path, tensor::Device device,
                                               const SafetensorsReadOptions& read,
                                               GdsOptions options = GdsOptions::from_environment(),
                                               OptionalStream stream = {});

// Writes `tensors` (contiguous, any device) as a safetensors file, in name order, through
// save_file. Device tensors are copied on `stream` after the work already queued there; the call
// returns once the file is written (and synced as `save` asks).
// @param path the file written (replaced)
// @param tensors the tensors by name, each contiguous
// @param metadata the "__metadata__" strings (none written when empty)
// @param save atomic replacement and fsync
// @param options how GdsFile moves the bytes
// @param stream the copies' stream for device tensors (default: their device's current stream)
// @return the save's report
// @throws InvalidArgumentError for complex128, which safetensors has no dtype for, or a tensor
//   that is not contiguous.
// @throws StateError for an undefined tensor.
// @throws IoError for a write, sync or rename that failed.
IoReport save_safetensors(const std::filesystem::path& path,
                          const std::map<std::string, tensor::Tensor>& tensors,
                          const std::map<std::string, std::string>& metadata = {},
                          SaveOptions save = {}, GdsOptions options = GdsOptions::from_environment(),
                          OptionalStream stream = {});

// "F32" for float32, "F8_E4M3" for float8_e4m3fn, ...: the safetensors name of a cudakit dtype;
// "?" for complex128, which safetensors lacks.
// @param dtype a cudakit dtype
// @return the name (a static string)
[[nodiscard]] const char* safetensors_dtype_name(tensor::DType dtype) noexcept;

}  // namespace cudakit::gds
