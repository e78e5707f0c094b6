// GPU tier of green contexts: partitions as granted, kernels that run on their SMs only,
// disjoint splits, streams, the scope and torch's set_context / pop_context.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/green_context.hpp"
#include "support/gpu_test.hpp"

namespace cudakit {
namespace {

// Each block spins a little (so that blocks spread over every SM they may use) and records the
// SM it ran on.
__global__ void record_sm_ids(unsigned* ids) {
  unsigned sm = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  const long long start = clock64();
  while (clock64() - start < 200000) {
  }
  if (threadIdx.x == 0) ids[blockIdx.x] = sm;
}

std::set<unsigned> sms_used(StreamRef stream, int blocks = 2048) {
  unsigned* ids = nullptr;
  EXPECT_EQ(cudaMalloc(&ids, blocks * sizeof(unsigned)), cudaSuccess);
  record_sm_ids<<<blocks, 128, 0, stream.handle()>>>(ids);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<unsigned> host(static_cast<std::size_t>(blocks));
  EXPECT_EQ(cudaStreamSynchronize(stream.handle()), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(host.data(), ids, host.size() * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(ids);
  return {host.begin(), host.end()};
}

TEST(GreenContextGpu, CreateGrantsTheRoundedCountAndKernelsStayOnIt) {
  CUDAKIT_REQUIRE_GPU();
  const SmResourceInfo device = GreenContext::device_resource(0);
  ASSERT_GT(device.min_partition, 0u);
  ASSERT_GT(device.alignment, 0u);
  const unsigned request = device.min_partition + 1;  // never a multiple: rounding must happen
  GreenContext context = GreenContext::create(request, 0);
  EXPECT_EQ(context.requested_sm_count(), request);
  EXPECT_EQ(context.sm_count(), granted_sm_count(device, request));
  EXPECT_EQ(sm_count_of(context.stream()), context.sm_count());
  const std::set<unsigned> used = sms_used(context.stream());
  EXPECT_LE(used.size(), context.sm_count());
  std::printf("device: %u SMs (min %u, alignment %u); %u requested, %u granted, kernel used %zu\n",
              device.sm_count, device.min_partition, device.alignment, request, context.sm_count(), used.size());
  int whole = 0;
  cudaDeviceGetAttribute(&whole, cudaDevAttrMultiProcessorCount, 0);
  EXPECT_EQ(sm_count_of(StreamRef(nullptr, 0)), static_cast<unsigned>(whole));
}

TEST(GreenContextGpu, SplitGivesDisjointPartitions) {
  CUDAKIT_REQUIRE_GPU();
  const SmResourceInfo device = GreenContext::device_resource(0);
  const unsigned unit = granted_sm_count(device, 16);
  const std::vector<unsigned> counts{unit, 2 * unit};
  std::vector<GreenContext> parts = GreenContext::split(0, counts);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_GE(parts[0].sm_count(), unit);
  EXPECT_GE(parts[1].sm_count(), 2 * unit);
  const std::set<unsigned> a = sms_used(parts[0].stream());
  const std::set<unsigned> b = sms_used(parts[1].stream());
  EXPECT_LE(a.size(), parts[0].sm_count());
  EXPECT_LE(b.size(), parts[1].sm_count());
  std::vector<unsigned> shared;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(shared));
  EXPECT_TRUE(shared.empty()) << shared.size() << " SMs ran work of both partitions";
  EXPECT_THROW((void)GreenContext::split(0, std::vector<unsigned>{device.sm_count, device.sm_count}), InvalidArgumentError);
}

TEST(GreenContextGpu, ScopeAndLegacyNamesSetTheCurrentStream) {
  CUDAKIT_REQUIRE_GPU();
  GreenContext context = GreenContext::create(16, 0);
  const StreamRef before = current_stream(0);
  {
    GreenContextScope scope(context);
    EXPECT_EQ(current_stream(0), context.stream());
    EXPECT_LE(sms_used(current_stream(0)).size(), context.sm_count());
  }
  EXPECT_EQ(current_stream(0), before);
  context.set_context();
  EXPECT_EQ(current_stream(0), context.stream());
  context.pop_context();
  EXPECT_EQ(current_stream(0), before);
  EXPECT_THROW(context.pop_context(), StateError);
  const StreamRef extra = context.create_stream(0);
  EXPECT_EQ(sm_count_of(extra), context.sm_count());
  GreenContext moved = std::move(context);
  EXPECT_THROW((void)context.sm_count(), StateError);
  EXPECT_EQ(moved.sm_count(), sm_count_of(moved.stream()));
}

TEST(GreenContextGpu, WorkqueueConfigurationSaysUnsupported) {
  CUDAKIT_REQUIRE_GPU();
  try {
    (void)GreenContext::create(16, 0, WorkqueueConfig{4, true});
    ADD_FAILURE() << "accepted a workqueue configuration";
  } catch (const StateError& error) {
    EXPECT_NE(std::string(error.what()).find("unsupported by this driver"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace cudakit
