#include "cudakit/gds/safetensors.hpp"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/outside_input.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/gds/gds_file.hpp"
#include "cudakit/tensor/factories.hpp"
#include "gds/detail/utf8.hpp"

namespace cudakit::gds {
namespace {

using cudakit::detail::concat;
using nlohmann::json;

constexpr const char* kApi = "safetensors";
// safetensors' own reader refuses headers above 100 MB: a larger length is a corrupt file, and
// allocating it would be the failure.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

// Note [safetensors dtypes]
// The dtypes safetensors 0.8 writes (its Dtype enum, in its order), with their bits and the
// cudakit dtype each loads as; safetensors.torch maps them the same way. F4 is NVFP4: the
// header's shape counts values, two per byte, and the tensor is float4_e2m1fn_x2 with the last
// dimension halved (as safetensors.torch views it). The F6 formats and the FNUZ FP8 formats
// have no cudakit dtype: a file holding one is refused, naming it, unless the caller asks for
// such tensors' raw bytes (SafetensorsReadOptions::raw_unknown_dtypes).
struct DTypeInfo {
  const char* name;
  int bits;
  std::optional<tensor::DType> dtype;
};

constexpr DTypeInfo kDTypes[] = {
    {"BOOL", 8, tensor::DType::bool_},         {"F4", 4, tensor::DType::float4_e2m1fn_x2},
    {"F6_E2M3", 6, std::nullopt},               {"F6_E3M2", 6, std::nullopt},
    {"U8", 8, tensor::DType::uint8},           {"I8", 8, tensor::DType::int8},
    {"F8_E5M2", 8, tensor::DType::float8_e5m2}, {"F8_E4M3", 8, tensor::DType::float8_e4m3fn},
    {"F8_E8M0", 8, tensor::DType::float8_e8m0fnu}, {"F8_E4M3FNUZ", 8, std::nullopt},
    {"F8_E5M2FNUZ", 8, std::nullopt},           {"I16", 16, tensor::DType::int16},
    {"U16", 16, tensor::DType::uint16},        {"F16", 16, tensor::DType::float16},
    {"BF16", 16, tensor::DType::bfloat16},     {"I32", 32, tensor::DType::int32},
    {"U32", 32, tensor::DType::uint32},        {"F32", 32, tensor::DType::float32},
    {"C64", 64, tensor::DType::complex64},     {"F64", 64, tensor::DType::float64},
    {"I64", 64, tensor::DType::int64},         {"U64", 64, tensor::DType::uint64},
};

// Note [Quoting file bytes]
// Errors quote names and bytes from the file; Python turns an error's text into a str, which
// fails on invalid UTF-8 and hides both the file and the reason. Every message is therefore made
// valid UTF-8 here, bytes outside well-formed sequences written as \xNN; and a header that is
// not UTF-8 at all is refused first, by offset.
[[noreturn]] void refuse(const std::string& what) {
  throw InvalidArgumentError(kApi, detail::escape_invalid_utf8(what));
}

std::string hex_byte(unsigned char b) {
  static constexpr char kHex[] = "0123456789abcdef";
  return {kHex[b >> 4], kHex[b & 0xf]};
}

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
  out.bits = info->bits;
  out.element_size = static_cast<std::size_t>(info->bits % 8 == 0 ? info->bits / 8 : 0);
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
  const auto bits = static_cast<std::uint64_t>(out.bits);
  overflow = overflow || numel > std::numeric_limits<std::uint64_t>::max() / bits;
  if (!overflow && numel * bits % 8 != 0) {
    refuse(concat(where, " of shape ", shape->dump(), " and dtype ", out.dtype, " holds ", numel * bits,
                  " bits, which is not a whole number of bytes"));
  }
  if (overflow || numel * bits / 8 != out.end - out.begin) {
    refuse(concat(where, " of shape ", shape->dump(), " and dtype ", out.dtype, " needs ",
                  overflow ? std::string("more than 2^64") : concat(numel * bits / 8), " bytes, but its data_offsets [",
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
  const std::string_view text = bytes.substr(8, header.header_bytes);
  if (const std::size_t bad = detail::first_invalid_utf8(text); bad != std::string_view::npos) {
    // The bytes around it, the invalid ones escaped by refuse(). See Note [Quoting file bytes].
    const std::size_t from = bad < 24 ? 0 : bad - 24;
    refuse(concat("the header is not valid UTF-8: byte 0x", hex_byte(static_cast<unsigned char>(text[bad])),
                  " at file offset ", 8 + bad, ", in \"", text.substr(from, bad - from + 8), "\""));
  }
  const json document = cudakit::detail::parse_outside_json<json>(text, "the header", kApi);
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

IoReport save_safetensors(const std::filesystem::path& path, const std::map<std::string, tensor::Tensor>& tensors,
                          const std::map<std::string, std::string>& metadata, SaveOptions save, GdsOptions options,
                          OptionalStream stream) {
  json document = json::object();
  if (!metadata.empty()) document["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    t.check_defined("save_safetensors");
    if (t.dtype() == tensor::DType::complex128) {
      throw InvalidArgumentError("save_safetensors", concat("tensor \"", name, "\" is complex128, which safetensors "
                                                            "has no dtype for (convert it to complex64)"));
    }
    json shape = json::array();
    for (const std::int64_t size : t.sizes()) shape.push_back(size);
    // F4 counts values, two per byte of a float4_e2m1fn_x2 element. See Note [safetensors dtypes].
    if (t.dtype() == tensor::DType::float4_e2m1fn_x2) {
      if (t.dim() == 0) shape.push_back(2);
      else shape.back() = 2 * t.sizes().back();
    }
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
