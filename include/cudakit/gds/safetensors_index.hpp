#pragma once
// @brief Sharded safetensors checkpoints: model.safetensors.index.json ({"metadata": {...},
// "weight_map": {tensor name: shard file}}) and its shards, loaded as one checkpoint.

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cudakit/gds/safetensors.hpp"

namespace cudakit::gds {

// A parsed model.safetensors.index.json.
struct SafetensorsIndex {
  std::map<std::string, std::string> metadata;    // strings as they are, other values as JSON text
  std::map<std::string, std::string> weight_map;  // tensor name -> shard file
  std::vector<std::string> shards;                // the distinct shard files, sorted
};

// Parses an index file's text. Reads untrusted input: every field is checked.
// @param text the file's contents
// @return the metadata, the weight map and the distinct shards
// @throws InvalidArgumentError naming what is wrong: text that is not UTF-8 (by offset) or not
// a JSON object, no "weight_map" object, a shard that is not a string, or a shard path that is
// empty, absolute or climbs out of the index's folder with "..".
[[nodiscard]] SafetensorsIndex parse_safetensors_index(std::string_view text);

// Loads every shard of the index at `index_path` (shard paths relative to its folder) onto
// `device`, as one checkpoint: the tensors of all shards, the shards' metadata under the
// index's, and one IoReport summing the shards' loads (its path the first shard's).
// @param index_path the index file
// @param device where the tensors go
// @param read dtype conversions and raw loading, applied to every shard
// @param options how GdsFile moves the bytes
// @param stream the stream of the allocations, copies and conversions (as load_safetensors)
// @return the checkpoint's tensors, metadata and summed report
// @throws InvalidArgumentError naming the index or the shard: a tensor the weight map puts in
// a shard that does not hold it, a tensor two shards hold, and everything load_safetensors
// refuses.
// @throws IoError for the index or a shard that cannot be read.
[[nodiscard]] SafetensorsLoad load_safetensors_index(const std::filesystem::path& index_path,
                                                     tensor::Device device,
                                                     const SafetensorsReadOptions& read = {},
                                                     GdsOptions options = GdsOptions::from_environment(),
                                                     OptionalStream stream = {});

}  // namespace cudakit::gds
