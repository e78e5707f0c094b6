// `cudakit tune`, from the built binary: malformed lines are reported by number, a file with no
// GEMM and a machine with no GPU fail with one line saying so, and on a GPU the results file
// holds one result per key.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cudakit/core/device.hpp"
#include "cudakit/tunable/results_file.hpp"
#include "support/cudakit_cli.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_files.hpp"

namespace {

using cudakit::testing::run_cudakit;
using cudakit::testing::ScratchDir;

constexpr const char* kKey = "GemmTunableOp_Half_NN,nn_256_128_512_ld_256_512_256_ws_33554432_al_16_sm_132";

class CudakitTune : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(cudakit::testing::cudakit_cli_path()))
      GTEST_SKIP() << cudakit::testing::cudakit_cli_path() << " is not built";
  }
  ScratchDir dir_;
};

TEST_F(CudakitTune, ReportsMalformedLinesAndAnEmptyFile) {
  cudakit::testing::write_file(dir_.path() / "untuned.csv", "not a key\n");
  const auto run = run_cudakit({"tune", "untuned.csv", "-o", "results.csv"}, dir_.path());
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("untuned.csv: line 1: expected OpName,ParamsSignature"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("names no GEMM to tune"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "results.csv"));
}

TEST_F(CudakitTune, NeedsAnOutput) {
  cudakit::testing::write_file(dir_.path() / "untuned.csv", std::string(kKey) + "\n");
  const auto run = run_cudakit({"tune", "untuned.csv"}, dir_.path());
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("--output"), std::string::npos) << run.err;
}

TEST_F(CudakitTune, TunesEachKeyOrSaysThereIsNoGpu) {
  cudakit::testing::write_file(dir_.path() / "untuned.csv", std::string(kKey) + "\nbad line\n" + kKey + "\n");
  const auto run = run_cudakit({"tune", "untuned.csv", "-o", "results.csv", "--max-shape-ms", "300"}, dir_.path());
  EXPECT_NE(run.err.find("line 2:"), std::string::npos) << run.err;
  if (!cudakit::is_available()) {
    EXPECT_EQ(run.status, 1);
    EXPECT_NE(run.err.find("needs a CUDA device"), std::string::npos) << run.err;
    return;
  }
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.err.find("1/1 GEMMs"), std::string::npos) << run.err;
  const cudakit::tunable::ResultsFileContents results =
      cudakit::tunable::parse_results_file(cudakit::testing::read_file(dir_.path() / "results.csv"));
  ASSERT_EQ(results.results.size(), 1u);
  EXPECT_EQ(results.results[0].key.op_name() + "," + results.results[0].key.signature(), kKey);
  EXPECT_FALSE(results.validators.empty());
}

}  // namespace
