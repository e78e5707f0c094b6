#include "cudakit/gds/safetensors.hpp"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/outside_input.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/gds/gds_file.hpp"
#include "cudakit/tensor/factories.hpp"

namespace cudakit::gds {
namespace {

using cudakit::detail::concat;
using nlohmann::json;

constexpr const char* kApi = "safetensors";
// safetensors' own reader refuses headers above 100 MB: a larger length is a corrupt file, and
// allocating it would be the failure.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeInfo {
  const char* name;
  std::size_t size;
  std::optional<tensor::DType> dtype;
};

constexpr DTypeInfo kDTypes[] = {
    {"F64", 8, tensor::DType::float64}, {"F32", 4, tensor::DType::float32},
    {"F16", 2, tensor::DType::float16}, {"BF16", 2, tensor::DType::bfloat16},
    {"I64", 8, tensor::DType::int64},   {"I32", 4, tensor::DType::int32},
    {"U8", 1, tensor::DType::uint8},    {"BOOL", 1, tensor::DType::bool_},
    {"I16", 2, std::nullopt},           {"I8", 1, std::nullopt},
    {"U16", 2, std::nullopt},           {"U32", 4, std::nullopt},
    {"U64", 8, std::nullopt},           {"F8_E4M3", 1, std::nullopt},
    {"F8_E5M2", 1, std::nullopt},
};

[[noreturn]] void refuse(const std::string& what) { throw InvalidArgumentError(kApi, what); }

std::uint64_t unsigned_field(const json& value, const std::string& where) {
  if (!value.is_number_unsigned()) refuse(concat(where, " is not a non-negative integer: ", value.dump()));
  return value.get<std::uint64_t>();
}

SafetensorsEntry parse_entry(const std::string& name, const json& entry) {
  const std::string where = concat("tensor \"", name, "\"");
  if (!entry.is_object()) refuse(concat(where, " is not an object"));
  SafetensorsEntry out;
  out.name = name;
  const auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) refuse(concat(where, " has no string \"dtype\""));
  out.dtype = dtype->get<std::string>();
  const auto* info = std::find_if(std::begin(kDTypes), std::end(kDTypes),
                                  [&](const DTypeInfo& d) { return out.dtype == d.name; });
  if (info == std::end(kDTypes)) refuse(concat(where, " has unknown dtype \"", out.dtype, "\""));
  out.element_size = info->size;
  out.cudakit_dtype = info->dtype;
  const auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) refuse(concat(where, " has no \"shape\" array"));
  std::uint64_t numel = 1;
  bool overflow = false;
  for (const json& dim : *shape) {
    const std::uint64_t size = unsigned_field(dim, concat(where, "'s dimension"));
    if (size > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) refuse(concat(where, "'s dimension ", size, " is too large"));
    out.shape.push_back(static_cast<std::int64_t>(size));
    if (size != 0 && numel > std::numeric_limits<std::uint64_t>::max() / size) overflow = true;
    numel *= size;
  }
  const auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2) {
    refuse(concat(where, " has no \"data_offsets\" pair"));
  }
  out.begin = unsigned_field((*offsets)[0], concat(where, "'s data_offsets[0]"));
  out.end = unsigned_field((*offsets)[1], concat(where, "'s data_offsets[1]"));
  if (out.end < out.begin) refuse(concat(where, "'s data_offsets [", out.begin, ", ", out.end, "] end before they begin"));
  if (overflow || numel > std::numeric_limits<std::uint64_t>::max() / out.element_size ||
      numel * out.element_size != out.end - out.begin) {
    refuse(concat(where, " of shape ", shape->dump(), " and dtype ", out.dtype, " needs ",
                  overflow ? std::string("more than 2^64") : concat(numel * out.element_size), " bytes, but its data_offsets [",
                  out.begin, ", ", out.end, "] hold ", out.end - out.begin));
  }
  return out;
}

}  // namespace

const char* safetensors_dtype_name(tensor::DType dtype) noexcept {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == dtype) return info.name;
  }
  return "?";
}

std::uint64_t safetensors_header_length(std::string_view first_bytes) {
  if (first_bytes.size() < 8) refuse(concat("a safetensors file starts with an 8-byte header length; only ", first_bytes.size(), " bytes"));
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(first_bytes[static_cast<std::size_t>(i)]);
  if (length > kMaxHeaderBytes) refuse(concat("header length ", length, " exceeds safetensors' limit of ", kMaxHeaderBytes, " bytes"));
  return length;
}

SafetensorsHeader parse_safetensors_header(std::string_view bytes, std::optional<std::uint64_t> file_size) {
  SafetensorsHeader header;
  header.header_bytes = safetensors_header_length(bytes);
  header.data_offset = 8 + header.header_bytes;
  const std::uint64_t available = file_size ? std::min<std::uint64_t>(*file_size, bytes.size()) : bytes.size();
  if (header.data_offset > available) {
    refuse(concat("header of ", header.header_bytes, " bytes, but only ", available < 8 ? 0 : available - 8, " follow the length"));
  }
  const json document = cudakit::detail::parse_outside_json<json>(bytes.substr(8, header.header_bytes),
                                                                  "the header", kApi);
  if (!document.is_object()) refuse("the header is not a JSON object");
  for (const auto& [name, value] : document.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) refuse("\"__metadata__\" is not an object");
      for (const auto& [key, text] : value.items()) {
        if (!text.is_string()) refuse(concat("\"__metadata__\" value of \"", key, "\" is not a string"));
        header.metadata[key] = text.get<std::string>();
      }
      continue;
    }
    header.tensors.push_back(parse_entry(name, value));
  }
  std::sort(header.tensors.begin(), header.tensors.end(),
            [](const SafetensorsEntry& a, const SafetensorsEntry& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  for (std::size_t i = 0; i < header.tensors.size(); ++i) {
    const SafetensorsEntry& entry = header.tensors[i];
    if (i > 0 && entry.begin < header.tensors[i - 1].end) {
      refuse(concat("tensors \"", header.tensors[i - 1].name, "\" [", header.tensors[i - 1].begin, ", ",
                    header.tensors[i - 1].end, ") and \"", entry.name, "\" [", entry.begin, ", ", entry.end, ") overlap"));
    }
    header.data_bytes = std::max(header.data_bytes, entry.end);
  }
  if (file_size && header.data_bytes > *file_size - header.data_offset) {
    const auto last = std::max_element(header.tensors.begin(), header.tensors.end(),
                                       [](const auto& a, const auto& b) { return a.end < b.end; });
    refuse(concat("tensor \"", last->name, "\" ends at byte ", header.data_offset + last->end,
                  ", past the end of the file (", *file_size, " bytes)"));
  }
  return header;
}

SafetensorsLoad load_safetensors(const std::filesystem::path& path, tensor::Device device, GdsOptions options,
                                 OptionalStream stream) {
  GdsFile file(path, O_RDONLY, options);
  const std::uint64_t size = file.size();
  std::string start(std::min<std::uint64_t>(size, 8), '\0');
  if (!start.empty()) (void)file.load(start.data(), start.size(), 0);
  std::uint64_t length = 0;
  try {
    length = safetensors_header_length(start);
  } catch (const InvalidArgumentError& error) {
    throw InvalidArgumentError("load_safetensors", concat(path.string(), ": ", error.what()));
  }
  std::string bytes(std::min<std::uint64_t>(size, 8 + length), '\0');
  (void)file.load(bytes.data(), bytes.size(), 0);
  SafetensorsHeader header;
  try {
    header = parse_safetensors_header(bytes, size);
  } catch (const InvalidArgumentError& error) {
    throw InvalidArgumentError("load_safetensors", concat(path.string(), ": ", error.what()));
  }
  SafetensorsLoad out;
  out.metadata = std::move(header.metadata);
  std::vector<TensorAt> batch;
  for (const SafetensorsEntry& entry : header.tensors) {
    if (!entry.cudakit_dtype) {
      throw InvalidArgumentError("load_safetensors", concat(path.string(), ": tensor \"", entry.name,
                                                            "\" has dtype ", entry.dtype, ", which cudakit's tensor lacks"));
    }
    tensor::Tensor t = tensor::empty(entry.shape, {.dtype = *entry.cudakit_dtype, .device = device}, stream);
    batch.push_back({t, header.data_offset + entry.begin});
    out.tensors.emplace(entry.name, std::move(t));
  }
  out.report = file.load_batch(batch, stream);
  return out;
}

IoReport save_safetensors(const std::filesystem::path& path, const std::map<std::string, tensor::Tensor>& tensors,
                          const std::map<std::string, std::string>& metadata, SaveOptions save, GdsOptions options,
                          OptionalStream stream) {
  json document = json::object();
  if (!metadata.empty()) document["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    t.check_defined("save_safetensors");
    json shape = json::array();
    for (const std::int64_t size : t.sizes()) shape.push_back(size);
    document[name] = {{"dtype", safetensors_dtype_name(t.dtype())}, {"shape", shape},
                      {"data_offsets", {offset, offset + t.nbytes()}}};
    offset += t.nbytes();
  }
  std::string text = document.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');  // the data section 8-byte aligned, as safetensors writes it
  std::string head(8, '\0');
  for (int i = 0; i < 8; ++i) head[static_cast<std::size_t>(i)] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  head += text;
  std::vector<TensorAt> batch;
  const tensor::Tensor header_bytes = tensor::from_host(head.data(), {static_cast<std::int64_t>(head.size())}, tensor::DType::uint8);
  batch.push_back({header_bytes, 0});
  offset = head.size();
  for (const auto& [name, t] : tensors) {
    batch.push_back({t, offset});
    offset += t.nbytes();
  }
  return save_file(path, std::span<const TensorAt>(batch), save, options, stream);
}

}  // namespace cudakit::gds
