#include "cudakit/core/stack_trace.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "cudakit/core/detail/concat.hpp"

namespace cudakit {

StackFrames capture_stack(int skip) {
  void* addresses[64];
  const int n = backtrace(addresses, 64);
  StackFrames frames;
  for (int i = 1 + skip; i < n; ++i) {
    Dl_info info{};
    StackFrame f;
    if (dladdr(addresses[i], &info) && info.dli_sname) {
      f.name = demangle(info.dli_sname);
    } else {
      f.name = detail::concat("0x", std::hex, reinterpret_cast<std::uintptr_t>(addresses[i]));
    }
    f.filename = info.dli_fname ? info.dli_fname : "??";
    frames.push_back(std::move(f));
  }
  return frames;
}

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
