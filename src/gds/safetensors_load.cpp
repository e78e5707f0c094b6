// load_safetensors: the header read and parsed, every tensor read straight into its place by
// one batched GdsFile load, then the conversions asked for.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/gds/gds_file.hpp"
#include "cudakit/gds/safetensors.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/storage.hpp"
#include "cudakit/tensor/tensor.hpp"
#include "gds/detail/mapped_file.hpp"
#include "gds/detail/utf8.hpp"

namespace cudakit::gds {
namespace {

using cudakit::detail::concat;
constexpr const char* kApi = "load_safetensors";

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& what) {
  throw InvalidArgumentError(kApi, detail::escape_invalid_utf8(concat(path.string(), ": ", what)));
}

// Whether an F4 tensor's values pair up into float4_e2m1fn_x2 bytes along its last dimension.
bool pairs_up(const SafetensorsEntry& entry) {
  return entry.cudakit_dtype != tensor::DType::float4_e2m1fn_x2 ||
         (!entry.shape.empty() && entry.shape.back() % 2 == 0);
}

// Whether `entry` has no cudakit tensor: a dtype cudakit lacks, or F4 values that do not pair.
bool loads_as_bytes(const SafetensorsEntry& entry) { return !entry.cudakit_dtype || !pairs_up(entry); }

// The tensor's shape: the header's, but for F4, whose values pair up in float4_e2m1fn_x2
// elements along the last dimension. See Note [safetensors dtypes].
tensor::Shape tensor_shape(const SafetensorsEntry& entry) {
  tensor::Shape shape = entry.shape;
  if (entry.cudakit_dtype == tensor::DType::float4_e2m1fn_x2) shape.back() /= 2;
  return shape;
}

// The dtype `entry` ends up in after the conversions asked for, if any.
std::optional<tensor::DType> target_dtype(const SafetensorsEntry& entry, const SafetensorsReadOptions& read) {
  if (const auto named = read.dtypes.find(entry.name); named != read.dtypes.end()) return named->second;
  const tensor::DType from = *entry.cudakit_dtype;
  const bool model_float = from == tensor::DType::float16 || from == tensor::DType::bfloat16 ||
                           from == tensor::DType::float32 || from == tensor::DType::float64;
  if (read.dtype && model_float) return read.dtype;
  return std::nullopt;
}

}  // namespace

SafetensorsLoad load_safetensors(const std::filesystem::path& path, tensor::Device device, GdsOptions options,
                                 OptionalStream stream) {
  return load_safetensors(path, device, SafetensorsReadOptions{}, std::move(options), stream);
}

SafetensorsLoad load_safetensors(const std::filesystem::path& path, tensor::Device device,
                                 const SafetensorsReadOptions& read, GdsOptions options, OptionalStream stream) {
  GdsFile file(path, O_RDONLY, options);
  const std::uint64_t size = file.size();
  std::string start(std::min<std::uint64_t>(size, 8), '\0');
  if (!start.empty()) (void)file.load(start.data(), start.size(), 0);
  std::uint64_t length = 0;
  try {
    length = safetensors_header_length(start);
  } catch (const InvalidArgumentError& error) {
    refuse(path, error.what());
  }
  std::string bytes(std::min<std::uint64_t>(size, 8 + length), '\0');
  (void)file.load(bytes.data(), bytes.size(), 0);
  SafetensorsHeader header;
  try {
    header = parse_safetensors_header(bytes, size);
  } catch (const InvalidArgumentError& error) {
    refuse(path, error.what());
  }
  for (const auto& asked : read.dtypes) {
    const std::string& name = asked.first;  // not a structured binding: clang 14 cannot capture one
    const bool present = std::any_of(header.tensors.begin(), header.tensors.end(),
                                     [&](const SafetensorsEntry& e) { return e.name == name; });
    if (!present) refuse(path, concat("dtypes names tensor \"", name, "\", which the file does not hold"));
  }
  // Every check before the first byte moves: a refused file allocates and reads nothing.
  for (const SafetensorsEntry& entry : header.tensors) {
    if (loads_as_bytes(entry)) {
      if (read.raw_unknown_dtypes) continue;
      if (!entry.cudakit_dtype) {
        refuse(path, concat("tensor \"", entry.name, "\" has dtype ", entry.dtype,
                            ", which cudakit's tensor lacks (raw_unknown_dtypes=true loads its bytes as uint8)"));
      }
      refuse(path, concat("tensor \"", entry.name, "\" of dtype F4 has shape ", tensor::shape_string(entry.shape),
                          ", whose last dimension does not pair its values into float4_e2m1fn_x2 bytes "
                          "(raw_unknown_dtypes=true loads its bytes as uint8)"));
    }
    if (const auto to = target_dtype(entry, read); to && !tensor::can_cast(*entry.cudakit_dtype, *to)) {
      refuse(path, concat("tensor \"", entry.name, "\" of dtype ", tensor::dtype_name(*entry.cudakit_dtype),
                          " cannot be converted to ", tensor::dtype_name(*to)));
    }
  }
  SafetensorsLoad out;
  out.metadata = std::move(header.metadata);
  const auto started = std::chrono::steady_clock::now();
  // See Note [Host loads of cached files] in mapped_file.cpp.
  const std::shared_ptr<detail::MappedFile> mapped =
      device.is_cpu() && read.map_cached_host_file && header.data_bytes > 0
          ? detail::MappedFile::map_if_resident(file.descriptor(), size, header.data_offset,
                                                header.data_offset + header.data_bytes)
          : nullptr;
  std::vector<TensorAt> batch;
  std::vector<std::pair<std::string, tensor::DType>> conversions;
  std::size_t mapped_bytes = 0, mapped_tensors = 0;
  for (const SafetensorsEntry& entry : header.tensors) {
    const bool raw = loads_as_bytes(entry);
    const std::size_t bytes = entry.end - entry.begin;
    const tensor::DType dtype = raw ? tensor::DType::uint8 : *entry.cudakit_dtype;
    const tensor::Shape shape = raw ? tensor::Shape{static_cast<std::int64_t>(bytes)} : tensor_shape(entry);
    const std::optional<tensor::DType> to = raw ? std::nullopt : target_dtype(entry, read);
    if (raw) out.raw.push_back(entry);
    if (to && *to != dtype) conversions.emplace_back(entry.name, *to);
    std::byte* at = mapped ? mapped->at(header.data_offset + entry.begin) : nullptr;
    tensor::Tensor t;
    if (at && bytes > 0 &&
        reinterpret_cast<std::uintptr_t>(at) % tensor::element_size(dtype) == 0) {
      // The tensor is the cached pages (a conversion below reads them); the mapping lives as long
      // as any tensor of it.
      t = tensor::Tensor(tensor::Storage::wrap(at, bytes, device, [mapped] {}), dtype, shape,
                         tensor::contiguous_strides(shape));
      mapped_bytes += bytes;
      ++mapped_tensors;
    } else {
      t = tensor::empty(shape, {.dtype = dtype, .device = device}, stream);
      batch.push_back({t, header.data_offset + entry.begin});
    }
    out.tensors.emplace(entry.name, std::move(t));
  }
  out.report = file.load_batch(batch, stream);
  if (mapped_tensors > 0) {
    // The batch's report, with the mapped tensors counted in: the path of the larger part.
    if (mapped_bytes >= out.report.bytes) out.report.path = IoPath::mapped;
    out.report.bytes += mapped_bytes;
    out.report.requests += mapped_tensors;
    out.report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const std::string note = concat(mapped_tensors, " tensor(s), ", mapped_bytes,
                                    " bytes, mapped from the page cache (no copy)");
    out.report.note = out.report.note.empty() ? note : concat(note, "; ", out.report.note);
  }
  for (const auto& [name, dtype] : conversions) {
    tensor::Tensor& t = out.tensors.at(name);
    t = t.to(dtype, stream);
  }
  return out;
}

}  // namespace cudakit::gds
