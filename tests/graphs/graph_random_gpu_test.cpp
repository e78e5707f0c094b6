// GPU tier: random numbers drawn inside a GraphCapture are fresh on every replay and equal to
// what the same draws give eagerly (through the random layer's CaptureHook).

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/graphs/graph.hpp"
#include "cudakit/graphs/graph_capture.hpp"
#include "cudakit/random/default_generators.hpp"
#include "cudakit/random/distributions.hpp"
#include "support/gpu_test.hpp"

namespace cudakit {
namespace {

constexpr std::int64_t kN = (1 << 20) + 3;

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(GraphRandomGpu, ReplaysDrawFreshNumbersEqualToEagerDraws) {
  CUDAKIT_REQUIRE_GPU();
  const tensor::TensorOptions on_gpu{tensor::DType::float32, tensor::Device::cuda()};
  random::manual_seed(1234);
  graphs::Graph g;
  tensor::Tensor out;
  {
    graphs::GraphCapture capture(g);
    out = random::randn({kN}, on_gpu);
  }
  Stream s;
  std::vector<std::vector<float>> replayed;
  for (int i = 0; i < 3; ++i) {
    g.replay(s);
    replayed.push_back(out.to_vector<float>(StreamRef(s)));
  }
  EXPECT_FALSE(same_bits(replayed[0], replayed[1])) << "a replay repeated the previous draw";
  EXPECT_FALSE(same_bits(replayed[1], replayed[2]));
  random::manual_seed(1234);
  for (int i = 0; i < 3; ++i) {
    const std::vector<float> eager = random::randn({kN}, on_gpu).to_vector<float>();
    EXPECT_TRUE(same_bits(replayed[i], eager)) << "replay " << i << " differs from eager draw " << i;
  }
}

}  // namespace
}  // namespace cudakit
