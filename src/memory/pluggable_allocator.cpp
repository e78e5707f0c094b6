// PluggableAllocator and the backend that serves the device-wide allocator from it (torch's
// CUDAPluggableAllocator). See Note [Allocator backends].

#include "cudakit/memory/pluggable_allocator.hpp"

#include <dlfcn.h>

#include <atomic>
#include <climits>
#include <filesystem>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "memory/detail/tracked_backend.hpp"

namespace cudakit::memory {
namespace {

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown error";
}

// The shared library at `path`, loaded for the rest of the process.
void* open_library(const std::string& path) {
  // A bare name is searched for by dlopen (LD_LIBRARY_PATH, the cache); a path must exist, which
  // gives a clearer error than dlopen's.
  if (path.find('/') != std::string::npos && !std::filesystem::exists(path)) {
    throw InvalidArgumentError("PluggableAllocator", cudakit::detail::concat("no shared library at '", path, "'"));
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    throw InvalidArgumentError("PluggableAllocator",
                               cudakit::detail::concat("the shared library '", path, "' could not be loaded: ", dl_error()));
  }
  return handle;
}

void* find_symbol(void* library, const std::string& path, const std::string& symbol, const char* role) {
  (void)dlerror();
  void* fn = dlsym(library, symbol.c_str());
  if (!fn) {
    throw InvalidArgumentError("PluggableAllocator",
                               cudakit::detail::concat("the shared library '", path, "' has no symbol '", symbol,
                                              "' (the ", role, " function): ", dl_error()));
  }
  return fn;
}

using RawAlloc = void* (*)(ssize_t, int, cudaStream_t);
using RawFree = void (*)(void*, ssize_t, int, cudaStream_t);

}  // namespace

PluggableAllocator::PluggableAllocator(AllocFn alloc_fn, FreeFn free_fn)
    : alloc_fn_(std::move(alloc_fn)), free_fn_(std::move(free_fn)) {
  if (!alloc_fn_ || !free_fn_) {
    throw InvalidArgumentError("PluggableAllocator", "both the allocation and the free function are required");
  }
}

PluggableAllocator::PluggableAllocator(const std::string& path, const std::string& alloc_symbol,
                                       const std::string& free_symbol)
    : library_path_(path) {
  void* library = open_library(path);
  // Never dlclose'd: blocks it handed out may be freed until exit.
  alloc_fn_ = reinterpret_cast<RawAlloc>(find_symbol(library, path, alloc_symbol, "allocation"));
  free_fn_ = reinterpret_cast<RawFree>(find_symbol(library, path, free_symbol, "free"));
}

namespace detail {
namespace {

class PluggableBackend final : public TrackedBackend {
 public:
  explicit PluggableBackend(const PluggableAllocator& allocator)
      : TrackedBackend(AllocatorConfig{}), allocator_(allocator) {}

  // torch's CUDAPluggableAllocator::name().
  std::string name() const override { return "pluggable"; }
  bool uses_cuda() const noexcept override { return false; }

  void set_memory_fraction(double fraction, int device) override {
    if (!(fraction > 0.0 && fraction <= 1.0)) {
      throw InvalidArgumentError("set_per_process_memory_fraction",
                                 cudakit::detail::concat("fraction ", fraction, " must lie in (0, 1]"));
    }
    // The allocator's own business, as in torch: its hook is told, cudakit limits nothing (the
    // limit needs the device's total, which asks CUDA).
    if (allocator_.memory_fraction_fn()) allocator_.memory_fraction_fn()(fraction, device);
    fraction_.store(fraction, std::memory_order_relaxed);
  }
  double memory_fraction(int) const override { return fraction_.load(std::memory_order_relaxed); }

 protected:
  void* obtain(std::size_t bytes, int device, StreamRef stream) override {
    if (bytes > static_cast<std::size_t>(SSIZE_MAX)) return nullptr;
    return allocator_.alloc_fn()(static_cast<ssize_t>(bytes), device, stream.handle());
  }

  void release(void* ptr, const Allocation& a) override {
    // Without a record_stream hook, the allocating stream (the one free_fn is given, as torch
    // gives it) first waits for the usage streams: see pluggable_allocator.hpp.
    if (!a.usage.empty()) order_after(a.stream, a.usage);
    allocator_.free_fn()(ptr, static_cast<ssize_t>(a.bytes), a.device, a.stream.handle());
  }

  // The user's functions decide what a capture may see; cudakit calls no CUDA around them.
  bool defers_during_capture() const noexcept override { return false; }

  bool keep_usage_stream(void* ptr, StreamRef stream) override {
    if (!allocator_.record_stream_fn()) return true;
    allocator_.record_stream_fn()(ptr, stream.handle());
    return false;
  }

  void trim() override {
    if (allocator_.reset_fn()) allocator_.reset_fn()();
  }

  std::size_t total_memory(int) const override { return static_cast<std::size_t>(-1); }
  std::string device_memory_report(int) const override { return {}; }

 private:
  PluggableAllocator allocator_;
  std::atomic<double> fraction_{1.0};
};

}  // namespace

std::unique_ptr<AllocatorBackend> make_pluggable_backend(const PluggableAllocator& allocator) {
  return std::make_unique<PluggableBackend>(allocator);
}

}  // namespace detail
}  // namespace cudakit::memory
