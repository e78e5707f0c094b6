// The annotations' JSON form: round trips, merge order, and the messages for malformed files.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cudakit/core/error.hpp"
#include "cudakit/graphs/kernel_annotations.hpp"

namespace cudakit::graphs {
namespace {

KernelAnnotations sample() {
  return {{17, {{{"name", std::string("attention")}}}},
          {18446744073709551615ull,
           {{{"name", std::string("model")}, {"scale", 0.25}},
            {{"name", std::string("mlp")}, {"layer", std::int64_t{3}}, {"ratio", 2.0}}}}};
}

void expect_parse_error(const std::string& json, const std::string& part) {
  try {
    (void)kernel_annotations_from_json(json);
    FAIL() << "no error for " << json;
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << part;
  }
}

TEST(KernelAnnotationsJson, RoundTripsWithTypes) {
  const std::string json = kernel_annotations_to_json(sample());
  EXPECT_EQ(kernel_annotations_from_json(json), sample());
  const nlohmann::json parsed = nlohmann::json::parse(json);
  // Keys are decimal node ids; 2.0 stays a float and 3 an integer.
  EXPECT_TRUE(parsed.contains("18446744073709551615"));
  EXPECT_TRUE(parsed["18446744073709551615"][1]["ratio"].is_number_float());
  EXPECT_TRUE(parsed["18446744073709551615"][1]["layer"].is_number_integer());
}

TEST(KernelAnnotationsJson, MergedAnnotationAppliesObjectsInOrder) {
  const Annotation merged = merged_annotation(sample(), 18446744073709551615ull);
  EXPECT_EQ(std::get<std::string>(merged.at("name")), "mlp");
  EXPECT_EQ(std::get<double>(merged.at("scale")), 0.25);
  EXPECT_EQ(std::get<std::int64_t>(merged.at("layer")), 3);
  EXPECT_TRUE(merged_annotation(sample(), 5).empty());
}

TEST(KernelAnnotationsJson, NamesTheKeyAtFault) {
  expect_parse_error("{", "annotations:1:2: not valid JSON");
  expect_parse_error("[]", "top level is a array");
  expect_parse_error(R"({"-1": []})", "key \"-1\": is not a graph node id");
  expect_parse_error(R"({"12x": []})", "key \"12x\": is not a graph node id");
  expect_parse_error(R"({"18446744073709551616": []})", "is not a graph node id");
  expect_parse_error(R"({"7": {"name": "a"}})", "key \"7\": value is a object, expected a list");
  expect_parse_error(R"({"7": [{"name": "a"}, "b"]})", "key \"7\"[1]: is a string");
  expect_parse_error(R"({"7": [{"flag": true}]})", "key \"7\"[0].flag: is a boolean");
  expect_parse_error(R"({"7": [{"nested": {"a": 1}}]})", "key \"7\"[0].nested: is a object");
  expect_parse_error(R"({"7": [{"big": 18446744073709551615}]})", "does not fit in int64");
}

TEST(KernelAnnotationsJson, LoadNamesTheFile) {
  try {
    (void)load_kernel_annotations("/nonexistent/annotations.json");
    FAIL();
  } catch (const FileError& e) {  // the system's refusal, not a bad argument
    EXPECT_NE(std::string(e.what()).find("cannot read /nonexistent/annotations.json"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cudakit::graphs
