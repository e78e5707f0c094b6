#pragma once
// nlohmann::json forms of annotation values, shared by kernel_annotations.cpp and the profiler's
// offline trace merge: the graph layer's interface to the layer above, hence here. nlohmann is
// private to the library, so no header a program includes includes this one.

#include <nlohmann/json.hpp>

#include <variant>

#include "cudakit/graphs/kernel_annotations.hpp"

namespace cudakit::graphs::detail {

inline nlohmann::json annotation_value_json(const AnnotationValue& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

}  // namespace cudakit::graphs::detail
