#pragma once
// KernelStore: compiled jiterator modules by source and architecture — in memory, on disk, or
// from NVRTC — with one producer per key. See Note [The kernel cache].

#include <cuda.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "cudakit/jiterator/compiled_kernel_info.hpp"
#include "cudakit/jiterator/kernel_cache.hpp"

namespace cudakit::jiterator::detail {

// One compiled module: its cubin, how it was produced, and its functions once loaded.
class CompiledModule {
 public:
  CompiledModule(std::string cubin, CompiledKernelInfo info)
      : cubin_(std::move(cubin)), info_(std::move(info)) {}
  ~CompiledModule();
  CompiledModule(const CompiledModule&) = delete;
  CompiledModule& operator=(const CompiledModule&) = delete;

  [[nodiscard]] const std::string& cubin() const noexcept { return cubin_; }
  // A copy: load_ms is set by the first function() call.
  [[nodiscard]] CompiledKernelInfo info() const {
    const std::lock_guard lock(mutex_);
    return info_;
  }
  // The function `name` for `device`, loaded into its primary context (made current here) on
  // first use, in relaxed capture mode (See Note [Compiling during a capture]).
  // @throws CudaError (no driver, a cubin the device cannot run).
  CUfunction function(int device, const char* name) const;

 private:
  std::string cubin_;
  mutable std::mutex mutex_;
  mutable CompiledKernelInfo info_;  // guarded by mutex_
  mutable CUlibrary library_ = nullptr;
  mutable std::vector<std::tuple<int, std::string, CUfunction>> functions_;
};

class KernelStore {
 public:
  // Where the disk cache is, asked at each miss (nullopt: no disk cache).
  using PathSource = std::function<std::optional<std::filesystem::path>()>;
  explicit KernelStore(PathSource disk_path);

  // The module for `source` on sm_<arch>. Threads asking for one key wait for the one that
  // produces it; processes sharing the disk cache too (a lock file per key).
  // @throws NvrtcError, StateError (no NVRTC); the disk never makes it throw.
  std::shared_ptr<const CompiledModule> get(const std::string& source, int arch,
                                            KernelOrigin* origin = nullptr);
  // The function `name` of get(source, arch)'s module, loaded on `device`. A module from the disk
  // cache that the driver refuses (an entry intact to its checksum but no image this driver loads:
  // CUDA_ERROR_INVALID_IMAGE and its kin) is compiled again, its entry replaced, with one warning.
  // @throws as get, and CudaError for a load that fails otherwise.
  CUfunction function(const std::string& source, int arch, int device, const char* name);
  [[nodiscard]] KernelCacheStatistics statistics() const;

 private:
  std::shared_ptr<const CompiledModule> get_or_produce(const std::string& source, int arch, KernelOrigin* origin,
                                                      bool read_disk);
  std::shared_ptr<const CompiledModule> produce(const std::string& source, int arch, bool read_disk);
  void warn_once(std::atomic<bool>& flag, const std::string& message);

  PathSource disk_path_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const CompiledModule>>> modules_;
  std::atomic<std::int64_t> memory_hits_{0}, disk_hits_{0}, compiles_{0}, corrupt_entries_{0},
      write_failures_{0};
  std::atomic<bool> warned_unwritable_{false}, warned_unlocked_{false}, warned_unloadable_{false};
};

// The store the jiterator's functions use, over kernel_cache_path().
KernelStore& global_kernel_store();

}  // namespace cudakit::jiterator::detail
