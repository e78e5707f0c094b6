// Host tier: annotation regions (nesting, merging), the JSON form, the mechanism switch.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cudakit/core/error.hpp"
#include "cudakit/graphs/kernel_annotation_registry.hpp"
#include "cudakit/graphs/mark_kernels.hpp"

namespace {

using namespace cudakit;
using annotations::mark_kernels;
using graphs::Annotation;

TEST(AnnotationRegions, StringIsShorthandForName) {
  mark_kernels region("attention");
  ASSERT_EQ(annotations::current_regions().size(), 1u);
  EXPECT_EQ(annotations::current_annotation(), (Annotation{{"name", std::string("attention")}}));
}

TEST(AnnotationRegions, FieldsKeepTheirTypes) {
  mark_kernels region({{"name", "mlp"}, {"layer", 3}, {"scale", 0.5}});
  const Annotation a = annotations::current_annotation();
  EXPECT_EQ(std::get<std::string>(a.at("name")), "mlp");
  EXPECT_EQ(std::get<std::int64_t>(a.at("layer")), 3);
  EXPECT_EQ(std::get<double>(a.at("scale")), 0.5);
}

TEST(AnnotationRegions, InnerWinsPerKeyOuterKeysKept) {
  EXPECT_TRUE(annotations::current_regions().empty());
  {
    mark_kernels outer({{"name", "block"}, {"layer", 1}, {"phase", "forward"}});
    {
      mark_kernels inner({{"name", "attention"}, {"layer", 2}});
      // A node captured here gets both objects, outermost first.
      ASSERT_EQ(annotations::current_regions().size(), 2u);
      EXPECT_EQ(std::get<std::string>(annotations::current_regions()[0].at("name")), "block");
      const Annotation merged = annotations::current_annotation();
      EXPECT_EQ(std::get<std::string>(merged.at("name")), "attention");
      EXPECT_EQ(std::get<std::int64_t>(merged.at("layer")), 2);
      EXPECT_EQ(std::get<std::string>(merged.at("phase")), "forward");
      {
        mark_kernels innermost("softmax");
        EXPECT_EQ(std::get<std::string>(annotations::current_annotation().at("name")), "softmax");
        EXPECT_EQ(std::get<std::int64_t>(annotations::current_annotation().at("layer")), 2);
      }
      EXPECT_EQ(std::get<std::string>(annotations::current_annotation().at("name")), "attention");
    }
    const Annotation after = annotations::current_annotation();
    EXPECT_EQ(std::get<std::string>(after.at("name")), "block");
    EXPECT_EQ(std::get<std::int64_t>(after.at("layer")), 1);
  }
  EXPECT_TRUE(annotations::current_regions().empty());
  EXPECT_TRUE(annotations::current_annotation().empty());
}

TEST(AnnotationRegions, RegionsArePerThread) {
  mark_kernels here("main");
  std::size_t seen_elsewhere = 99;
  std::thread([&] { seen_elsewhere = annotations::current_regions().size(); }).join();
  EXPECT_EQ(seen_elsewhere, 0u);
}

TEST(AnnotationRegistry, RegionOutsideCaptureRecordsNothing) {
  annotations::clear_kernel_annotations();
  {
    mark_kernels region("not captured");
    mark_kernels nested({{"layer", 7}});
  }
  EXPECT_TRUE(annotations::get_kernel_annotations().empty());
}

TEST(AnnotationRegistry, SavedJsonIsTheDocumentedForm) {
  annotations::clear_kernel_annotations();
  const auto path = std::filesystem::temp_directory_path() / "cudakit_graph_annotations_empty.json";
  annotations::save_kernel_annotations(path.string());
  std::ifstream in(path);
  const auto parsed = nlohmann::json::parse(in);
  EXPECT_TRUE(parsed.is_object());
  EXPECT_TRUE(parsed.empty());
  std::filesystem::remove(path);

  // The shape captures produce: one object per enclosing region, outermost first.
  graphs::KernelAnnotations recorded;
  {
    mark_kernels outer("attention");
    recorded[17] = annotations::current_regions();
    mark_kernels inner({{"name", "mlp"}, {"layer", 3}});
    recorded[18] = annotations::current_regions();
  }
  const auto json = nlohmann::json::parse(graphs::kernel_annotations_to_json(recorded));
  EXPECT_EQ(json, nlohmann::json::parse(R"({"17": [{"name": "attention"}],
                                           "18": [{"name": "attention"}, {"name": "mlp", "layer": 3}]})"));
  EXPECT_EQ(graphs::kernel_annotations_from_json(json.dump()), recorded);
  const Annotation merged = graphs::merged_annotation(recorded, 18);
  EXPECT_EQ(std::get<std::string>(merged.at("name")), "mlp");
}

TEST(AnnotationMechanismChoice, NamesAndEnvironment) {
  EXPECT_STREQ(annotations::to_string(annotations::AnnotationMechanism::tools_id), "tools_id");
  EXPECT_STREQ(annotations::to_string(annotations::AnnotationMechanism::cupti), "cupti");
  EXPECT_STREQ(annotations::to_string(annotations::AnnotationMechanism::none), "none");

  ::setenv("CUDAKIT_ANNOTATIONS_MECHANISM", "none", 1);
  EXPECT_EQ(annotations::annotation_mechanism(), annotations::AnnotationMechanism::none);
  EXPECT_FALSE(annotations::is_available());
  ::unsetenv("CUDAKIT_ANNOTATIONS_MECHANISM");

  // Forcing `none` always works and wins over the environment; nullopt goes back to automatic.
  annotations::set_annotation_mechanism(annotations::AnnotationMechanism::none);
  EXPECT_EQ(annotations::annotation_mechanism(), annotations::AnnotationMechanism::none);
  annotations::set_annotation_mechanism(std::nullopt);
  EXPECT_EQ(annotations::is_available(),
            annotations::annotation_mechanism() != annotations::AnnotationMechanism::none);
}

TEST(AnnotationMechanismChoice, ForcingAnUnusableMechanismSaysWhy) {
  if (annotations::annotation_mechanism() != annotations::AnnotationMechanism::none) {
    GTEST_SKIP() << "CUPTI is available here: every forced mechanism but tools_id may work";
  }
  try {
    annotations::set_annotation_mechanism(annotations::AnnotationMechanism::cupti);
    FAIL() << "forcing cupti without CUPTI must throw";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("CUPTI is not available"), std::string::npos) << e.what();
  }
}

}  // namespace
