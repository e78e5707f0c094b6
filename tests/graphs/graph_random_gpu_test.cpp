// GPU tier: random numbers drawn inside a GraphCapture are fresh on every replay and equal to
// what the same draws give eagerly (through the random layer's CaptureHook), from the default
// generator and from a program's own generator registered with the graph.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/graphs/graph.hpp"
#include "cudakit/graphs/graph_capture.hpp"
#include "cudakit/random/default_generators.hpp"
#include "cudakit/random/distributions.hpp"
#include "cudakit/random/generator.hpp"
#include "cudakit/core/error.hpp"
#include "support/gpu_test.hpp"

namespace cudakit {
namespace {

constexpr std::int64_t kN = (1 << 20) + 3;

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Three replays of `g`, each leaving its draw in `out`: fresh every time, and the same as three
// eager draws made by `eager` in turn.
template <class EagerDraw>
void expect_replays_draw_as_eager_draws(graphs::Graph& g, const tensor::Tensor& out, EagerDraw&& eager) {
  Stream s;
  std::vector<std::vector<float>> replayed;
  for (int i = 0; i < 3; ++i) {
    g.replay(s);
    replayed.push_back(out.to_vector<float>(StreamRef(s)));
  }
  EXPECT_FALSE(same_bits(replayed[0], replayed[1])) << "a replay repeated the previous draw";
  EXPECT_FALSE(same_bits(replayed[1], replayed[2]));
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(same_bits(replayed[i], eager().template to_vector<float>())) << "replay " << i << " differs from eager draw " << i;
  }
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
  // The eager draws start where the capture started.
  bool seeded = false;
  expect_replays_draw_as_eager_draws(g, out, [&] {
    if (!std::exchange(seeded, true)) random::manual_seed(1234);
    return random::randn({kN}, on_gpu);
  });
}

// A generator of the program's own (per request, for dropout), registered with the graph:
// its replays draw fresh numbers too, the same as eager draws from an equal generator, and the
// default generator is left as it was (torch's CUDAGraph.register_generator_state).
TEST(GraphRandomGpu, ARegisteredGeneratorDrawsFreshNumbersOnEachReplay) {
  CUDAKIT_REQUIRE_GPU();
  const tensor::TensorOptions on_gpu{tensor::DType::float32, tensor::Device::cuda()};
  random::Generator own(tensor::Device::cuda(), 99);
  const std::uint64_t default_offset = random::default_cuda_generator().offset();
  graphs::Graph g;
  g.register_generator_state(own);
  g.register_generator_state(own);  // once is enough; twice is the same
  tensor::Tensor out;
  {
    graphs::GraphCapture capture(g);
    out = random::randn({kN}, on_gpu, &own);
  }
  random::Generator equal(tensor::Device::cuda(), 99);
  expect_replays_draw_as_eager_draws(g, out, [&] { return random::randn({kN}, on_gpu, &equal); });
  EXPECT_EQ(random::default_cuda_generator().offset(), default_offset) << "the default generator drew";
  // After the capture, a registration comes too late to take part.
  random::Generator late(tensor::Device::cuda(), 5);
  EXPECT_THROW(g.register_generator_state(late), StateError);
  // The device's default generator is carried by every capture already: registering it is a no-op.
  EXPECT_EQ(random::default_cuda_generator().capture_state(), nullptr);
  random::Generator host(tensor::Device::cpu());
  EXPECT_THROW(g.register_generator_state(host), InvalidArgumentError);
}

// Without registration, a draw from a program's generator during a capture is refused: its
// replays would repeat the same numbers.
TEST(GraphRandomGpu, AnUnregisteredGeneratorIsRefusedDuringCapture) {
  CUDAKIT_REQUIRE_GPU();
  const tensor::TensorOptions on_gpu{tensor::DType::float32, tensor::Device::cuda()};
  random::Generator own(tensor::Device::cuda(), 7);
  graphs::Graph g;
  auto draw_in_capture = [&] {
    graphs::GraphCapture capture(g);
    (void)random::randn({16}, on_gpu, &own);
  };
  EXPECT_THROW(draw_in_capture(), StateError);
  EXPECT_FALSE(own.is_capturing());
}

}  // namespace
}  // namespace cudakit
