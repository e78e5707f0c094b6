// GPU tier: cuBLAS inside graph capture takes its workspace from the capture's private pool
// (Note [cuBLAS workspaces]), eager matmuls from the caching allocator per (thread, stream), and
// neither leaks: memory statistics return to where they were.

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>

#include "cudakit/core/stream.hpp"
#include "cudakit/core/stream_guard.hpp"
#include "cudakit/graphs/graph_capture.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/tensor/compare.hpp"
#include "cudakit/tensor/cublas_workspace.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/matmul.hpp"
#include "support/gpu_test.hpp"

namespace {

using namespace cudakit;
using tensor::DType;
using tensor::Device;
using tensor::Tensor;

constexpr std::int64_t kM = 256, kK = 512, kN = 384;

std::size_t allocated_now() {
  synchronize();
  return memory::memory_allocated();
}

class MatmulWorkspaceGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    CUDAKIT_REQUIRE_GPU();
    stream_.emplace();
    a_ = tensor::arange(0, kM * kK, 1, {DType::float32, Device::cuda()}, stream_->ref()).view({kM, kK});
    b_ = tensor::full({kK, kN}, 0.5, {DType::float32, Device::cuda()}, stream_->ref());
  }
  void TearDown() override {
    a_ = Tensor();
    b_ = Tensor();
    if (stream_) tensor::clear_cublas_workspaces();
  }
  std::optional<Stream> stream_;
  Tensor a_, b_;
};

TEST_F(MatmulWorkspaceGpu, EagerWorkspaceIsOnePerStreamFromTheCachingAllocator) {
  tensor::clear_cublas_workspaces();
  const std::size_t workspace = tensor::cublas_workspace_size();
  ASSERT_GT(workspace, 0u);
  const std::size_t before = allocated_now();
  Tensor first = tensor::matmul(a_, b_, stream_->ref());
  EXPECT_EQ(allocated_now() - before, first.nbytes() + workspace);
  Tensor second = tensor::matmul(a_, b_, stream_->ref());
  EXPECT_EQ(allocated_now() - before, first.nbytes() + second.nbytes() + workspace)
      << "a second matmul on the same stream reuses the stream's workspace";
  EXPECT_TRUE(tensor::equal(first, second, stream_->ref()));
  tensor::clear_cublas_workspaces();
  EXPECT_EQ(allocated_now() - before, first.nbytes() + second.nbytes());
}

TEST_F(MatmulWorkspaceGpu, CapturedMatmulUsesItsPoolAndReplaysCorrectly) {
  StreamGuard on(*stream_);
  const Tensor eager_before = tensor::matmul(a_, b_);
  const std::size_t before = allocated_now();
  graphs::Graph g;
  Tensor captured;
  {
    graphs::GraphCapture capture(g);
    captured = tensor::matmul(a_, b_);
  }
  auto& allocator = memory::device_allocator();
  // The capture's workspace went back to the private pool when the capture ended: the pool
  // holds it as reserved memory, and only the output stays allocated.
  EXPECT_EQ(allocator.pool_allocated_bytes(g.pool()), captured.nbytes());
  EXPECT_GE(allocator.pool_reserved_bytes(g.pool()), captured.nbytes() + tensor::cublas_workspace_size());
  EXPECT_EQ(allocated_now() - before, captured.nbytes());
  for (double scale : {1.0, 2.0, -3.0}) {
    b_.fill_(0.5 * scale);
    g.replay();
    const Tensor expected = tensor::matmul(a_, b_);
    EXPECT_TRUE(tensor::allclose(captured, expected, 1e-5, 1e-3)) << "replay with b = " << 0.5 * scale;
  }
  const memory::PoolId pool = g.pool();
  captured = Tensor();
  g.reset();
  EXPECT_FALSE(allocator.has_pool(pool));
  EXPECT_EQ(allocated_now(), before);
}

TEST_F(MatmulWorkspaceGpu, FailedCaptureReturnsItsWorkspace) {
  StreamGuard on(*stream_);
  const Tensor warm = tensor::matmul(a_, b_);
  const std::size_t before = allocated_now();
  const std::size_t reserved_before = memory::memory_reserved();
  graphs::Graph g;
  try {
    graphs::GraphCapture capture(g);
    const Tensor product = tensor::matmul(a_, b_);
    throw std::runtime_error("user code failed after a captured matmul");
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "user code failed after a captured matmul");
  }
  EXPECT_EQ(allocated_now(), before);
  EXPECT_EQ(memory::memory_reserved(), reserved_before) << "the capture's pool was released";
}

}  // namespace
