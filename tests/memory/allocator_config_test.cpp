// AllocatorConfig: CUDAKIT_ALLOC_CONF's grammar (torch's PYTORCH_CUDA_ALLOC_CONF) and its errors.

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/allocator_config.hpp"

namespace cudakit::memory {
namespace {

constexpr std::size_t MiB = 1u << 20;

TEST(AllocatorConfigParse, CrossStreamReuseTakesItsThreeModes) {
  EXPECT_EQ(AllocatorConfig{}.cross_stream_reuse, CrossStreamReuse::opportunistic);
  for (CrossStreamReuse mode : {CrossStreamReuse::off, CrossStreamReuse::opportunistic, CrossStreamReuse::dependencies}) {
    const auto c = AllocatorConfig::parse(std::string("cross_stream_reuse:") + to_string(mode));
    EXPECT_EQ(c.cross_stream_reuse, mode);
    EXPECT_EQ(AllocatorConfig::parse(c.to_string()).cross_stream_reuse, mode) << c.to_string();
  }
  try {
    (void)AllocatorConfig::parse("cross_stream_reuse:sometimes");
    FAIL() << "accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'cross_stream_reuse:sometimes': expected off, opportunistic or dependencies"),
              std::string::npos) << e.what();
  }
}

TEST(AllocatorConfigParse, ExactPeaksIsOnUnlessTurnedOffAndWritesBack) {
  EXPECT_TRUE(AllocatorConfig{}.exact_peaks);
  const auto off = AllocatorConfig::parse("exact_peaks:False,backend:cudaMallocAsync");
  EXPECT_FALSE(off.exact_peaks);
  EXPECT_EQ(off.to_string(), "expandable_segments:True,backend:cudaMallocAsync,exact_peaks:False");
  EXPECT_FALSE(AllocatorConfig::parse(off.to_string()).exact_peaks);
  EXPECT_TRUE(AllocatorConfig::parse("exact_peaks:True").exact_peaks);
  try {
    (void)AllocatorConfig::parse("exact_peaks:maybe");
    FAIL() << "accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("exact_peaks:maybe"), std::string::npos) << e.what();
  }
  // Read when an allocator is created: not among the keys a running one changes.
  EXPECT_THROW((void)AllocatorConfig::parse_runtime("exact_peaks:False", AllocatorConfig{}), InvalidArgumentError);
}

TEST(AllocatorConfigParse, ThreadShardsTakesItsThreeModesAndIsFixedAtCreation) {
  EXPECT_EQ(AllocatorConfig{}.thread_shards, ThreadShards::adaptive);
  EXPECT_EQ(AllocatorConfig{}.to_string().find("thread_shards"), std::string::npos) << "the default is not written";
  for (ThreadShards mode : {ThreadShards::off, ThreadShards::adaptive, ThreadShards::always}) {
    const auto c = AllocatorConfig::parse(std::string("thread_shards:") + to_string(mode));
    EXPECT_EQ(c.thread_shards, mode);
    EXPECT_EQ(AllocatorConfig::parse(c.to_string()).thread_shards, mode) << c.to_string();
  }
  try {
    (void)AllocatorConfig::parse("thread_shards:sometimes");
    FAIL() << "accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'thread_shards:sometimes': expected off, adaptive or always"),
              std::string::npos) << e.what();
  }
  try {
    (void)AllocatorConfig::parse_runtime("thread_shards:off", AllocatorConfig{});
    FAIL() << "accepted at run time";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot change at run time"), std::string::npos) << e.what();
  }
}

TEST(AllocatorConfigParse, TorchSyntaxAndClearErrors) {
  const auto c = AllocatorConfig::parse(
      " expandable_segments:False, max_split_size_mb:128,garbage_collection_threshold:0.6,"
      "roundup_power2_divisions:4,per_process_memory_fraction:0.5");
  EXPECT_FALSE(c.expandable_segments);
  EXPECT_EQ(c.max_split_size, 128 * MiB);
  EXPECT_DOUBLE_EQ(c.garbage_collection_threshold, 0.6);
  for (unsigned d : c.roundup_power2_divisions) EXPECT_EQ(d, 4u);
  EXPECT_DOUBLE_EQ(c.per_process_memory_fraction, 0.5);
  EXPECT_EQ(AllocatorConfig::parse(c.to_string()).to_string(), c.to_string());
  auto error_of = [](const char* text) {
    try {
      (void)AllocatorConfig::parse(text);
    } catch (const InvalidArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_NE(error_of("max_split_size_mb:10").find("'max_split_size_mb:10': must be greater than 20"), std::string::npos);
  EXPECT_NE(error_of("max_non_split_rounding_mb:10").find("must be at least 20"), std::string::npos);
  EXPECT_EQ(AllocatorConfig::parse("max_non_split_rounding_mb:256").max_non_split_rounding, 256 * MiB);
  EXPECT_EQ(AllocatorConfig::parse(AllocatorConfig::parse("max_non_split_rounding_mb:256").to_string())
                .max_non_split_rounding, 256 * MiB);
  EXPECT_NE(error_of("garbage_collection_threshold:1.5").find("strictly between 0 and 1"), std::string::npos);
  EXPECT_NE(error_of("expandable_segments:maybe").find("expected True or False"), std::string::npos);
  EXPECT_NE(error_of("bogus_key:1").find("unknown key"), std::string::npos);
  // torch's keys that are not implemented say so, with the reason, instead of looking like typos.
  EXPECT_NE(error_of("expandable_segments_handle_type:1")
                .find("a PYTORCH_CUDA_ALLOC_CONF key that cudakit does not implement"),
            std::string::npos);
  EXPECT_NE(error_of("release_lock_on_cudamalloc:True").find("no device-wide lock"), std::string::npos);
  EXPECT_EQ(error_of("pinned_use_background_threads:True").find("unknown key"), std::string::npos);
  EXPECT_NE(error_of("roundup_power2_divisions:3").find("power of two"), std::string::npos);
  EXPECT_NE(error_of("roundup_power2_divisions:[256:3]").find("divisions '3' must be 0 or a power of two"),
            std::string::npos);
  EXPECT_NE(error_of("roundup_power2_divisions:[300:2]").find("interval '300' must be a power of two"),
            std::string::npos);
  EXPECT_NE(error_of("roundup_power2_divisions:[256:2,expandable_segments:True").find("without a closing"),
            std::string::npos);
  EXPECT_NE(error_of("roundup_power2_divisions:[256]").find("entry '256' is not B:divisions"), std::string::npos);
  EXPECT_NE(error_of("novalue").find("expected key:value"), std::string::npos);
}

TEST(AllocatorConfigParse, PinnedHostRegisterKeysAsTorchSpellsThem) {
  const AllocatorConfig defaults = AllocatorConfig::parse("");
  EXPECT_FALSE(defaults.pinned_use_host_register);
  EXPECT_EQ(defaults.pinned_num_register_threads, 1u);
  const auto c = AllocatorConfig::parse("pinned_use_cuda_host_register:True,pinned_num_register_threads:8");
  EXPECT_TRUE(c.pinned_use_host_register);
  EXPECT_EQ(c.pinned_num_register_threads, 8u);
  const AllocatorConfig back = AllocatorConfig::parse(c.to_string());
  EXPECT_TRUE(back.pinned_use_host_register);
  EXPECT_EQ(back.pinned_num_register_threads, 8u);
  EXPECT_EQ(defaults.to_string().find("pinned"), std::string::npos);
  for (const char* bad : {"pinned_num_register_threads:6", "pinned_num_register_threads:256",
                          "pinned_num_register_threads:0", "pinned_num_register_threads:2.5"}) {
    try {
      (void)AllocatorConfig::parse(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "': must be a power of two from 1 to 128"),
                std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)AllocatorConfig::parse("pinned_use_cuda_host_register:yes"), InvalidArgumentError);
}

// torch's list form: each entry names the power-of-two interval (in MiB) that starts there; the
// first entry also covers every interval below it, ">" every interval after the last one named.
TEST(AllocatorConfigParse, RoundupDivisionsPerIntervalAsTorchReadsThem) {
  const auto c = AllocatorConfig::parse(
      "roundup_power2_divisions:[256:1, 512:2,1024:4,>:8],expandable_segments:False");
  EXPECT_FALSE(c.expandable_segments);  // the list's commas did not end the item
  const std::array<unsigned, AllocatorConfig::kRoundupIntervals> expected{1, 1, 1, 1, 1, 1, 1, 1, 1,
                                                                          2, 4, 8, 8, 8, 8, 8};
  EXPECT_EQ(c.roundup_power2_divisions, expected);
  EXPECT_EQ(c.roundup_divisions(100), 1u);         // under 2 MiB: entry 0
  EXPECT_EQ(c.roundup_divisions(300 * MiB), 1u);   // [256, 512) MiB: entry 8
  EXPECT_EQ(c.roundup_divisions(600 * MiB), 2u);   // [512 MiB, 1 GiB): entry 9
  EXPECT_EQ(c.roundup_divisions(1536 * MiB), 4u);  // [1, 2) GiB: entry 10
  EXPECT_EQ(c.roundup_divisions(40ull << 30), 8u); // 32 GiB and up: entry 15
  EXPECT_EQ(AllocatorConfig::parse(c.to_string()).roundup_power2_divisions, expected);
  EXPECT_EQ(AllocatorConfig::parse(c.to_string()).to_string(), c.to_string());
}

}  // namespace
}  // namespace cudakit::memory
