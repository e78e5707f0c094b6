#include "jiterator/detail/kernel_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/relaxed_capture_mode.hpp"
#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/jiterator/detail/cache_entry.hpp"
#include "jiterator/detail/hash.hpp"
#include "jiterator/detail/nvrtc_compiler.hpp"
#include "jiterator/detail/text.hpp"

namespace cudakit::jiterator::detail {
namespace {

using cudakit::detail::concat;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void record_compile(const NvrtcOutput& out, CompiledKernelInfo& info) {
  info.origin = KernelOrigin::compiled;
  info.compile_ms = out.compile_ms;
  info.cubin_ms = out.cubin_ms;
  info.cubin_bytes = out.cubin.size();
  info.nvrtc_open_ms = out.open_ms;
  info.nvrtc_read_ahead_bytes = out.read_ahead_bytes;
}

// CUDAKIT_JITERATOR_VERBOSE=1: one line on stderr per compile and per module load, the host-side
// parts of a first call (what compile() reports, as it happens).
bool verbose() {
  static const bool on = [] {
    const char* value = std::getenv("CUDAKIT_JITERATOR_VERBOSE");
    return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
  }();
  return on;
}

void report_compile(const CompiledKernelInfo& info) {
  if (!verbose()) return;
  std::fprintf(stderr,
               "cudakit jiterator: compiled for sm_%d: NVRTC opened %.3f ms (%.1f MB read ahead), compile %.3f ms, "
               "cubin %.3f ms (%zu bytes), disk entry %.3f ms\n",
               info.arch, info.nvrtc_open_ms, static_cast<double>(info.nvrtc_read_ahead_bytes) / 1e6, info.compile_ms,
               info.cubin_ms, info.cubin_bytes, info.disk_ms);
}

// Note [The kernel cache]
// Two levels. In memory: a map from (architecture, generated source) to the compiled module;
// the first thread to miss a key puts a future there and produces the module, others wait on
// the future, so a key is compiled once per process (a failure is handed to the waiters and
// the key removed, so that a later call tries again). Callers keep their own map from what
// changes the kernel (dtypes, access, index width, device) to the loaded function, so a hot
// call touches no string (jit_function.cpp).
//
// On disk: one file per key, named by the FNV-1a hash of the key: "cudakit-jit <format>, CUDA
// <toolkit version>, <options>, source <hash> <bytes>" — the compiler's version and options
// because they change the machine code, the source's hash because it holds everything else. The
// compiler's version is the toolkit's as libcudart reports it, not nvrtcVersion: a disk hit
// must not pay for opening NVRTC (toolkit_version below). The entry
// (cache_entry.hpp) repeats the key and carries a checksum: a damaged or truncated entry, or one
// another key's hash collided with, is recompiled and replaced (damage with one warning).
// Entries are written to a temporary file in the same folder and renamed over the entry, so a
// reader sees the old entry, the new one, or none — never half of one.
//
// Across processes, one compile per key: a process that misses takes an exclusive flock on
// `<hash>.lock`, reads again (another may have written the entry while it waited), and only
// then compiles and writes. flock rather than compiling twice and letting rename pick a winner:
// the compile is what costs (tens of milliseconds, a core each), and a server starting N
// workers should pay it once. The lock dies with its holder, so a crashed compile leaves no
// stale lock. Where the folder cannot be created or written, the cache works from memory alone
// after one warning.

// The version of the toolkit whose NVRTC compiles: libcudart's (cudaRuntimeGetVersion). cudakit
// loads the libnvrtc.so.13 of that toolkit (its library folder is on the run path), and asking
// NVRTC itself would load it — a library of a hundred megabytes, milliseconds to open with a warm
// page cache and far more cold (notes/figures.md) — where a disk hit needs no compiler at all.
int toolkit_version() {
  static const int version = [] {
    int v = 0;
    if (cudaRuntimeGetVersion(&v) != cudaSuccess) (void)cudaGetLastError();
    return v;
  }();
  return version;
}

std::string read_error(int error) { return error == ENOENT ? std::string() : std::strerror(error); }

// Holds an exclusive flock on a lock file for its life; not locked when the file cannot be made.
class FileLock {
 public:
  explicit FileLock(const fs::path& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      error_ = errno;
      return;
    }
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        error_ = errno;
        ::close(fd_);
        fd_ = -1;
        return;
      }
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  [[nodiscard]] bool locked() const noexcept { return fd_ >= 0; }
  [[nodiscard]] int error() const noexcept { return error_; }

 private:
  int fd_ = -1;
  int error_ = 0;
};

}  // namespace

CompiledModule::~CompiledModule() {
  // Modules live as long as the store, which lives to the end of the process: by then the driver
  // may be gone, and unloading is the process exit's job.
}

CUfunction CompiledModule::function(int device, const char* name) const {
  const std::lock_guard lock(mutex_);
  for (const auto& [d, n, f] : functions_) {
    if (d == device && n == name) return f;
  }
  // Loading is no stream work, but it is an "unsafe" call for a global-mode capture in any
  // thread: relaxed mode lets it through (See Note [Compiling during a capture]).
  const cudakit::detail::RelaxedCaptureMode relaxed;
  // The driver calls below work in the current context: cudaSetDevice binds the device's
  // primary context to this thread (also where the device already was current but no runtime
  // call has made its context current yet); the guard gives the caller its device back.
  const auto start = Clock::now();
  const DeviceGuard guard(device);
  CUDAKIT_CHECK_CUDA(cudaSetDevice(device));
  if (library_ == nullptr) {
    CUDAKIT_DRIVER_CALL(cuLibraryLoadData, &library_, cubin_.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  }
  CUkernel kernel = nullptr;
  CUDAKIT_DRIVER_CALL(cuLibraryGetKernel, &kernel, library_, name);
  CUfunction function = nullptr;
  CUDAKIT_DRIVER_CALL(cuKernelGetFunction, &function, kernel);
  // With lazy loading (CUDA's default) the function would be loaded at its first launch, which
  // may be inside a capture: load it now.
  if (cudakit::detail::driver().cuFuncLoad != nullptr) CUDAKIT_DRIVER_CALL(cuFuncLoad, function);
  functions_.emplace_back(device, name, function);
  if (info_.load_ms == 0) info_.load_ms = ms_since(start);
  if (verbose()) std::fprintf(stderr, "cudakit jiterator: %s loaded on device %d in %.3f ms\n", name, device, ms_since(start));
  return function;
}

KernelStore::KernelStore(PathSource disk_path) : disk_path_(std::move(disk_path)) {}

KernelCacheStatistics KernelStore::statistics() const {
  return {memory_hits_.load(), disk_hits_.load(), compiles_.load(), corrupt_entries_.load(), write_failures_.load()};
}

void KernelStore::warn_once(std::atomic<bool>& flag, const std::string& message) {
  if (!flag.exchange(true)) CUDAKIT_LOG(warning, message);
}

std::shared_ptr<const CompiledModule> KernelStore::get(const std::string& source, int arch, KernelOrigin* origin) {
  return get_or_produce(source, arch, origin, true);
}

namespace {
// The driver's refusals of an image itself (not of the device or the context).
bool refuses_image(const CudaError& e) {
  if (!e.is_driver_error()) return false;
  switch (e.status()) {
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_INVALID_SOURCE:
    case CUDA_ERROR_NOT_FOUND:  // the entry's image lacks the kernel the key promises
      return true;
    default:
      return false;
  }
}
}  // namespace

CUfunction KernelStore::function(const std::string& source, int arch, int device, const char* name) {
  const auto module = get(source, arch);
  try {
    return module->function(device, name);
  } catch (const CudaError& e) {
    if (module->info().origin != KernelOrigin::disk || !refuses_image(e)) throw;
    corrupt_entries_.fetch_add(1, std::memory_order_relaxed);
    warn_once(warned_unloadable_, concat("jiterator: the driver does not load the kernel-cache entry for ",
                                         module->info().cache_key, " (", e.what(), "); compiling the kernel again"));
  }
  return get_or_produce(source, arch, nullptr, false)->function(device, name);
}

std::shared_ptr<const CompiledModule> KernelStore::get_or_produce(const std::string& source, int arch,
                                                                  KernelOrigin* origin, bool read_disk) {
  const std::string key = text(arch, "\n", source);
  std::promise<std::shared_ptr<const CompiledModule>> promise;
  {
    std::unique_lock lock(mutex_);
    // Not reading the disk means the module held for the key is refused: it is replaced.
    if (!read_disk) modules_.erase(key);
    if (const auto found = modules_.find(key); found != modules_.end()) {
      const auto future = found->second;
      lock.unlock();
      auto module = future.get();  // waits for the producer; rethrows its failure
      memory_hits_.fetch_add(1, std::memory_order_relaxed);
      if (origin != nullptr) *origin = KernelOrigin::memory;
      return module;
    }
    modules_.emplace(key, promise.get_future().share());
  }
  try {
    auto module = produce(source, arch, read_disk);
    promise.set_value(module);
    if (origin != nullptr) *origin = module->info().origin;
    return module;
  } catch (...) {
    promise.set_exception(std::current_exception());
    const std::lock_guard lock(mutex_);
    modules_.erase(key);
    throw;
  }
}

std::shared_ptr<const CompiledModule> KernelStore::produce(const std::string& source, int arch, bool read_disk) {
  std::string options;
  for (const std::string& o : nvrtc_options(arch)) append(options, o, " ");
  const std::string disk_key = text("cudakit-jit ", kCacheEntryVersion, "; CUDA ", toolkit_version(), "; ", options,
                                      "; source ", hex64(hash_bytes(source)), " ", source.size());
  CompiledKernelInfo info;
  info.arch = arch;
  info.cache_key = disk_key;

  std::optional<fs::path> folder = disk_path_ ? disk_path_() : std::nullopt;
  const auto compile_without_disk = [&] {
    const NvrtcOutput out = compile_to_cubin(source, arch);
    compiles_.fetch_add(1, std::memory_order_relaxed);
    record_compile(out, info);
    report_compile(info);
    return std::make_shared<CompiledModule>(out.cubin, info);
  };
  if (!folder) return compile_without_disk();

  const std::string stem = hex64(fnv1a(disk_key));
  const fs::path entry_path = *folder / text(stem, ".cubin");
  bool warned_damage = false;
  // The entry's cubin when the file holds an intact entry for this key.
  const auto read_entry = [&]() -> std::optional<std::string> {
    const auto start = Clock::now();
    int error = 0;
    std::optional<std::string> bytes = cudakit::detail::try_read_text_file(entry_path.string(), &error);
    if (!bytes) {
      if (const std::string why = read_error(error); !why.empty()) {
        CUDAKIT_LOG(debug, concat("jiterator: cannot read ", entry_path.string(), ": ", why));
      }
      return std::nullopt;
    }
    std::string why;
    std::optional<CacheEntry> entry = decode_cache_entry(*bytes, &why);
    if (!entry) {
      if (!warned_damage) {
        warned_damage = true;
        corrupt_entries_.fetch_add(1, std::memory_order_relaxed);
        CUDAKIT_LOG(warning, concat("jiterator: ignoring the kernel-cache entry ", entry_path.string(), " (", why,
                                    "); compiling the kernel again"));
      }
      return std::nullopt;
    }
    if (entry->key != disk_key) return std::nullopt;  // another key with the same hash: replaced below
    std::string cubin(entry->cubin);
    info.disk_ms = ms_since(start);
    return cubin;
  };
  const auto from_disk = [&](std::string cubin) {
    disk_hits_.fetch_add(1, std::memory_order_relaxed);
    info.origin = KernelOrigin::disk;
    info.cubin_bytes = cubin.size();
    return std::make_shared<CompiledModule>(std::move(cubin), info);
  };
  // A hit reads the entry and touches nothing else; the folder is made on the first miss.
  if (!read_disk) {
    // The entry is intact but refused by the driver: compiled again below and replaced.
  } else if (auto cubin = read_entry()) {
    return from_disk(std::move(*cubin));
  }
  std::error_code error;
  fs::create_directories(*folder, error);
  if (error) {
    warn_once(warned_unwritable_, concat("jiterator: no disk cache for compiled kernels: cannot create ",
                                         folder->string(), ": ", error.message(),
                                         " (set CUDAKIT_KERNEL_CACHE_PATH to a writable folder)"));
    return compile_without_disk();
  }

  const FileLock lock(*folder / concat(stem, ".lock"));
  if (!lock.locked()) {
    warn_once(warned_unlocked_, concat("jiterator: cannot lock ", (*folder / concat(stem, ".lock")).string(), ": ",
                                       std::strerror(lock.error()),
                                       "; processes sharing the kernel cache may compile a kernel more than once"));
  } else if (auto cubin = read_disk ? read_entry() : std::nullopt) {
    return from_disk(std::move(*cubin));  // written by another process while this one waited
  }
  const NvrtcOutput out = compile_to_cubin(source, arch);
  compiles_.fetch_add(1, std::memory_order_relaxed);
  record_compile(out, info);
  const auto start = Clock::now();
  if (const std::string error = cudakit::detail::try_write_text_file_atomically(
          entry_path.string(), encode_cache_entry(disk_key, out.cubin));
      !error.empty()) {
    write_failures_.fetch_add(1, std::memory_order_relaxed);
    warn_once(warned_unwritable_, concat("jiterator: no disk cache for compiled kernels: ", error,
                                         " (set CUDAKIT_KERNEL_CACHE_PATH to a writable folder)"));
  }
  info.disk_ms = ms_since(start);
  report_compile(info);
  return std::make_shared<CompiledModule>(out.cubin, info);
}

KernelStore& global_kernel_store() {
  // Never destroyed: modules may be used by static objects' destructors, and unloading at exit
  // is pointless.
  static KernelStore* store = new KernelStore([] { return kernel_cache_path(); });
  return *store;
}

}  // namespace cudakit::jiterator::detail
