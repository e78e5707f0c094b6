#include "jiterator/detail/nvrtc_compiler.hpp"

#include <chrono>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/jiterator/detail/nvrtc_api.hpp"
#include "cudakit/jiterator/nvrtc_error.hpp"
#include "jiterator/detail/nvrtc_prefetch.hpp"

namespace cudakit::jiterator::detail {
namespace {

using cudakit::detail::concat;
using cudakit::detail::nvrtc_api;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

const cudakit::detail::NvrtcApi& require_nvrtc() {
  const auto& api = nvrtc_api();
  if (!api.status.loaded) {
    throw StateError("jiterator", concat("NVRTC is not available, so kernels cannot be compiled at run time: ",
                                         api.status.reason));
  }
  return api;
}

// Destroys the program on every path.
struct Program {
  const cudakit::detail::NvrtcApi& api;
  nvrtcProgram handle = nullptr;
  ~Program() {
    if (handle != nullptr) api.nvrtcDestroyProgram(&handle);
  }
};

[[noreturn]] void fail(const cudakit::detail::NvrtcApi& api, nvrtcResult result, const char* call,
                       std::string log, const std::string& source) {
  throw NvrtcError(static_cast<int>(result), call,
                   concat(api.nvrtcGetErrorString(result), " (nvrtcResult ", static_cast<int>(result), ")"),
                   std::move(log), source);
}

}  // namespace

std::vector<std::string> nvrtc_options(int arch) {
  // -default-device: the user's functions carry no __device__. -minimal: no texture, surface or
  // device-runtime declarations, which jiterator code has no use for and which cost NVRTC time
  // (notes/jiterator.md). Straight to machine code for the exact architecture: a cubin, never
  // PTX, which a driver older than the toolkit could refuse.
  return {concat("-arch=sm_", arch), "-std=c++17", "-default-device", "-minimal"};
}

const std::string& nvrtc_version() { return require_nvrtc().status.version; }

NvrtcOutput compile_to_cubin(const std::string& source, int arch) {
  NvrtcOutput out;
  const auto opening = Clock::now();
  out.read_ahead_bytes = prefetch_nvrtc().bytes;
  const auto& api = require_nvrtc();
  out.open_ms = ms_since(opening);
  const auto start = Clock::now();
  Program program{api};
  nvrtcResult result = api.nvrtcCreateProgram(&program.handle, source.c_str(), "cudakit_jit.cu", 0, nullptr, nullptr);
  if (result != NVRTC_SUCCESS) fail(api, result, "nvrtcCreateProgram", {}, source);
  const std::vector<std::string> options = nvrtc_options(arch);
  std::vector<const char*> option_pointers;
  for (const std::string& o : options) option_pointers.push_back(o.c_str());
  result = api.nvrtcCompileProgram(program.handle, static_cast<int>(option_pointers.size()), option_pointers.data());
  out.compile_ms = ms_since(start);
  if (result != NVRTC_SUCCESS) {
    std::size_t log_size = 0;
    std::string log;
    if (api.nvrtcGetProgramLogSize(program.handle, &log_size) == NVRTC_SUCCESS && log_size > 1) {
      log.resize(log_size);
      if (api.nvrtcGetProgramLog(program.handle, log.data()) != NVRTC_SUCCESS) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    fail(api, result, "nvrtcCompileProgram", std::move(log), source);
  }
  const auto fetch = Clock::now();
  std::size_t size = 0;
  result = api.nvrtcGetCUBINSize(program.handle, &size);
  if (result != NVRTC_SUCCESS) fail(api, result, "nvrtcGetCUBINSize", {}, source);
  out.cubin.resize(size);
  result = api.nvrtcGetCUBIN(program.handle, out.cubin.data());
  if (result != NVRTC_SUCCESS) fail(api, result, "nvrtcGetCUBIN", {}, source);
  out.cubin_ms = ms_since(fetch);
  return out;
}

}  // namespace cudakit::jiterator::detail
