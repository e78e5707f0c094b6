// `cudakit info`: versions, devices and which optional features this machine supports.

#include <iomanip>
#include <iostream>

#include "command.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/runtime_info.hpp"
#include "info.hpp"

namespace cudakit::cli {

void print_info(std::ostream& out) {
  out << "Components\n";
  for (const auto& c : component_versions()) {
    out << "  " << std::left << std::setw(14) << c.name << std::setw(12)
        << (c.version.empty() ? "not found" : c.version) << c.detail << "\n";
  }
  const int count = device_count();
  out << "\nDevices: " << count << "\n";
  if (count == 0) {
    out << "  No CUDA device is present on this machine (GPU work is unavailable; host-only "
           "tools still run).\n";
  }
  for (int d = 0; d < count; ++d) {
    const DeviceProperties p = get_device_properties(d);
    const auto [free, total] = mem_get_info(d);
    const auto [least, greatest] = stream_priority_range(d);
    out << "  [" << d << "] " << p.name << "  (" << p.uuid << ", PCI " << p.pci_bus_id << ")\n"
        << "      compute capability " << p.major << "." << p.minor << ", "
        << p.multi_processor_count << " SMs, " << p.max_threads_per_multi_processor
        << " threads/SM, " << p.regs_per_multiprocessor << " registers/SM\n"
        << "      memory " << std::fixed << std::setprecision(1) << total / 1073741824.0
        << " GiB (" << free / 1073741824.0 << " GiB free), bus " << p.memory_bus_width
        << " bits, L2 " << p.l2_cache_size / 1048576.0 << " MiB, shared memory/SM "
        << p.shared_memory_per_multiprocessor / 1024 << " KiB\n"
        << "      stream priorities " << greatest << " (highest) .. " << least << " (lowest)\n";
    for (int peer = 0; peer < count; ++peer) {
      if (peer != d) {
        out << "      peer access to [" << peer << "]: "
            << (can_device_access_peer(d, peer) ? "yes" : "no") << "\n";
      }
    }
  }
  out << "\nOptional features\n";
  for (const auto& f : feature_support()) {
    out << "  " << std::left << std::setw(48) << f.name << std::setw(5)
        << (f.supported ? "yes" : "no") << f.detail << "\n";
  }
}

namespace {
const RegisterCommand kInfo("info", "versions, devices and supported features",
                            [](CLI::App&) -> std::function<int()> {
                              return [] {
                                print_info(std::cout);
                                return 0;
                              };
                            });
}  // namespace
}  // namespace cudakit::cli
