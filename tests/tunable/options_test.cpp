#include "cudakit/tunable/options.hpp"

#include <gtest/gtest.h>

#include <map>
#include <thread>
#include <vector>
#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/tensor/matmul_hook.hpp"
#include "cudakit/tunable/tunable.hpp"

namespace cudakit::tunable {
namespace {

TuningOptions from(const std::map<std::string, std::string>& env) {
  return TuningOptions::from_environment([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(TuningOptions, DefaultsFollowTorchExceptTheNumericalCheck) {
  const TuningOptions o = from({});
  EXPECT_FALSE(o.enabled);
  EXPECT_TRUE(o.tuning);
  EXPECT_FALSE(o.record_untuned);
  EXPECT_EQ(o.filename, "cudakit_tunableop_results%d.csv");
  EXPECT_EQ(o.untuned_filename, "cudakit_tunableop_untuned%d.csv");
  EXPECT_EQ(o.max_tuning_duration_ms, 30);
  EXPECT_EQ(o.max_tuning_iterations, 100);
  EXPECT_EQ(o.rotating_buffer_size_mb, -1);
  EXPECT_TRUE(o.numerical_check);
}

TEST(TuningOptions, ReadsEveryVariable) {
  const TuningOptions o = from({{"CUDAKIT_TUNABLEOP_ENABLED", "1"},
                                {"CUDAKIT_TUNABLEOP_TUNING", "0"},
                                {"CUDAKIT_TUNABLEOP_RECORD_UNTUNED", "1"},
                                {"CUDAKIT_TUNABLEOP_FILENAME", "r%d.csv"},
                                {"CUDAKIT_TUNABLEOP_UNTUNED_FILENAME", "u.csv"},
                                {"CUDAKIT_TUNABLEOP_NUMERICAL_CHECK", "0"},
                                {"CUDAKIT_TUNABLEOP_MAX_TUNING_DURATION_MS", "50"},
                                {"CUDAKIT_TUNABLEOP_MAX_TUNING_ITERATIONS", "7"},
                                {"CUDAKIT_TUNABLEOP_MAX_WARMUP_DURATION_MS", "3"},
                                {"CUDAKIT_TUNABLEOP_MAX_WARMUP_ITERATIONS", "2"},
                                {"CUDAKIT_TUNABLEOP_ICACHE_FLUSH_ENABLED", "0"},
                                {"CUDAKIT_TUNABLEOP_ROTATING_BUFFER_SIZE", "256"},
                                {"CUDAKIT_TUNABLEOP_VERBOSE", "2"},
                                {"CUDAKIT_TUNABLEOP_MAX_SHAPE_TUNING_MS", "500"},
                                {"CUDAKIT_TUNABLEOP_MAX_ENUMERATED_CANDIDATES", "0"},
                                {"CUDAKIT_TUNABLEOP_MAX_NEIGHBOUR_CANDIDATES", "5"}});
  EXPECT_TRUE(o.enabled);
  EXPECT_FALSE(o.tuning);
  EXPECT_TRUE(o.record_untuned);
  EXPECT_EQ(o.filename, "r%d.csv");
  EXPECT_EQ(o.untuned_filename, "u.csv");
  EXPECT_FALSE(o.numerical_check);
  EXPECT_EQ(o.max_tuning_duration_ms, 50);
  EXPECT_EQ(o.max_tuning_iterations, 7);
  EXPECT_EQ(o.max_warmup_duration_ms, 3);
  EXPECT_EQ(o.max_warmup_iterations, 2);
  EXPECT_FALSE(o.icache_flush);
  EXPECT_EQ(o.rotating_buffer_size_mb, 256);
  EXPECT_EQ(o.verbose, 2);
  EXPECT_EQ(o.max_shape_tuning_ms, 500);
  EXPECT_EQ(o.max_enumerated_candidates, 0);
  EXPECT_EQ(o.max_neighbour_candidates, 5);
}

TEST(TuningOptions, BadValuesNameTheVariable) {
  for (const auto& [name, value] : std::map<std::string, std::string>{{"CUDAKIT_TUNABLEOP_ENABLED", "yes"},
                                                                      {"CUDAKIT_TUNABLEOP_MAX_TUNING_ITERATIONS", "0"},
                                                                      {"CUDAKIT_TUNABLEOP_ROTATING_BUFFER_SIZE", "-2"},
                                                                      {"CUDAKIT_TUNABLEOP_VERBOSE", "1x"}}) {
    try {
      (void)from({{name, value}});
      ADD_FAILURE() << name << "=" << value << " was accepted";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(name + "=\"" + value + "\""), std::string::npos) << e.what();
    }
  }
}

// The functions of torch.cuda.tunable on the process's options, and the matmul route.
TEST(TunableApi, SettersChangeOptionsAndEnableRoutesMatmul) {
  const TuningOptions saved = options();
  enable(true);
  EXPECT_TRUE(is_enabled());
  EXPECT_NE(tensor::matmul_hook(), nullptr);
  enable(false);
  EXPECT_FALSE(is_enabled());
  EXPECT_EQ(tensor::matmul_hook(), nullptr);
  tuning_enable(false);
  EXPECT_FALSE(tuning_is_enabled());
  record_untuned_enable(true);
  EXPECT_TRUE(record_untuned_is_enabled());
  set_max_tuning_duration(12);
  EXPECT_EQ(get_max_tuning_duration(), 12);
  set_max_tuning_iterations(34);
  EXPECT_EQ(get_max_tuning_iterations(), 34);
  set_rotating_buffer_size(64);
  EXPECT_EQ(get_rotating_buffer_size(), 64);
  set_filename("elsewhere%d.csv");
  EXPECT_EQ(get_filename(), "elsewhere%d.csv");
  set_options(saved);
  EXPECT_EQ(options().filename, saved.filename);
  EXPECT_EQ(is_enabled(), saved.enabled);
}

// Options are changed and read from several threads at once; each reader sees one whole set.
TEST(TunableApiConcurrency, OptionsChangeWhileOtherThreadsReadThem) {
  const TuningOptions saved = options();
  set_max_tuning_iterations(100);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) {
        if (t % 2 == 0) {
          set_max_tuning_iterations(1 + (i % 2) * 99);
        } else {
          const int iterations = get_max_tuning_iterations();
          EXPECT_TRUE(iterations == 1 || iterations == 100) << iterations;
          (void)is_enabled();
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  set_options(saved);
  EXPECT_EQ(get_max_tuning_iterations(), saved.max_tuning_iterations);
}

}  // namespace
}  // namespace cudakit::tunable
