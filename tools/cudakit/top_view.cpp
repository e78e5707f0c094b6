#include "top_view.hpp"

#include <cstdio>
#include <optional>

namespace cudakit::cli {
namespace {

std::string gib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return text;
}

// "37%", "-" where the device does not report it.
std::string or_dash(const std::optional<unsigned int>& value, const char* format) {
  if (!value) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, *value);
  return text;
}

std::string watts(const DeviceTelemetry& d) {
  if (!d.power_draw) return "-";
  char text[48];
  if (d.power_limit) std::snprintf(text, sizeof text, "%u/%u W", *d.power_draw / 1000, *d.power_limit / 1000);
  else std::snprintf(text, sizeof text, "%u W", *d.power_draw / 1000);
  return text;
}

std::string clocks(const DeviceTelemetry& d) {
  if (!d.clock_rate) return "-";
  char text[48];
  if (d.clock_rate_max) std::snprintf(text, sizeof text, "%u/%u MHz", *d.clock_rate, *d.clock_rate_max);
  else std::snprintf(text, sizeof text, "%u MHz", *d.clock_rate);
  return text;
}

template <class T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

MemorySplit split_memory(const DeviceTelemetry& device) {
  MemorySplit split;
  for (const GpuProcess& p : device.processes) {
    if (p.uses_cudakit.value_or(false) && p.used_memory) split.cudakit += *p.used_memory;
  }
  // NVML's per-process figures and the device's "used" are read at slightly different moments:
  // never report a negative remainder.
  split.others = device.memory_used > split.cudakit ? device.memory_used - split.cudakit : 0;
  return split;
}

std::string render_top(const TopSnapshot& snapshot) {
  std::string out = "cudakit top  " + snapshot.taken_at + "\n";
  if (snapshot.devices.empty()) return out + "no GPU: NVML lists no device\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-4s %-4s %-22s %5s %6s %5s %13s %15s %21s %10s %10s\n", "GPU",
                "CUDA", "NAME", "UTIL", "MEMBUS", "TEMP", "POWER", "SM CLOCK", "MEMORY USED/TOTAL",
                "CUDAKIT", "OTHERS");
  out += line;
  for (const DeviceTelemetry& d : snapshot.devices) {
    const MemorySplit split = split_memory(d);
    const std::string cuda = d.cuda_ordinal < 0 ? "-" : std::to_string(d.cuda_ordinal);
    const std::string memory = gib(d.memory_used) + " / " + gib(d.memory_total);
    std::snprintf(line, sizeof line, "%-4u %-4s %-22.22s %5s %6s %5s %13s %15s %21s %10s %10s\n",
                  d.nvml_index, cuda.c_str(), d.name.c_str(), or_dash(d.utilization, "%u%%").c_str(),
                  or_dash(d.memory_usage, "%u%%").c_str(), or_dash(d.temperature, "%uC").c_str(),
                  watts(d).c_str(), clocks(d).c_str(), memory.c_str(), gib(split.cudakit).c_str(),
                  gib(split.others).c_str());
    out += line;
    for (const GpuProcess& p : d.processes) {
      const char* kind = !p.uses_cudakit ? "unknown" : *p.uses_cudakit ? "cudakit" : "other";
      const std::string used = p.used_memory ? gib(*p.used_memory) : std::string("?");
      std::snprintf(line, sizeof line, "     pid %-8u %-8s %10s  %s\n", p.pid, kind, used.c_str(),
                    p.name.empty() ? "?" : p.name.c_str());
      out += line;
    }
  }
  return out;
}

nlohmann::json top_json(const TopSnapshot& snapshot) {
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceTelemetry& d : snapshot.devices) {
    const MemorySplit split = split_memory(d);
    nlohmann::json processes = nlohmann::json::array();
    for (const GpuProcess& p : d.processes) {
      processes.push_back({{"pid", p.pid},
                           {"name", p.name},
                           {"used_memory", or_null(p.used_memory)},
                           {"uses_cudakit", or_null(p.uses_cudakit)}});
    }
    devices.push_back({
        {"nvml_index", d.nvml_index},
        {"cuda_ordinal", d.cuda_ordinal < 0 ? nlohmann::json(nullptr) : nlohmann::json(d.cuda_ordinal)},
        {"uuid", d.uuid},
        {"name", d.name},
        {"memory", {{"total", d.memory_total}, {"used", d.memory_used}, {"cudakit", split.cudakit},
                    {"others", split.others}}},
        {"utilization", or_null(d.utilization)},
        {"memory_usage", or_null(d.memory_usage)},
        {"temperature", or_null(d.temperature)},
        {"power_draw_mw", or_null(d.power_draw)},
        {"power_limit_mw", or_null(d.power_limit)},
        {"clock_rate_mhz", or_null(d.clock_rate)},
        {"clock_rate_max_mhz", or_null(d.clock_rate_max)},
        {"memory_clock_rate_mhz", or_null(d.memory_clock_rate)},
        {"processes", std::move(processes)},
    });
  }
  return {{"time", snapshot.taken_at}, {"devices", std::move(devices)}};
}

}  // namespace cudakit::cli
