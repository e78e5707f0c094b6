#include "cudakit/tunable/results_file.hpp"

#include <gtest/gtest.h>

#include "cudakit/core/error.hpp"
#include "cudakit/tunable/solution.hpp"

namespace cudakit::tunable {
namespace {

constexpr const char* kKeyLine = "GemmTunableOp_float_NT,nt_1000_1000_1000_ld_1000_1000_1000_ws_33554432_al_16_sm_132";

TEST(ResultsFile, ReadsValidatorsAndResults) {
  const std::string text = std::string("Validator,CUDAKIT_VERSION,0.1.0\r\nValidator,GPU_NAME,NVIDIA H200, rev 1\n") +
                           kKeyLine + ",Lt_a66_t20_s35_k1_r0_w1_c0_i0_g0,0.25\n" + "\n" + kKeyLine +
                           ",Default,0.3\n";
  const ResultsFileContents c = parse_results_file(text);
  ASSERT_EQ(c.validators.size(), 2u);
  EXPECT_EQ(c.validators[1].name, "GPU_NAME");
  EXPECT_EQ(c.validators[1].value, "NVIDIA H200, rev 1");  // the rest of the line
  ASSERT_EQ(c.results.size(), 2u);
  EXPECT_EQ(c.results[0].solution.kind, Solution::Kind::lt);
  EXPECT_EQ(c.results[0].solution.lt.algo_id, 66);
  EXPECT_EQ(c.results[0].solution.lt.swizzle, 1);
  EXPECT_DOUBLE_EQ(c.results[0].time_ms, 0.25);
  EXPECT_EQ(c.results[1].solution, Solution::default_solution());
  EXPECT_TRUE(c.problems.empty());
}

TEST(ResultsFile, ReportsMalformedLinesByNumberAndKeepsTheRest) {
  const std::string text = std::string("Validator,ONLY_NAME\n") +                        // 1
                           kKeyLine + ",Default\n" +                                     // 2: 3 fields
                           kKeyLine + ",Lt_a1,0.1\n" +                                   // 3: bad solution
                           kKeyLine + ",Default,fast\n" +                                // 4: bad time
                           kKeyLine + ",Default,-1\n" +                                  // 5: negative
                           "GemmTunableOp_float_NT,nt_1_2_3,Default,0.1\n" +            // 6: torch's own key
                           kKeyLine + ",Gemv_k4,0.01\n";                                 // 7: fine
  const ResultsFileContents c = parse_results_file(text);
  ASSERT_EQ(c.results.size(), 1u);
  EXPECT_EQ(c.results[0].solution.gemv_splits, 4);
  ASSERT_EQ(c.problems.size(), 6u);
  for (std::size_t i = 0; i < c.problems.size(); ++i) {
    EXPECT_EQ(c.problems[i].rfind("line " + std::to_string(i + 1) + ": ", 0), 0u) << c.problems[i];
  }
  EXPECT_NE(c.problems[1].find("found 3 field(s)"), std::string::npos);
  EXPECT_NE(c.problems[3].find("time \"fast\""), std::string::npos);
}

TEST(ResultsFile, IgnoresFieldsPastTheFourth) {
  const ResultsFileContents c = parse_results_file(std::string(kKeyLine) + ",Default,0.5,extra,fields\n");
  ASSERT_EQ(c.results.size(), 1u);
  EXPECT_TRUE(c.problems.empty());
}

TEST(ResultsFile, RoundTrips) {
  const ResultsFileContents c = parse_results_file(std::string(kKeyLine) + ",Lt_a6_t18_s22_k4_r2_w0_c1_i3_g5,0.125\n" +
                                                   kKeyLine + ",Default,1e-05\n");
  const std::vector<Validator> validators{{"CUDAKIT_VERSION", "0.1.0"}, {"CUBLASLT_VERSION", "130100"}};
  const std::string text = format_results_file(validators, c.results);
  EXPECT_EQ(text.rfind("Validator,CUDAKIT_VERSION,0.1.0\nValidator,CUBLASLT_VERSION,130100\n", 0), 0u);
  const ResultsFileContents again = parse_results_file(text);
  EXPECT_EQ(again.validators, validators);
  ASSERT_EQ(again.results.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(again.results[i].key, c.results[i].key);
    EXPECT_EQ(again.results[i].solution, c.results[i].solution);
    EXPECT_DOUBLE_EQ(again.results[i].time_ms, c.results[i].time_ms);
  }
}

TEST(ResultsFile, ComparesValidatorsBothWays) {
  const std::vector<Validator> file{{"CUDAKIT_VERSION", "0.1.0"}, {"CUBLASLT_VERSION", "130000"}, {"OLD", "x"}};
  const std::vector<Validator> here{{"CUDAKIT_VERSION", "0.1.0"}, {"CUBLASLT_VERSION", "130100"}, {"GPU_NAME", "H200"}};
  const std::vector<ValidatorMismatch> m = compare_validators(file, here);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].name, "CUBLASLT_VERSION");
  EXPECT_EQ(m[1].name, "GPU_NAME");
  EXPECT_EQ(m[1].in_file, "");
  EXPECT_EQ(m[2].name, "OLD");
  EXPECT_EQ(describe_mismatches(m),
            "CUBLASLT_VERSION: file 130000, here 130100; GPU_NAME: file (none), here H200; OLD: file x, here (none)");
  EXPECT_TRUE(compare_validators(here, here).empty());
}

TEST(UntunedFile, ReadsEachKeyOnceAndReportsBadLines) {
  const std::string text = std::string(kKeyLine) + "\n" + kKeyLine + "\nnot a key\n" + kKeyLine + ",blas signature\n";
  const UntunedFileContents c = parse_untuned_file(text);
  ASSERT_EQ(c.keys.size(), 1u);
  EXPECT_EQ(format_untuned_line(c.keys[0]), kKeyLine);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].rfind("line 3: ", 0), 0u);
}

TEST(ResultsFile, DeviceFileNames) {
  EXPECT_EQ(device_filename("tunableop_results%d.csv", 3), "tunableop_results3.csv");
  EXPECT_EQ(device_filename("results.csv", 1), "results1.csv");
  EXPECT_EQ(device_filename("dir.v2/results", 0), "dir.v2/results0");
  EXPECT_EQ(device_filename("results", 2), "results2");
  EXPECT_EQ(device_filename(".hidden", 0), ".hidden0");
}

TEST(Solution, NamesRoundTripAndBadNamesAreRefused) {
  Solution lt;
  lt.kind = Solution::Kind::lt;
  lt.lt = {31, 21, 16, 2, 1, 1, 0, 0, 7};
  Solution gemv;
  gemv.kind = Solution::Kind::gemv;
  gemv.gemv_splits = 8;
  const Solution stream = Solution::gemv(GemvKernel::stream, 8, 1);
  const Solution mma = Solution::gemv(GemvKernel::mma, 32, 4);
  for (const Solution& s : {Solution::default_solution(), lt, gemv, stream, mma}) {
    EXPECT_EQ(Solution::parse(s.name()), s);
  }
  EXPECT_EQ(lt.name(), "Lt_a31_t21_s16_k2_r1_w1_c0_i0_g7");
  EXPECT_EQ(gemv.name(), "Gemv_k8");  // the name results files of earlier versions hold
  EXPECT_EQ(stream.name(), "GemvStream_r8_k1");
  EXPECT_EQ(mma.name(), "GemvMma_r32_k4");
  for (const char* bad : {"", "default", "Gemv_k0", "Gemv_k", "Lt_a1_t2", "Lt_a1_t2_s3_k0_r0_w0_c0_i0_g0",
                          "Lt_a1_t2_s3_k1_r0_w0_c0_i0_g0_", "Hipblaslt_1234", "GemvStream_k1", "GemvStream_r0_k1",
                          "GemvMma_r16", "GemvMma_r16_k0", "GemvMma_r16_k1_", "Gemv_r8_k1"}) {
    EXPECT_THROW((void)Solution::parse(bad), InvalidArgumentError) << bad;
  }
}

// A results file has GEMM lines an untuned file would read as keys to tune: refused whole, by
// its Validator lines.
TEST(UntunedFile, AResultsFileIsRefused) {
  const std::string results = format_results_file({{"PT_VERSION", "2.5.0"}}, {});
  try {
    (void)parse_untuned_file(results + "GemmTunableOp_float_NN,nn_32_32_32_ld_32_32_32,Default,0.01\n");
    FAIL() << "read a results file as an untuned one";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("line 1 is a Validator line: this is a results file"), std::string::npos)
        << e.what();
  }
}

// A bad line's problem quotes at most a few hundred bytes of it.
TEST(UntunedFile, ProblemsAreShortWhateverTheLine) {
  const UntunedFileContents c = parse_untuned_file("GemmTunableOp_float_NN,nn_" + std::string(100000, '9') + "\n");
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_LT(c.problems[0].size(), 500u) << c.problems[0].substr(0, 600);
  EXPECT_TRUE(c.problems[0].starts_with("line 1: ")) << c.problems[0].substr(0, 200);
}

TEST(UntunedFile, AFileOfGarbageIsToldInAFewProblems) {
  std::string text;
  for (int i = 0; i < 10000; ++i) text += "garbage\n";
  const UntunedFileContents c = parse_untuned_file(text);
  ASSERT_EQ(c.problems.size(), 21u);
  EXPECT_EQ(c.problems[20], "9980 more lines with problems");
}

// A file torch 2.11's TunableOp wrote (its validators and a signature without cudakit's fields) is
// torch's; a file of cudakit's, or one with both kinds of validators, is not.
TEST(ResultsFile, TellsAFileTorchWrote) {
  const std::string torch_file =
      "Validator,PT_VERSION,2.11.0\nValidator,CUBLASLT_VERSION,130100\nValidator,GCN_ARCH_NAME,Unknown\n"
      "GemmTunableOp_BFloat16_NN,nn_4096_4096_4096_ld_4096_4096_4096,Default,0.2\n";
  const ResultsFileContents torch_contents = parse_results_file(torch_file);
  EXPECT_TRUE(written_by_torch(torch_contents));
  EXPECT_TRUE(torch_contents.results.empty()) << "torch's keys lack cudakit's fields";
  EXPECT_FALSE(written_by_torch(parse_results_file(format_results_file({{"CUDAKIT_VERSION", "0.1.0"}}, {}))));
  EXPECT_FALSE(written_by_torch(
      parse_results_file(format_results_file({{"CUDAKIT_VERSION", "0.1.0"}, {"PT_VERSION", "2.11.0"}}, {}))));
  EXPECT_FALSE(written_by_torch(parse_results_file("")));
}

}  // namespace
}  // namespace cudakit::tunable
