#include "cudakit/core/telemetry.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

#include "core/detail/nvml_session.hpp"
#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/nvml_error.hpp"

namespace cudakit {
namespace {

using detail::check_nvml;
using detail::concat;
using detail::NvmlApi;
using detail::require_nvml;

// The NVML handle of one CUDA ordinal, or why there is none.
struct MappedDevice {
  detail::nvmlDevice_t handle = nullptr;
  std::string uuid;
  std::string error;
};

// See Note [Telemetry devices]: by UUID, else by PCI bus id; never by index.
MappedDevice map_cuda_device(const NvmlApi& nvml, int ordinal) {
  MappedDevice mapped;
  try {
    const DeviceProperties properties = get_device_properties(ordinal);
    mapped.uuid = properties.uuid;
    if (nvml.nvmlDeviceGetHandleByUUID(properties.uuid.c_str(), &mapped.handle) == detail::NVML_SUCCESS)
      return mapped;
    if (!properties.pci_bus_id.empty() &&
        nvml.nvmlDeviceGetHandleByPciBusId_v2(properties.pci_bus_id.c_str(), &mapped.handle) ==
            detail::NVML_SUCCESS)
      return mapped;
    mapped.handle = nullptr;
    mapped.error = concat("NVML knows no device with CUDA device ", ordinal, "'s UUID ",
                          properties.uuid, " or PCI bus id '", properties.pci_bus_id, "'");
  } catch (const Error& e) {
    mapped.error = e.what();
  }
  return mapped;
}

// Every visible CUDA device's NVML handle, mapped once (the visible set is fixed per process).
const std::vector<MappedDevice>& mapped_devices(const NvmlApi& nvml) {
  static const std::vector<MappedDevice> devices = [&nvml] {
    std::vector<MappedDevice> out;
    for (int d = 0; d < device_count(); ++d) out.push_back(map_cuda_device(nvml, d));
    return out;
  }();
  return devices;
}

// A device a query reads, with the words its errors use for it.
struct Target {
  const NvmlApi* nvml;
  detail::nvmlDevice_t handle;
  std::string description;  // "CUDA device 0 (GPU-...)"
};

Target resolve(int device, const char* api) {
  if (device < -1) {
    throw InvalidArgumentError(api, concat("device ordinal ", device, " is out of range: it takes ",
                                           "a CUDA ordinal from 0, or -1 for the current device"));
  }
  const NvmlApi& nvml = require_nvml(api);
  const int ordinal = detail::resolve_device(device, api);
  const MappedDevice& mapped = mapped_devices(nvml).at(static_cast<std::size_t>(ordinal));
  if (mapped.handle == nullptr) throw NvmlError(detail::NVML_ERROR_NOT_FOUND, api, mapped.error);
  return {&nvml, mapped.handle, concat("CUDA device ", ordinal, " (", mapped.uuid, ")")};
}

// "GPU-a... (NVML 0), GPU-b... (NVML 1)": the devices NVML knows, for a UUID that names none.
std::string nvml_uuids(const NvmlApi& nvml) {
  unsigned int count = 0;
  if (nvml.nvmlDeviceGetCount_v2(&count) != detail::NVML_SUCCESS) return "NVML cannot count them";
  std::string out;
  for (unsigned int i = 0; i < count; ++i) {
    detail::nvmlDevice_t handle = nullptr;
    char uuid[detail::NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (nvml.nvmlDeviceGetHandleByIndex_v2(i, &handle) != detail::NVML_SUCCESS ||
        nvml.nvmlDeviceGetUUID(handle, uuid, sizeof uuid) != detail::NVML_SUCCESS)
      continue;
    out += concat(out.empty() ? "" : ", ", uuid, " (NVML index ", i, ")");
  }
  return out.empty() ? std::string("none") : out;
}

Target resolve(std::string_view uuid, const char* api) {
  detail::check_uuid_syntax(uuid, api);
  const NvmlApi& nvml = require_nvml(api);
  const std::string text(uuid);
  detail::nvmlDevice_t handle = nullptr;
  const detail::nvmlReturn_t result = nvml.nvmlDeviceGetHandleByUUID(text.c_str(), &handle);
  if (result == detail::NVML_ERROR_NOT_FOUND || result == detail::NVML_ERROR_INVALID_ARGUMENT) {
    throw InvalidArgumentError(api, concat("no GPU has the UUID '", text,
                                           "'; the GPUs NVML knows: ", nvml_uuids(nvml)));
  }
  check_nvml(result, "nvmlDeviceGetHandleByUUID", text);
  return {&nvml, handle, text};
}

// One reading: call(handle, &value), checked, with the call's name for the error.
template <class Value, class Call>
Value reading(const Target& t, const char* name, Call&& call) {
  Value value{};
  check_nvml(call(t.handle, &value), name, t.description);
  return value;
}
detail::nvmlMemory_t memory_info(const Target& t) {
  return reading<detail::nvmlMemory_t>(t, "nvmlDeviceGetMemoryInfo", t.nvml->nvmlDeviceGetMemoryInfo);
}
detail::nvmlUtilization_t utilization_rates(const Target& t) {
  return reading<detail::nvmlUtilization_t>(t, "nvmlDeviceGetUtilizationRates",
                                            t.nvml->nvmlDeviceGetUtilizationRates);
}
unsigned int temperature_of(const Target& t) {
  return reading<unsigned int>(t, "nvmlDeviceGetTemperature", [&](detail::nvmlDevice_t h, unsigned int* v) {
    return t.nvml->nvmlDeviceGetTemperature(h, detail::NVML_TEMPERATURE_GPU, v);
  });
}
unsigned int power_draw_of(const Target& t) {
  return reading<unsigned int>(t, "nvmlDeviceGetPowerUsage", t.nvml->nvmlDeviceGetPowerUsage);
}
unsigned int clock_rate_of(const Target& t) {
  return reading<unsigned int>(t, "nvmlDeviceGetClockInfo", [&](detail::nvmlDevice_t h, unsigned int* v) {
    return t.nvml->nvmlDeviceGetClockInfo(h, detail::NVML_CLOCK_SM, v);
  });
}

// The processes of one of NVML's two lists; the list can grow between the count and the read,
// which NVML answers with NVML_ERROR_INSUFFICIENT_SIZE and the new count.
using ProcessQuery = detail::nvmlReturn_t (*)(detail::nvmlDevice_t, unsigned int*, detail::nvmlProcessInfo_t*);
std::vector<detail::nvmlProcessInfo_t> running_processes(ProcessQuery query, const char* name,
                                                         const Target& t) {
  std::vector<detail::nvmlProcessInfo_t> infos;
  for (;;) {
    unsigned int count = static_cast<unsigned int>(infos.size());
    const detail::nvmlReturn_t result = query(t.handle, &count, infos.empty() ? nullptr : infos.data());
    if (result == detail::NVML_ERROR_INSUFFICIENT_SIZE) {
      infos.resize(std::max<std::size_t>(count, infos.size()) + 8);
      continue;
    }
    check_nvml(result, name, t.description);
    infos.resize(count);
    return infos;
  }
}

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

GpuProcess describe_process(const NvmlApi& nvml, const detail::nvmlProcessInfo_t& info) {
  GpuProcess process;
  process.pid = info.pid;
  if (info.usedGpuMemory != detail::NVML_VALUE_NOT_AVAILABLE)
    process.used_memory = static_cast<std::size_t>(info.usedGpuMemory);
  char name[1024] = {};
  if (nvml.nvmlSystemGetProcessName(info.pid, name, sizeof name) == detail::NVML_SUCCESS && name[0]) {
    process.name = name;
  } else if (auto comm = detail::try_read_text_file(concat("/proc/", info.pid, "/comm"))) {
    process.name = trimmed(std::move(*comm));
  }
  if (auto maps = detail::try_read_text_file(concat("/proc/", info.pid, "/maps")))
    process.uses_cudakit = detail::maps_library(*maps, "libcudakit");
  return process;
}

std::vector<GpuProcess> processes_of(const Target& t) {
  std::vector<GpuProcess> out;
  auto add = [&](ProcessQuery query, const char* name) {
    for (const detail::nvmlProcessInfo_t& info : running_processes(query, name, t)) {
      const bool seen = std::any_of(out.begin(), out.end(),
                                    [&](const GpuProcess& p) { return p.pid == info.pid; });
      if (!seen) out.push_back(describe_process(*t.nvml, info));
    }
  };
  add(t.nvml->nvmlDeviceGetComputeRunningProcesses_v3, "nvmlDeviceGetComputeRunningProcesses_v3");
  add(t.nvml->nvmlDeviceGetGraphicsRunningProcesses_v3, "nvmlDeviceGetGraphicsRunningProcesses_v3");
  return out;
}

// A reading that the device may not support, for the all-devices view: empty on any failure.
template <class Read>
auto optional_reading(Read&& read) -> std::optional<decltype(read())> {
  try {
    return read();
  } catch (const NvmlError&) {
    return std::nullopt;
  }
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::size_t device_memory_used(int device) {
  return memory_info(resolve(device, "device_memory_used")).used;
}
std::size_t device_memory_used(std::string_view uuid) {
  return memory_info(resolve(uuid, "device_memory_used")).used;
}
unsigned int memory_usage(int device) { return utilization_rates(resolve(device, "memory_usage")).memory; }
unsigned int memory_usage(std::string_view uuid) {
  return utilization_rates(resolve(uuid, "memory_usage")).memory;
}
unsigned int utilization(int device) { return utilization_rates(resolve(device, "utilization")).gpu; }
unsigned int utilization(std::string_view uuid) {
  return utilization_rates(resolve(uuid, "utilization")).gpu;
}
unsigned int temperature(int device) { return temperature_of(resolve(device, "temperature")); }
unsigned int temperature(std::string_view uuid) { return temperature_of(resolve(uuid, "temperature")); }
unsigned int power_draw(int device) { return power_draw_of(resolve(device, "power_draw")); }
unsigned int power_draw(std::string_view uuid) { return power_draw_of(resolve(uuid, "power_draw")); }
unsigned int clock_rate(int device) { return clock_rate_of(resolve(device, "clock_rate")); }
unsigned int clock_rate(std::string_view uuid) { return clock_rate_of(resolve(uuid, "clock_rate")); }
std::vector<GpuProcess> list_gpu_processes(int device) {
  return processes_of(resolve(device, "list_gpu_processes"));
}
std::vector<GpuProcess> list_gpu_processes(std::string_view uuid) {
  return processes_of(resolve(uuid, "list_gpu_processes"));
}

std::vector<DeviceTelemetry> read_device_telemetry() {
  constexpr const char* kApi = "read_device_telemetry";
  const NvmlApi& nvml = require_nvml(kApi);
  unsigned int count = 0;
  check_nvml(nvml.nvmlDeviceGetCount_v2(&count), "nvmlDeviceGetCount_v2", "");
  const std::vector<MappedDevice>& visible = mapped_devices(nvml);
  std::vector<DeviceTelemetry> out;
  for (unsigned int index = 0; index < count; ++index) {
    Target t{&nvml, nullptr, concat("NVML device ", index)};
    check_nvml(nvml.nvmlDeviceGetHandleByIndex_v2(index, &t.handle), "nvmlDeviceGetHandleByIndex_v2",
               t.description);
    DeviceTelemetry d;
    d.nvml_index = index;
    // NVML hands out one handle per device, so equal handles are the same GPU.
    const auto cuda = std::find_if(visible.begin(), visible.end(),
                                   [&](const MappedDevice& m) { return m.handle == t.handle; });
    d.cuda_ordinal = cuda == visible.end() ? -1 : static_cast<int>(cuda - visible.begin());
    char text[detail::NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (nvml.nvmlDeviceGetUUID(t.handle, text, sizeof text) == detail::NVML_SUCCESS) d.uuid = text;
    char name[detail::NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    if (nvml.nvmlDeviceGetName(t.handle, name, sizeof name) == detail::NVML_SUCCESS) d.name = name;
    const detail::nvmlMemory_t memory = memory_info(t);
    d.memory_total = memory.total;
    d.memory_used = memory.used;
    if (auto rates = optional_reading([&] { return utilization_rates(t); })) {
      d.utilization = rates->gpu;
      d.memory_usage = rates->memory;
    }
    d.temperature = optional_reading([&] { return temperature_of(t); });
    d.power_draw = optional_reading([&] { return power_draw_of(t); });
    d.clock_rate = optional_reading([&] { return clock_rate_of(t); });
    unsigned int value = 0;
    if (nvml.nvmlDeviceGetPowerManagementLimit(t.handle, &value) == detail::NVML_SUCCESS) d.power_limit = value;
    if (nvml.nvmlDeviceGetMaxClockInfo(t.handle, detail::NVML_CLOCK_SM, &value) == detail::NVML_SUCCESS)
      d.clock_rate_max = value;
    if (nvml.nvmlDeviceGetClockInfo(t.handle, detail::NVML_CLOCK_MEM, &value) == detail::NVML_SUCCESS)
      d.memory_clock_rate = value;
    // Some set-ups refuse the process lists (MIG parents, containers without the permission):
    // the device is still shown.
    d.processes = optional_reading([&] { return processes_of(t); }).value_or(std::vector<GpuProcess>{});
    out.push_back(std::move(d));
  }
  return out;
}

namespace detail {

void check_uuid_syntax(std::string_view uuid, const char* api) {
  // "GPU-" or "MIG-", then 8-4-4-4-12 hexadecimal digits.
  static constexpr std::string_view kShape = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
  const bool prefixed = uuid.starts_with("GPU-") || uuid.starts_with("MIG-");
  const std::string_view body = prefixed ? uuid.substr(4) : std::string_view();
  bool ok = prefixed && body.size() == kShape.size();
  for (std::size_t i = 0; ok && i < body.size(); ++i)
    ok = kShape[i] == '-' ? body[i] == '-' : is_hex(body[i]);
  if (!ok) {
    throw InvalidArgumentError(api, concat("'", uuid, "' is not a GPU UUID: one reads \"GPU-\" or ",
                                           "\"MIG-\" and 32 hexadecimal digits as 8-4-4-4-12 ",
                                           "(e.g. GPU-5c4f1e2a-9b1d-4e7a-8c3f-0a1b2c3d4e5f)"));
  }
}

bool maps_library(std::string_view maps, std::string_view stem) noexcept {
  // Each line: address perms offset dev inode [pathname]; the pathname is the sixth field and
  // may hold spaces, so it is what follows the fifth field's blanks.
  while (!maps.empty()) {
    const std::size_t end = maps.find('\n');
    std::string_view line = maps.substr(0, end);
    maps.remove_prefix(end == std::string_view::npos ? maps.size() : end + 1);
    for (int field = 0; field < 5 && !line.empty(); ++field) {
      const std::size_t blank = line.find(' ');
      line.remove_prefix(blank == std::string_view::npos ? line.size() : blank);
      while (line.starts_with(' ')) line.remove_prefix(1);
    }
    if (!line.starts_with('/')) continue;  // anonymous, [heap], [stack], ...
    const std::string_view file = line.substr(line.rfind('/') + 1);
    if (file.size() > stem.size() && file.starts_with(stem) && file[stem.size()] == '.') return true;
  }
  return false;
}

}  // namespace detail
}  // namespace cudakit
