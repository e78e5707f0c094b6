#include "cudakit/graphs/kernel_annotations.hpp"

#include <charconv>
#include <limits>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/outside_input.hpp"
#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/graphs/detail/annotation_json.hpp"

namespace cudakit::graphs {
namespace {

// Parses the JSON form; every message names the text's origin (a path, or "annotations" for
// text passed in) and the key and list index at fault.
class AnnotationParser {
 public:
  AnnotationParser(const char* api, std::string_view source) : api_(api), source_(source) {}

  KernelAnnotations parse(std::string_view json) const {
    const nlohmann::json root = cudakit::detail::parse_outside_json<nlohmann::json>(json, source_, api_);
    if (!root.is_object())
      malformed("", cudakit::detail::concat("top level is a ", root.type_name(),
                                            ", expected an object keyed by node id"));
    KernelAnnotations out;
    for (const auto& [key, list] : root.items()) {
      const std::string where = cudakit::detail::concat("key \"", key, "\"");
      const std::uint64_t node = parse_node_id(key, where);
      if (!list.is_array())
        malformed(where, cudakit::detail::concat("value is a ", list.type_name(),
                                                 ", expected a list of annotation objects"));
      std::vector<Annotation>& annotations = out[node];
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string item = cudakit::detail::concat(where, "[", i, "]");
        if (!list[i].is_object())
          malformed(item, cudakit::detail::concat("is a ", list[i].type_name(),
                                                  ", expected an object"));
        Annotation annotation;
        for (const auto& [field, value] : list[i].items())
          annotation.emplace(field, parse_value(value, cudakit::detail::concat(item, ".", field)));
        annotations.push_back(std::move(annotation));
      }
    }
    return out;
  }

 private:
  [[noreturn]] void malformed(std::string_view where, std::string_view what) const {
    throw InvalidArgumentError(api_, cudakit::detail::concat(source_, ": ", where,
                                                             where.empty() ? "" : ": ", what));
  }

  std::uint64_t parse_node_id(const std::string& key, std::string_view where) const {
    std::uint64_t id = 0;
    const char* end = key.data() + key.size();
    const auto [ptr, ec] = std::from_chars(key.data(), end, id);
    if (key.empty() || ec != std::errc() || ptr != end)
      malformed(where, "is not a graph node id (a decimal unsigned 64-bit integer)");
    return id;
  }

  AnnotationValue parse_value(const nlohmann::json& value, std::string_view where) const {
    switch (value.type()) {
      case nlohmann::json::value_t::string: return value.get<std::string>();
      case nlohmann::json::value_t::number_integer: return value.get<std::int64_t>();
      case nlohmann::json::value_t::number_unsigned: {
        const auto u = value.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          malformed(where, "integer does not fit in int64");
        return static_cast<std::int64_t>(u);
      }
      case nlohmann::json::value_t::number_float: return value.get<double>();
      default:
        malformed(where, cudakit::detail::concat("is a ", value.type_name(),
                                                 "; annotation values are strings or numbers"));
    }
  }

  const char* api_;
  std::string_view source_;
};

}  // namespace

std::string kernel_annotations_to_json(const KernelAnnotations& annotations) {
  nlohmann::json root = nlohmann::json::object();
  for (const auto& [node, list] : annotations) {
    nlohmann::json& out = root[std::to_string(node)] = nlohmann::json::array();
    for (const Annotation& annotation : list) {
      nlohmann::json object = nlohmann::json::object();
      for (const auto& [key, value] : annotation) object[key] = detail::annotation_value_json(value);
      out.push_back(std::move(object));
    }
  }
  return root.dump();
}

KernelAnnotations kernel_annotations_from_json(std::string_view json) {
  return AnnotationParser("kernel_annotations_from_json", "annotations").parse(json);
}

void save_kernel_annotations(const std::string& path, const KernelAnnotations& annotations) {
  cudakit::detail::write_text_file(path, kernel_annotations_to_json(annotations), "save_kernel_annotations");
}

KernelAnnotations load_kernel_annotations(const std::string& path) {
  const std::string text = cudakit::detail::read_text_file(path, "load_kernel_annotations");
  return AnnotationParser("load_kernel_annotations", path).parse(text);
}

Annotation merged_annotation(const KernelAnnotations& annotations, std::uint64_t node_id) {
  Annotation merged;
  const auto it = annotations.find(node_id);
  if (it == annotations.end()) return merged;
  for (const Annotation& annotation : it->second) {
    for (const auto& [key, value] : annotation) merged.insert_or_assign(key, value);
  }
  return merged;
}

}  // namespace cudakit::graphs
