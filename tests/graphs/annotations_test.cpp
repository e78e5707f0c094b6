// Host tier: annotation regions (nesting, merging), the JSON form, the mechanism switch.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cudakit/core/error.hpp"
#include "cudakit/graphs/kernel_annotation_registry.hpp"
#include "cudakit/graphs/kernel_annotation_scope.hpp"

namespace {

using namespace cudakit;
using graphs::Annotation;
using graphs::mark_kernels;

TEST(AnnotationRegions, StringIsShorthandForName) {
  mark_kernels region("attention");
  ASSERT_EQ(graphs::current_regions().size(), 1u);
  EXPECT_EQ(graphs::current_annotation(), (Annotation{{"name", std::string("attention")}}));
}

TEST(AnnotationRegions, FieldsKeepTheirTypes) {
  mark_kernels region({{"name", "mlp"}, {"layer", 3}, {"scale", 0.5}});
  const Annotation a = graphs::current_annotation();
  EXPECT_EQ(std::get<std::string>(a.at("name")), "mlp");
  EXPECT_EQ(std::get<std::int64_t>(a.at("layer")), 3);
  EXPECT_EQ(std::get<double>(a.at("scale")), 0.5);
}

TEST(AnnotationRegions, InnerWinsPerKeyOuterKeysKept) {
  EXPECT_TRUE(graphs::current_regions().empty());
  {
    mark_kernels outer({{"name", "block"}, {"layer", 1}, {"phase", "forward"}});
    {
      mark_kernels inner({{"name", "attention"}, {"layer", 2}});
      // A node captured here gets both objects, outermost first.
      ASSERT_EQ(graphs::current_regions().size(), 2u);
      EXPECT_EQ(std::get<std::string>(graphs::current_regions()[0].at("name")), "block");
      const Annotation merged = graphs::current_annotation();
      EXPECT_EQ(std::get<std::string>(merged.at("name")), "attention");
      EXPECT_EQ(std::get<std::int64_t>(merged.at("layer")), 2);
      EXPECT_EQ(std::get<std::string>(merged.at("phase")), "forward");
      {
        mark_kernels innermost("softmax");
        EXPECT_EQ(std::get<std::string>(graphs::current_annotation().at("name")), "softmax");
        EXPECT_EQ(std::get<std::int64_t>(graphs::current_annotation().at("layer")), 2);
      }
      EXPECT_EQ(std::get<std::string>(graphs::current_annotation().at("name")), "attention");
    }
    const Annotation after = graphs::current_annotation();
    EXPECT_EQ(std::get<std::string>(after.at("name")), "block");
    EXPECT_EQ(std::get<std::int64_t>(after.at("layer")), 1);
  }
  EXPECT_TRUE(graphs::current_regions().empty());
  EXPECT_TRUE(graphs::current_annotation().empty());
}

TEST(AnnotationRegions, RegionsArePerThread) {
  mark_kernels here("main");
  std::size_t seen_elsewhere = 99;
  std::thread([&] { seen_elsewhere = graphs::current_regions().size(); }).join();
  EXPECT_EQ(seen_elsewhere, 0u);
}

TEST(AnnotationRegistry, RegionOutsideCaptureRecordsNothing) {
  graphs::clear_kernel_annotations();
  {
    mark_kernels region("not captured");
    mark_kernels nested({{"layer", 7}});
  }
  EXPECT_TRUE(graphs::get_kernel_annotations().empty());
}

TEST(AnnotationRegistry, SavedJsonIsTheDocumentedForm) {
  graphs::clear_kernel_annotations();
  const auto path = std::filesystem::temp_directory_path() / "cudakit_graph_annotations_empty.json";
  graphs::save_kernel_annotations(path.string());
  std::ifstream in(path);
  const auto parsed = nlohmann::json::parse(in);
  EXPECT_TRUE(parsed.is_object());
  EXPECT_TRUE(parsed.empty());
  std::filesystem::remove(path);

  // The shape captures produce: one object per enclosing region, outermost first.
  graphs::KernelAnnotations recorded;
  {
    mark_kernels outer("attention");
    recorded[17] = graphs::current_regions();
    mark_kernels inner({{"name", "mlp"}, {"layer", 3}});
    recorded[18] = graphs::current_regions();
  }
  const auto json = nlohmann::json::parse(graphs::kernel_annotations_to_json(recorded));
  EXPECT_EQ(json, nlohmann::json::parse(R"({"17": [{"name": "attention"}],
                                           "18": [{"name": "attention"}, {"name": "mlp", "layer": 3}]})"));
  EXPECT_EQ(graphs::kernel_annotations_from_json(json.dump()), recorded);
  const Annotation merged = graphs::merged_annotation(recorded, 18);
  EXPECT_EQ(std::get<std::string>(merged.at("name")), "mlp");
}

TEST(AnnotationMechanismChoice, NamesAndEnvironment) {
  EXPECT_STREQ(graphs::to_string(graphs::AnnotationMechanism::tools_id), "tools_id");
  EXPECT_STREQ(graphs::to_string(graphs::AnnotationMechanism::cupti), "cupti");
  EXPECT_STREQ(graphs::to_string(graphs::AnnotationMechanism::none), "none");

  ::setenv("CUDAKIT_ANNOTATIONS_MECHANISM", "none", 1);
  EXPECT_EQ(graphs::annotation_mechanism(), graphs::AnnotationMechanism::none);
  EXPECT_FALSE(graphs::annotations_available());
  ::unsetenv("CUDAKIT_ANNOTATIONS_MECHANISM");

  // Forcing `none` always works and wins over the environment; nullopt goes back to automatic.
  graphs::set_annotation_mechanism(graphs::AnnotationMechanism::none);
  EXPECT_EQ(graphs::annotation_mechanism(), graphs::AnnotationMechanism::none);
  graphs::set_annotation_mechanism(std::nullopt);
  EXPECT_EQ(graphs::annotations_available(),
            graphs::annotation_mechanism() != graphs::AnnotationMechanism::none);
}

TEST(AnnotationMechanismChoice, ForcingAnUnusableMechanismSaysWhy) {
  if (graphs::annotation_mechanism() != graphs::AnnotationMechanism::none) {
    GTEST_SKIP() << "CUPTI is available here: every forced mechanism but tools_id may work";
  }
  try {
    graphs::set_annotation_mechanism(graphs::AnnotationMechanism::cupti);
    FAIL() << "forcing cupti without CUPTI must throw";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("CUPTI is not available"), std::string::npos) << e.what();
  }
}

}  // namespace
