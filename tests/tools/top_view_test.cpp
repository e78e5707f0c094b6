// `cudakit top`'s table and JSON from snapshots made by hand: what each field becomes, memory
// told apart by processes that map libcudakit, and readings a device does not support.
#include "top_view.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using cudakit::DeviceTelemetry;
using cudakit::GpuProcess;
using cudakit::cli::TopSnapshot;

constexpr std::size_t kGiB = std::size_t{1} << 30;

DeviceTelemetry h200() {
  DeviceTelemetry d;
  d.nvml_index = 1;
  d.cuda_ordinal = 0;
  d.uuid = "GPU-5c4f1e2a-9b1d-4e7a-8c3f-0a1b2c3d4e5f";
  d.name = "NVIDIA H200";
  d.memory_total = 140 * kGiB;
  d.memory_used = 12 * kGiB;
  d.utilization = 37;
  d.memory_usage = 5;
  d.temperature = 41;
  d.power_draw = 123456;
  d.power_limit = 700000;
  d.clock_rate = 1755;
  d.clock_rate_max = 1980;
  d.memory_clock_rate = 3201;
  d.processes = {
      {.pid = 4242, .used_memory = 3 * kGiB, .name = "/usr/bin/server", .uses_cudakit = true},
      {.pid = 4343, .used_memory = 1 * kGiB, .name = "python3", .uses_cudakit = false},
      {.pid = 4444, .used_memory = 2 * kGiB, .name = "", .uses_cudakit = std::nullopt},
      {.pid = 4545, .used_memory = std::nullopt, .name = "tool", .uses_cudakit = true},
  };
  return d;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(TopView, MemoryOfCudakitProcessesIsToldApartFromTheRest) {
  const cudakit::cli::MemorySplit split = cudakit::cli::split_memory(h200());
  EXPECT_EQ(split.cudakit, 3 * kGiB);  // 4545's memory is not known; 4444's maps unreadable
  EXPECT_EQ(split.others, 9 * kGiB);
}

TEST(TopView, RemainderNeverGoesNegative) {
  DeviceTelemetry d = h200();
  d.memory_used = 2 * kGiB;  // read a moment before the processes' 3 GiB
  EXPECT_EQ(cudakit::cli::split_memory(d).others, 0u);
}

TEST(TopView, TableShowsEveryReadingAndEveryProcess) {
  const std::string table = cudakit::cli::render_top({"2026-12-01T14:58:03Z", {h200()}});
  EXPECT_TRUE(contains(table, "2026-12-01T14:58:03Z")) << table;
  for (const char* part : {"NVIDIA H200", "37%", "5%", "41C", "123/700 W", "1755/1980 MHz",
                           "12.0 GiB / 140.0 GiB", "3.0 GiB", "9.0 GiB"})
    EXPECT_TRUE(contains(table, part)) << part << " missing in\n" << table;
  EXPECT_TRUE(contains(table, "pid 4242     cudakit     3.0 GiB  /usr/bin/server")) << table;
  EXPECT_TRUE(contains(table, "pid 4343     other       1.0 GiB  python3")) << table;
  EXPECT_TRUE(contains(table, "pid 4444     unknown     2.0 GiB  ?")) << table;
  EXPECT_TRUE(contains(table, "pid 4545     cudakit           ?  tool")) << table;
}

TEST(TopView, UnsupportedReadingsAreDashesAndHiddenDevicesHaveNoOrdinal) {
  DeviceTelemetry d;
  d.nvml_index = 3;
  d.name = "NVIDIA H200";
  d.memory_total = 140 * kGiB;
  const std::string table = cudakit::cli::render_top({"t", {d}});
  const std::string row = table.substr(table.find("\n3 "));
  EXPECT_TRUE(contains(row, "3    -    NVIDIA H200")) << table;
  EXPECT_TRUE(contains(row, "    -      -     -             -               -")) << table;
}

TEST(TopView, NoDeviceIsSaid) {
  EXPECT_TRUE(contains(cudakit::cli::render_top({"t", {}}), "no GPU: NVML lists no device"));
}

TEST(TopView, JsonCarriesEveryFieldOfTheSchema) {
  const nlohmann::json j = cudakit::cli::top_json({"2026-12-01T14:58:03Z", {h200()}});
  EXPECT_EQ(j.at("time"), "2026-12-01T14:58:03Z");
  ASSERT_EQ(j.at("devices").size(), 1u);
  const nlohmann::json& d = j.at("devices")[0];
  EXPECT_EQ(d.at("nvml_index"), 1);
  EXPECT_EQ(d.at("cuda_ordinal"), 0);
  EXPECT_EQ(d.at("uuid"), "GPU-5c4f1e2a-9b1d-4e7a-8c3f-0a1b2c3d4e5f");
  EXPECT_EQ(d.at("name"), "NVIDIA H200");
  EXPECT_EQ(d.at("memory"), (nlohmann::json{{"total", 140 * kGiB}, {"used", 12 * kGiB},
                                            {"cudakit", 3 * kGiB}, {"others", 9 * kGiB}}));
  EXPECT_EQ(d.at("utilization"), 37);
  EXPECT_EQ(d.at("memory_usage"), 5);
  EXPECT_EQ(d.at("temperature"), 41);
  EXPECT_EQ(d.at("power_draw_mw"), 123456);
  EXPECT_EQ(d.at("power_limit_mw"), 700000);
  EXPECT_EQ(d.at("clock_rate_mhz"), 1755);
  EXPECT_EQ(d.at("clock_rate_max_mhz"), 1980);
  EXPECT_EQ(d.at("memory_clock_rate_mhz"), 3201);
  ASSERT_EQ(d.at("processes").size(), 4u);
  EXPECT_EQ(d.at("processes")[0], (nlohmann::json{{"pid", 4242}, {"name", "/usr/bin/server"},
                                                  {"used_memory", 3 * kGiB}, {"uses_cudakit", true}}));
  EXPECT_TRUE(d.at("processes")[2].at("uses_cudakit").is_null());
  EXPECT_TRUE(d.at("processes")[3].at("used_memory").is_null());
  // The text round-trips (what scripts read).
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);
}

TEST(TopView, JsonHasNullsForWhatTheDeviceDoesNotReport) {
  DeviceTelemetry d;
  const nlohmann::json j = cudakit::cli::top_json({"t", {d}}).at("devices")[0];
  for (const char* key : {"cuda_ordinal", "utilization", "memory_usage", "temperature", "power_draw_mw",
                          "power_limit_mw", "clock_rate_mhz", "clock_rate_max_mhz", "memory_clock_rate_mhz"})
    EXPECT_TRUE(j.at(key).is_null()) << key;
  EXPECT_TRUE(j.at("processes").empty());
}

}  // namespace
