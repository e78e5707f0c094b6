#include "cudakit/core/stack_trace.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "cudakit/core/detail/concat.hpp"

namespace cudakit {

std::vector<void*> capture_return_addresses(int skip, int max_frames) {
  std::vector<void*> addresses(static_cast<std::size_t>(std::max(0, max_frames) + 1 + std::max(0, skip)));
  const int n = backtrace(addresses.data(), static_cast<int>(addresses.size()));
  const auto first = static_cast<std::size_t>(std::min(n, 1 + std::max(0, skip)));
  addresses.resize(static_cast<std::size_t>(n));
  addresses.erase(addresses.begin(), addresses.begin() + static_cast<std::ptrdiff_t>(first));
  return addresses;
}

StackFrames symbolize_stack(std::span<void* const> addresses, std::span<const std::string_view> hidden_prefixes) {
  StackFrames frames;
  for (void* address : addresses) {
    Dl_info info{};
    StackFrame f;
    if (dladdr(address, &info) && info.dli_sname) {
      f.name = demangle(info.dli_sname);
    } else {
      f.name = detail::concat("0x", std::hex, reinterpret_cast<std::uintptr_t>(address));
    }
    f.filename = info.dli_fname ? info.dli_fname : "??";
    if (std::any_of(hidden_prefixes.begin(), hidden_prefixes.end(),
                    [&](std::string_view p) { return f.name.starts_with(p); })) {
      continue;
    }
    frames.push_back(std::move(f));
  }
  return frames;
}

StackFrames capture_stack(int skip) { return symbolize_stack(capture_return_addresses(skip + 1, 64)); }

std::string demangle(const char* mangled) {
  if (mangled == nullptr) return "<unnamed>";
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> text(abi::__cxa_demangle(mangled, nullptr, nullptr, &status),
                                                         &std::free);
  return status == 0 && text ? std::string(text.get()) : std::string(mangled);
}

std::string format_stack(const StackFrames& frames) {
  std::string out;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    out += detail::concat("  #", i, " ", frames[i].name, " (", frames[i].filename, ")\n");
  }
  return out;
}

}  // namespace cudakit
