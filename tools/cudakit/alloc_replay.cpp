// `cudakit alloc-replay TRACE [--backend device|host] [--conf ...] [--json]`: replays a recorded
// allocation trace through cudakit's caching allocator, on the GPU or on simulated device memory.
// A PyTorch memory snapshot as TRACE goes to the what-if replays of alloc_replay_snapshot.cpp.

#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "alloc_replay_snapshot.hpp"
#include "command.hpp"
#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/memory/alloc_replay.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/cuda_segment_provider.hpp"
#include "cudakit/memory/host_segment_provider.hpp"
#include "cudakit/memory/snapshot_trace.hpp"
#include "errors.hpp"
#include "nlohmann/json.hpp"

namespace cudakit::cli {
namespace {

using memory::CachingAllocator;

// The replay loop's view of a CachingAllocator.
struct ReplayTarget {
  CachingAllocator& a;
  void* alloc(std::size_t n, memory::StreamKey s) { return a.allocate(n, s); }
  void free(void* p, memory::StreamKey) { a.deallocate(p); }
  void empty_cache() { a.empty_cache(); }
  void reset_peaks() { a.reset_peak_stats(); }
  std::size_t peak_allocated() { return static_cast<std::size_t>(a.stats().allocated_bytes[0].peak); }
  std::size_t peak_reserved() { return static_cast<std::size_t>(a.stats().reserved_bytes[0].peak); }
  std::size_t device_allocations() { return static_cast<std::size_t>(a.stats().num_device_alloc); }
};

// Simulated device memory for --backend host. The least holds a few 2 MiB pages; the most, 1 PiB,
// keeps the byte count and the provider's sums of bytes far from overflowing.
constexpr double kMinHostCapacityGib = 0.01;
constexpr double kMaxHostCapacityGib = 1 << 20;

struct Options {
  std::string trace;
  std::string backend = "device";
  std::string conf;
  bool json = false;
  double host_capacity_gib = 141;  // an H200's
  const CLI::Option* host_capacity_option = nullptr;
  const CLI::Option* backend_option = nullptr;
  int device = 0;
  const CLI::Option* device_option = nullptr;
};

// The allocator options of CUDAKIT_ALLOC_CONF, then --conf over them.
memory::AllocatorConfig allocator_config(const std::string& conf) {
  memory::AllocatorConfig base;
  try {
    base = memory::AllocatorConfig::from_environment();
  } catch (const InvalidArgumentError& e) {
    throw std::runtime_error("CUDAKIT_ALLOC_CONF: " + message_of(e));
  }
  return memory::AllocatorConfig::parse(conf, base);
}

// --conf in CUDAKIT_ALLOC_CONF syntax, checked as the command line is read.
CLI::Validator allocator_options() {
  return CLI::Validator(
      [](std::string& text) {
        try {
          (void)memory::AllocatorConfig::parse(text);
          return std::string();
        } catch (const InvalidArgumentError& e) {
          return "takes allocator options in CUDAKIT_ALLOC_CONF syntax (key:value,...), not '" +
                 text + "': " + message_of(e);
        }
      },
      "KEY:VALUE,...");
}

int run(const Options& o) {
  const auto given = [](const CLI::Option* option) { return option->count() > 0; };
  if (memory::looks_like_snapshot(o.trace)) {
    return run_snapshot_replay(
        {o.trace, o.conf, o.json, given(o.host_capacity_option) ? std::optional(o.host_capacity_gib) : std::nullopt,
         given(o.device_option) ? std::optional(o.device) : std::nullopt,
         given(o.backend_option) ? std::optional(o.backend) : std::nullopt});
  }
  if (given(o.device_option)) throw UsageError("--device picks a device of a snapshot; a CSV trace has one");
  if (o.host_capacity_option->count() > 0 && o.backend != "host") {
    throw UsageError("--host-capacity-gib sizes the simulated memory of --backend host; with --backend " +
                     o.backend + " it would be ignored");
  }
  const memory::AllocatorConfig config = allocator_config(o.conf);
  if (o.backend == "device" && !is_available()) {
    throw std::runtime_error("no CUDA device; use --backend host to replay on simulated memory");
  }
  const memory::AllocTrace trace = memory::load_alloc_trace(o.trace);
  std::unique_ptr<CachingAllocator> allocator;
  std::vector<memory::StreamKey> streams;
  std::vector<Stream> owned_streams;
  if (o.backend == "host") {
    allocator = std::make_unique<CachingAllocator>(
        -1, std::make_shared<memory::HostSegmentProvider>(static_cast<std::size_t>(o.host_capacity_gib * (1ull << 30))),
        std::make_shared<memory::HostStreamEvents>(), config);
    for (std::uint32_t i = 0; i < std::max(trace.num_streams, 1u); ++i) streams.push_back(i + 1);
  } else {
    allocator = std::make_unique<CachingAllocator>(0, std::make_shared<memory::CudaSegmentProvider>(0),
                                                   std::make_shared<memory::CudaStreamEvents>(0), config);
    for (std::uint32_t i = 0; i < std::max(trace.num_streams, 1u); ++i) {
      owned_streams.emplace_back(0);
      streams.push_back(reinterpret_cast<memory::StreamKey>(owned_streams.back().handle()));
    }
  }
  ReplayTarget target{*allocator};
  const memory::ReplayResult r = memory::replay_alloc_trace(target, trace, streams);
  const std::int64_t reuses = allocator->stats().num_cross_stream_reuses;
  if (o.json) {
    nlohmann::json j = {{"ns_per_op", r.ns_per_op},
                        {"peak_allocated_bytes", r.peak_allocated},
                        {"peak_reserved_bytes", r.peak_reserved},
                        {"peak_requested_bytes", trace.peak_requested_bytes},
                        {"device_allocations", r.device_allocations},
                        {"cross_stream_reuses", reuses},
                        {"ops", trace.ops.size()},
                        {"backend", o.backend},
                        {"config", config.to_string()}};
    std::cout << j.dump() << "\n";
  } else {
    std::cout << "trace " << o.trace << ": " << trace.ops.size() << " ops, " << trace.num_streams
              << " stream(s), backend " << o.backend << ", config " << config.to_string() << "\n"
              << "  " << r.ns_per_op << " ns/op\n"
              << "  peak allocated " << r.peak_allocated / 1048576.0 << " MiB (requested "
              << trace.peak_requested_bytes / 1048576.0 << " MiB)\n"
              << "  peak reserved  " << r.peak_reserved / 1048576.0 << " MiB = "
              << static_cast<double>(r.peak_reserved) / static_cast<double>(std::max<std::size_t>(r.peak_allocated, 1))
              << " x peak allocated\n"
              << "  memory obtained from the driver in " << r.device_allocations << " call(s)\n"
              << "  " << reuses << " request(s) served by memory another stream had freed\n";
  }
  return 0;
}

const RegisterCommand kAllocReplay(
    "alloc-replay",
    "replay an allocation trace through the caching allocator, or a PyTorch memory snapshot under "
    "four allocators (what-if)",
    [](CLI::App& app) -> std::function<int()> {
      auto o = std::make_shared<Options>();
      app.add_option("TRACE", o->trace,
                     "trace file (.csv or .csv.gz), or a snapshot of torch.cuda.memory._dump_snapshot "
                     "(pickle) or its JSON form")
          ->required()
          ->check(readable_file());
      o->backend_option = app.add_option("--backend", o->backend, "device (the GPU) or host (simulated device memory)")
          ->capture_default_str()
          ->check(one_of({"device", "host"}));
      app.add_option("--conf", o->conf, "allocator options, CUDAKIT_ALLOC_CONF syntax")
          ->check(allocator_options());
      o->host_capacity_option =
          app.add_option("--host-capacity-gib", o->host_capacity_gib,
                         "simulated device memory for --backend host; for a snapshot, the "
                         "device size each allocator must fit in")
              ->capture_default_str()
              ->check(number_in("a size in GiB", kMinHostCapacityGib, kMaxHostCapacityGib));
      o->device_option = app.add_option("--device", o->device,
                                        "snapshots: replay this device's trace only (default: every "
                                        "device with entries)")
                             ->transform(integer_in("a device index", 0, 1023));
      app.add_flag("--json", o->json, "print one JSON object");
      return [o] { return run(*o); };
    });

}  // namespace
}  // namespace cudakit::cli
