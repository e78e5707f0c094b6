// torch.cuda.comm's helpers: on one GPU (and on every GPU there is).

#include "cudakit/nccl/comm.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/nccl/version.hpp"
#include "cudakit/tensor/factories.hpp"
#include "nccl/require_nccl.hpp"

namespace {

using cudakit::tensor::Device;
using cudakit::tensor::DType;
using cudakit::tensor::Tensor;
namespace comm = cudakit::nccl::comm;

std::vector<int> all_devices() {
  std::vector<int> d(static_cast<std::size_t>(cudakit::device_count()));
  std::iota(d.begin(), d.end(), 0);
  return d;
}

Tensor rows(std::int64_t n, std::int64_t width, double scale, int device) {
  std::vector<float> v(static_cast<std::size_t>(n * width));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(scale * (i + 1));
  return cudakit::tensor::from_host(v, {n, width}).to(Device::cuda(device));
}

TEST(NcclComm, BroadcastPutsTheTensorOnEveryDevice) {
  CUDAKIT_REQUIRE_NCCL();
  const Tensor t = rows(5, 3, 1.0, 0);
  const auto devices = all_devices();
  const auto copies = comm::broadcast(t, devices);
  ASSERT_EQ(copies.size(), devices.size());
  for (std::size_t i = 0; i < copies.size(); ++i) {
    EXPECT_EQ(copies[i].device(), Device::cuda(devices[i]));
    EXPECT_EQ(copies[i].to_vector<float>(), t.to_vector<float>());
  }
  const Tensor list[] = {t, rows(2, 2, 3.0, 0)};
  const auto coalesced = comm::broadcast_coalesced(list, devices);
  ASSERT_EQ(coalesced.size(), 2u);
  EXPECT_EQ(coalesced[1].back().to_vector<float>(), list[1].to_vector<float>());
}

TEST(NcclComm, ReduceAddSumsOneTensorPerDevice) {
  CUDAKIT_REQUIRE_NCCL();
  std::vector<Tensor> inputs;
  for (int d : all_devices()) inputs.push_back(rows(4, 4, d + 1.0, d));
  const Tensor sum = comm::reduce_add(inputs, 0);
  const double factor = inputs.size() * (inputs.size() + 1) / 2.0;
  const auto got = sum.to_vector<float>();
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_FLOAT_EQ(got[i], static_cast<float>(factor * (i + 1)));
  const std::vector<std::vector<Tensor>> per_device = {inputs};
  EXPECT_EQ(comm::reduce_add_coalesced(per_device, 0).size(), inputs.size()) << "one list of tensors per device";
  const Tensor mismatched[] = {rows(4, 4, 1.0, 0), rows(4, 4, 1.0, 0)};
  EXPECT_THROW((void)comm::reduce_add(mismatched), cudakit::InvalidArgumentError) << "two tensors on one device";
}

TEST(NcclComm, ScatterAndGatherAreInverse) {
  CUDAKIT_REQUIRE_NCCL();
  const auto devices = all_devices();
  const Tensor t = rows(7, 3, 1.0, 0);
  const auto pieces = comm::scatter(t, devices);
  ASSERT_EQ(pieces.size(), devices.size());
  std::int64_t total = 0;
  for (const Tensor& p : pieces) total += p.size(0);
  EXPECT_EQ(total, 7);
  EXPECT_EQ(comm::gather(pieces, 0).to_vector<float>(), t.to_vector<float>());
  const std::vector<std::int64_t> sizes(devices.size() - 1, 0);
  std::vector<std::int64_t> explicit_sizes = sizes;
  explicit_sizes.push_back(7);
  EXPECT_EQ(comm::scatter(t, devices, explicit_sizes).back().size(0), 7);
  explicit_sizes.back() = 6;
  try {
    (void)comm::scatter(t, devices, explicit_sizes);
    FAIL();
  } catch (const cudakit::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("the chunk sizes add up to 6, the tensor has 7 rows"), std::string::npos) << e.what();
  }
  const Tensor ragged[] = {rows(2, 3, 1.0, 0), rows(2, 4, 1.0, 0)};
  EXPECT_THROW((void)comm::gather(ragged, 0), cudakit::InvalidArgumentError);
}

}  // namespace
