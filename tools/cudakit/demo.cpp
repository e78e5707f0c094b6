// `cudakit demo`: the main job. At this stage: `info`, then a stream/event exercise on the GPU.

#include <cstdint>
#include <iostream>
#include <vector>

#include "command.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/stream_guard.hpp"
#include "errors.hpp"
#include "info.hpp"
#include "../../examples/graph_annotations.hpp"

namespace cudakit::cli {
namespace {

// Two streams ordered by an event: a producer fills a buffer, a consumer copies it back after
// waiting on the producer's event; timing events measure the producer's work.
int run_stream_event_exercise() {
  constexpr std::size_t kBytes = 256u << 20;
  Stream producer, consumer;
  void* buffer = nullptr;
  CUDAKIT_CHECK_CUDA(cudaMalloc(&buffer, kBytes));
  std::vector<std::uint8_t> host(kBytes);
  Event start(EventFlags{.enable_timing = true}), stop(EventFlags{.enable_timing = true});
  Event filled;
  {
    StreamGuard on(producer);
    start.record();
    CUDAKIT_CHECK_CUDA(cudaMemsetAsync(buffer, 0x5a, kBytes, producer.handle()));
    stop.record();
    filled.record();
  }
  filled.wait(consumer);
  CUDAKIT_CHECK_CUDA(
      cudaMemcpyAsync(host.data(), buffer, kBytes, cudaMemcpyDeviceToHost, consumer.handle()));
  consumer.synchronize();
  stop.synchronize();
  std::size_t wrong = 0;
  for (std::uint8_t b : host) wrong += b != 0x5a;
  CUDAKIT_CHECK_CUDA(cudaFree(buffer));
  const float ms = start.elapsed_time(stop);
  std::cout << "\nStream/event exercise on device " << current_device() << ": filled "
            << (kBytes >> 20) << " MiB on stream " << producer.id() << " in " << ms << " ms ("
            << kBytes / (ms * 1e-3) / 1e9 << " GB/s), copied back on stream " << consumer.id()
            << " after an event wait: " << (wrong == 0 ? "all bytes correct" : "WRONG BYTES")
            << "\n";
  return wrong == 0 ? 0 : 1;
}

const RegisterCommand kDemo(
    "demo", "info, a stream/event exercise, then the seed's graph-annotation workflow",
    [](CLI::App& app) -> std::function<int()> {
      auto out_dir = std::make_shared<std::string>("cudakit-demo");
      app.add_option("-o,--out", *out_dir, "folder for trace.json, annotations.json, trace_annotated.json")
          ->capture_default_str()
          ->check(folder());
      return [out_dir] {
        print_info(std::cout);
        if (!is_available()) {
          std::cout << "\nNo CUDA device: the GPU part of the demo is skipped.\n";
          return 0;
        }
        const int streams = run_stream_event_exercise();
        std::cout << "\n";
        return examples::run_graph_annotations(*out_dir, std::cout) | streams;
      };
    });
}  // namespace
}  // namespace cudakit::cli
