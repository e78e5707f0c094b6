#include "cudakit/nccl/store/rendezvous.hpp"

#include <gtest/gtest.h>

#include "cudakit/nccl/detail/nccl_api.hpp"
#include "cudakit/nccl/data_type.hpp"
#include "cudakit/nccl/version.hpp"
#include "support/expect_refused.hpp"

namespace {

using cudakit::nccl::RendezvousOptions;
using cudakit::testing::expect_refused;
using Environment = std::map<std::string, std::string>;

TEST(Rendezvous, UnsetFieldsComeFromTheTorchrunVariables) {
  const Environment env = {{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "node0"},
                           {"MASTER_PORT", "29500"}};
  const RendezvousOptions r = RendezvousOptions{}.resolved(&env);
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.world_size, 8);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.master_addr, "node0");
  EXPECT_EQ(r.master_port, 29500);
  // Arguments win over variables; LOCAL_RANK defaults to the rank.
  RendezvousOptions given;
  given.rank = 0;
  given.world_size = 2;
  given.store_path = "/shared/rdzv";
  const Environment none;
  const RendezvousOptions g = given.resolved(&none);
  EXPECT_EQ(g.local_rank, 0);
  EXPECT_TRUE(g.master_addr.empty()) << "a file store needs no address";
}

TEST(Rendezvous, MissingOrBadValuesAreNamed) {
  const Environment no_rank = {{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}};
  expect_refused([&] { (void)RendezvousOptions{}.resolved(&no_rank); }, "RANK is not set");
  const Environment bad = {{"RANK", "x1"}, {"WORLD_SIZE", "2"}};
  expect_refused([&] { (void)RendezvousOptions{}.resolved(&bad); }, "RANK='x1' is not a non-negative integer");
  const Environment out = {{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}};
  expect_refused([&] { (void)RendezvousOptions{}.resolved(&out); }, "rank 2 is outside 0..1 (world size 2)");
  const Environment port = {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "70000"}};
  expect_refused([&] { (void)RendezvousOptions{}.resolved(&port); }, "the master port 70000 is outside 1..65535");
  const Environment no_addr = {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "5"}};
  expect_refused([&] { (void)RendezvousOptions{}.resolved(&no_addr); }, "MASTER_ADDR is not set");
}

TEST(NcclVersion, CodesOfBothEras) {
  EXPECT_EQ(cudakit::nccl::version_from_code(22809).str(), "2.28.9");
  EXPECT_EQ(cudakit::nccl::version_from_code(2804).str(), "2.8.4");
  expect_refused([] { (void)cudakit::nccl::version_from_code(0); }, "version code 0 is not positive");
}

TEST(NcclVersion, TheLoadedLibrarysVersionIsTheOneItReports) {
  if (!cudakit::nccl::library_loaded()) {
    EXPECT_THROW((void)cudakit::nccl::version(), cudakit::StateError);
    GTEST_SKIP() << "no libnccl here: " << cudakit::detail::nccl_api().status.reason;
  }
  const auto v = cudakit::nccl::version();
  EXPECT_GE(v.major, 2);
  // The core table read the same number when it loaded the library.
  EXPECT_EQ(v.str().substr(0, cudakit::detail::nccl_api().status.version.size()), cudakit::detail::nccl_api().status.version);
}

TEST(NcclDataType, NamesSizesAndTensorDtypes) {
  using cudakit::nccl::DataType;
  for (int i = 0; i < cudakit::nccl::kDataTypeCount; ++i) {
    const auto t = static_cast<DataType>(i);
    EXPECT_EQ(cudakit::nccl::parse_data_type(cudakit::nccl::data_type_name(t)), t);
  }
  EXPECT_EQ(cudakit::nccl::element_size(DataType::bfloat16), 2u);
  EXPECT_EQ(cudakit::nccl::element_size(DataType::uint64), 8u);
  EXPECT_EQ(cudakit::nccl::data_type_of(cudakit::tensor::DType::bool_), DataType::uint8);
  EXPECT_EQ(cudakit::nccl::data_type_of(cudakit::tensor::DType::int64), DataType::int64);
  EXPECT_FALSE(cudakit::nccl::parse_data_type("complex64"));
}

}  // namespace
