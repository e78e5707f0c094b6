// Host tier: CUBLAS_WORKSPACE_CONFIG parsing (torch's format) and its errors.

#include <gtest/gtest.h>

#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/tensor/cublas_workspace.hpp"

namespace {

using cudakit::tensor::parse_cublas_workspace_config;

TEST(CublasWorkspaceConfig, SumsSizeTimesCountInKiB) {
  EXPECT_EQ(parse_cublas_workspace_config(":4096:8"), std::size_t{32} << 20);
  EXPECT_EQ(parse_cublas_workspace_config(":4096:2:16:8"), (std::size_t{8} << 20) + (std::size_t{128} << 10));
  EXPECT_EQ(parse_cublas_workspace_config(":0:0"), 0u);
  EXPECT_EQ(parse_cublas_workspace_config(":1:1"), 1024u);
}

TEST(CublasWorkspaceConfig, BadTextNamesTheValueAndTheFault) {
  for (const char* bad : {"", "4096:8", ":4096", ":4096:", ":x:8", ":4096:8:", ":-1:2", ":4096:8junk",
                          ":1099511627776:2"}) {
    try {
      (void)parse_cublas_workspace_config(bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const cudakit::InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("CUBLAS_WORKSPACE_CONFIG=\"") + bad + "\""), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
