// `cudakit alloc-replay TRACE [--backend device|host] [--conf ...] [--json]`: replays a recorded
// allocation trace through cudakit's caching allocator, on the GPU or on simulated device memory.
// A PyTorch memory snapshot as TRACE goes to the what-if replays of alloc_replay_snapshot.cpp.

#include <cstring>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "alloc_replay_snapshot.hpp"
#include "command.hpp"
#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/detail/outside_input.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/memory/alloc_replay.hpp"
#include "cudakit/memory/caching_allocator_replay_target.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/cuda_segment_provider.hpp"
#include "cudakit/memory/host_segment_provider.hpp"
#include "cudakit/memory/snapshot_trace.hpp"
#include "errors.hpp"
#include "nlohmann/json.hpp"

namespace cudakit::cli {
namespace {

using memory::CachingAllocator;

// Simulated device memory for --backend host. The least holds a few 2 MiB pages. The most is what
// the address space holds: the caching allocator reserves the whole capacity as address space
// once per stream of the trace, and x86-64 gives a process 128 TiB, so 16 TiB leaves room for
// seven streams (more fail with a message saying so; notes/hostile-input.md).
constexpr double kMinHostCapacityGib = 0.01;
constexpr double kMaxHostCapacityGib = 16384;

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

// The allocator options of CUDAKIT_ALLOC_CONF, then --conf over them. The replay is always of
// cudakit's caching allocator, so a `backend` key naming another is refused rather than ignored.
memory::AllocatorConfig allocator_config(const std::string& conf) {
  memory::AllocatorConfig base;
  try {
    base = memory::AllocatorConfig::from_environment();
  } catch (const InvalidArgumentError& e) {
    throw std::runtime_error(std::string("CUDAKIT_ALLOC_CONF: ") + e.what());
  }
  if (base.backend != memory::AllocatorConfig::Backend::native) {
    throw std::runtime_error("CUDAKIT_ALLOC_CONF selects another allocator backend (" + base.to_string() +
                             "); alloc-replay replays cudakit's caching allocator: unset it");
  }
  const memory::AllocatorConfig config = memory::AllocatorConfig::parse(conf, base);
  if (config.backend != memory::AllocatorConfig::Backend::native) {
    throw UsageError("--conf '" + conf + "' selects another allocator backend; alloc-replay replays " +
                     "cudakit's caching allocator (--backend device|host says on what memory): drop the " +
                     "backend key");
  }
  return config;
}

// --conf in CUDAKIT_ALLOC_CONF syntax, checked as the command line is read.
CLI::Validator allocator_options() {
  return CLI::Validator(
      [](std::string& text) {
        try {
          (void)memory::AllocatorConfig::parse(text);
          return std::string();
        } catch (const InvalidArgumentError& e) {
          return "takes allocator options in CUDAKIT_ALLOC_CONF syntax (key:value,...), not " +
                 cudakit::detail::quote_input(text) + ": " + e.what();
        }
      },
      "KEY:VALUE,...");
}

// "4294967296 bytes (4 GiB)", "1024 bytes (1 KiB)".
std::string bytes_in_words(std::uint64_t bytes) {
  constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  std::ostringstream out;
  out << bytes << " bytes";
  if (unit > 0) out << " (" << std::setprecision(3) << value << " " << kUnits[unit] << ")";
  return out.str();
}

// "141", "0.5".
std::string gib(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// An allocation the replay could not make, told with the trace line that asked for it and, for
// the simulated memory, whether the capacity or the system's address space ran out.
[[noreturn]] void refuse_allocation(const Options& o, const memory::AllocatorConfig& config,
                                    const memory::AllocTraceReader& reader, std::uint64_t line,
                                    const OutOfMemoryError& e, const memory::HostSegmentProvider* host) {
  const std::string where = o.trace + ":" + std::to_string(line) + ": allocating " +
                            bytes_in_words(e.requested_bytes());
  if (host == nullptr) {
    std::string report = e.what();
    // The report's advice to turn on expandable segments, when the replay has them on already.
    constexpr std::string_view kAdvice = " If reserved but unallocated memory is large, try expandable_segments:True";
    if (const auto at = report.find(kAdvice); config.expandable_segments && at != std::string::npos) {
      const auto end = report.find("empty_cache().", at);
      report.erase(at, end == std::string::npos ? std::string::npos : end + 14 - at);
    }
    throw std::runtime_error(where + " failed: " + report);
  }
  if (const int refusal = host->system_refusal(); refusal != 0) {
    throw std::runtime_error(
        where + " failed: the system refused address space for the simulated memory (" +
        std::strerror(refusal) + "): each of the trace's streams (" + std::to_string(reader.num_streams()) +
        " so far) reserves --host-capacity-gib (" + gib(o.host_capacity_gib) +
        " GiB) of it; lower --host-capacity-gib, or raise the limit `ulimit -v` sets");
  }
  throw std::runtime_error(where + " does not fit in the simulated device memory of " +
                           gib(o.host_capacity_gib) + " GiB (--host-capacity-gib)");
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
  // The trace is streamed (See Note [Reading traces]): memory stays bounded however long it is.
  memory::AllocTraceReader reader(o.trace);
  std::unique_ptr<CachingAllocator> allocator;
  std::shared_ptr<memory::HostSegmentProvider> host;
  std::vector<Stream> owned_streams;
  // Trace stream i replays on stream_for(i); the device's streams are made as the trace names them.
  std::function<memory::StreamKey(std::uint32_t)> stream_for;
  if (o.backend == "host") {
    host = std::make_shared<memory::HostSegmentProvider>(static_cast<std::size_t>(o.host_capacity_gib * (1ull << 30)));
    allocator = std::make_unique<CachingAllocator>(-1, host, std::make_shared<memory::HostStreamEvents>(), config);
    stream_for = [](std::uint32_t i) { return static_cast<memory::StreamKey>(i + 1); };
  } else {
    allocator = std::make_unique<CachingAllocator>(0, std::make_shared<memory::CudaSegmentProvider>(0),
                                                   std::make_shared<memory::CudaStreamEvents>(0), config);
    stream_for = [&owned_streams](std::uint32_t i) {
      while (owned_streams.size() <= i) owned_streams.emplace_back(0);
      return reinterpret_cast<memory::StreamKey>(owned_streams[i].handle());
    };
  }
  memory::CachingAllocatorReplayTarget target{*allocator};
  std::uint64_t failed_line = 0;
  memory::ReplayResult r;
  try {
    r = memory::replay_alloc_trace(target, reader, stream_for, &failed_line);
  } catch (const OutOfMemoryError& e) {
    refuse_allocation(o, config, reader, failed_line, e, host.get());
  }
  if (r.ops == 0) throw std::runtime_error(o.trace + " holds no allocation or free (an empty trace, or a header alone)");
  const std::int64_t reuses = allocator->stats().num_cross_stream_reuses;
  if (o.json) {
    nlohmann::json j = {{"ns_per_op", r.ns_per_op},
                        {"peak_allocated_bytes", r.peak_allocated},
                        {"peak_reserved_bytes", r.peak_reserved},
                        {"peak_requested_bytes", reader.peak_requested_bytes()},
                        {"device_allocations", r.device_allocations},
                        {"cross_stream_reuses", reuses},
                        {"ops", r.ops},
                        {"backend", o.backend},
                        {"config", config.to_string()}};
    std::cout << j.dump() << "\n";
  } else {
    std::cout << "trace " << o.trace << ": " << r.ops << " ops, " << reader.num_streams()
              << " stream(s), backend " << o.backend << ", config " << config.to_string() << "\n"
              << "  " << r.ns_per_op << " ns/op\n"
              << "  peak allocated " << r.peak_allocated / 1048576.0 << " MiB (requested "
              << reader.peak_requested_bytes() / 1048576.0 << " MiB)\n"
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
