#include "cudakit/gds/safetensors_index.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/gds/io_error.hpp"
#include "gds/detail/utf8.hpp"

namespace cudakit::gds {
namespace {

using cudakit::detail::concat;
using nlohmann::json;

[[noreturn]] void refuse(const std::string& what) {
  throw InvalidArgumentError("safetensors index", detail::escape_invalid_utf8(what));
}

// A shard names a file beside the index (or below its folder), never one elsewhere.
void check_shard_path(const std::string& tensor, const std::string& shard) {
  const std::filesystem::path p(shard);
  const bool climbs = std::any_of(p.begin(), p.end(), [](const std::filesystem::path& part) { return part == ".."; });
  if (shard.empty() || p.is_absolute() || climbs) {
    refuse(concat("tensor \"", tensor, "\" is mapped to \"", shard,
                  "\", which is not a file in the index's folder"));
  }
}

void add_report(IoReport& total, const IoReport& shard, bool first) {
  if (first) {
    total = shard;
    return;
  }
  total.bytes += shard.bytes;
  total.direct_bytes += shard.direct_bytes;
  total.buffered_bytes += shard.buffered_bytes;
  total.requests += shard.requests;
  total.seconds += shard.seconds;
  total.io_threads = std::max(total.io_threads, shard.io_threads);
}

}  // namespace

SafetensorsIndex parse_safetensors_index(std::string_view text) {
  if (const std::size_t bad = detail::first_invalid_utf8(text); bad != std::string_view::npos) {
    refuse(concat("the index is not valid UTF-8 at byte offset ", bad));
  }
  json document;
  try {
    document = json::parse(text);
  } catch (const json::exception& error) {
    refuse(concat("the index is not JSON: ", error.what()));
  }
  if (!document.is_object()) refuse("the index is not a JSON object");
  SafetensorsIndex index;
  if (const auto metadata = document.find("metadata"); metadata != document.end() && !metadata->is_null()) {
    if (!metadata->is_object()) refuse("\"metadata\" is not an object");
    for (const auto& [key, value] : metadata->items()) {
      index.metadata[key] = value.is_string() ? value.get<std::string>() : value.dump();
    }
  }
  const auto weight_map = document.find("weight_map");
  if (weight_map == document.end() || !weight_map->is_object()) refuse("the index has no \"weight_map\" object");
  std::set<std::string> shards;
  for (const auto& [name, shard] : weight_map->items()) {
    if (!shard.is_string()) refuse(concat("tensor \"", name, "\" is mapped to ", shard.dump(), ", not a file name"));
    const std::string file = shard.get<std::string>();
    check_shard_path(name, file);
    index.weight_map[name] = file;
    shards.insert(file);
  }
  index.shards.assign(shards.begin(), shards.end());
  return index;
}

SafetensorsLoad load_safetensors_index(const std::filesystem::path& index_path, tensor::Device device,
                                       const SafetensorsReadOptions& read, GdsOptions options,
                                       OptionalStream stream) {
  std::ifstream in(index_path, std::ios::binary);
  if (!in) {
    const int error = errno;
    throw IoError(error, "load_safetensors_index",
                  concat("cannot open ", detail::escape_invalid_utf8(index_path.string()), ": ", std::strerror(error)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  SafetensorsIndex index;
  try {
    index = parse_safetensors_index(text.str());
  } catch (const InvalidArgumentError& error) {
    throw InvalidArgumentError("load_safetensors_index",
                               detail::escape_invalid_utf8(concat(index_path.string(), ": ", error.what())));
  }
  // Per-tensor conversions name tensors of any shard: each shard takes the ones it holds.
  SafetensorsLoad out;
  std::map<std::string, std::string> holder;  // tensor -> the shard that holds it
  bool first = true;
  for (const std::string& shard : index.shards) {
    const std::filesystem::path shard_path = index_path.parent_path() / shard;
    SafetensorsReadOptions shard_read = read;
    shard_read.dtypes.clear();
    for (const auto& [name, dtype] : read.dtypes) {
      const auto mapped = index.weight_map.find(name);
      if (mapped != index.weight_map.end() && mapped->second == shard) shard_read.dtypes.emplace(name, dtype);
    }
    SafetensorsLoad part = load_safetensors(shard_path, device, shard_read, options, stream);
    for (auto& [name, t] : part.tensors) {
      if (const auto [it, fresh] = holder.emplace(name, shard); !fresh) {
        throw InvalidArgumentError("load_safetensors_index",
                                   detail::escape_invalid_utf8(concat(index_path.string(), ": tensor \"", name,
                                                                      "\" is in both ", it->second, " and ", shard)));
      }
      out.tensors.emplace(name, std::move(t));
    }
    for (auto& [key, value] : part.metadata) out.metadata.emplace(key, std::move(value));
    out.raw.insert(out.raw.end(), part.raw.begin(), part.raw.end());
    add_report(out.report, part.report, first);
    first = false;
  }
  for (const auto& [name, shard] : index.weight_map) {
    const auto held = holder.find(name);
    if (held == holder.end() || held->second != shard) {
      throw InvalidArgumentError("load_safetensors_index",
                                 detail::escape_invalid_utf8(concat(index_path.string(), ": the weight map puts tensor \"",
                                                                    name, "\" in ", shard, ", which does not hold it")));
    }
  }
  for (const auto& [name, dtype] : read.dtypes) {
    if (!index.weight_map.contains(name)) {
      throw InvalidArgumentError("load_safetensors_index",
                                 detail::escape_invalid_utf8(concat(index_path.string(), ": dtypes names tensor \"",
                                                                    name, "\", which the weight map does not list")));
    }
  }
  for (const auto& [key, value] : index.metadata) out.metadata[key] = value;
  return out;
}

}  // namespace cudakit::gds
