#pragma once
// @brief PluggableAllocator (torch.cuda.memory.CUDAPluggableAllocator): allocation functions of the
// program's own — given directly, or loaded by name from a shared library — that
// change_current_allocator() (device_allocator.hpp) makes the device-wide allocator.
//
// cudakit calls alloc_fn for every memory::allocate and free_fn for every deallocate, with the
// size, device and stream of the allocation (torch's signatures), and keeps the statistics
// around the calls (allocation counts and bytes; reserved = what is allocated from the
// functions, as cudakit caches nothing in front of them). Streams recorded with record_stream
// go to the record_stream hook when one is set (as in torch); without one, cudakit makes the
// allocation's stream wait for those streams' work before calling free_fn, so that an allocator
// that orders frees on that stream (cudaFreeAsync) reuses the memory only after all its users.

#include <cuda_runtime_api.h>
#include <sys/types.h>

#include <functional>
#include <string>

namespace cudakit::memory {

// A set of allocation functions: a value, copied by change_current_allocator(). The functions
// are called from whichever thread allocates or frees, concurrently: they must be thread-safe.
class PluggableAllocator {
 public:
  // torch's signatures (sizes are ssize_t).
  // Returns `size` bytes on `device` for use on `stream`, or nullptr when memory is exhausted
  // (cudakit then throws OutOfMemoryError).
  using AllocFn = std::function<void*(ssize_t size, int device, cudaStream_t stream)>;
  // Frees what AllocFn returned; `size`, `device` and `stream` are the allocation's.
  using FreeFn = std::function<void(void* ptr, ssize_t size, int device, cudaStream_t stream)>;
  // Told the number of devices when the allocator is installed.
  using InitFn = std::function<void(int device_count)>;
  // Called on empty_cache(): the allocator may return what it caches.
  using ResetFn = std::function<void()>;
  // Told set_per_process_memory_fraction()'s arguments (an ordinal, not -1).
  using MemoryFractionFn = std::function<void(double fraction, int device)>;
  // Told record_stream()'s arguments; the allocator orders the free itself.
  using RecordStreamFn = std::function<void(void* ptr, cudaStream_t stream)>;

  // Functions given directly.
  // @param alloc_fn allocates (torch's signature).
  // @param free_fn frees (torch's signature).
  // @throws InvalidArgumentError if either function is empty.
  PluggableAllocator(AllocFn alloc_fn, FreeFn free_fn);
  // The functions named `alloc_symbol` and `free_symbol` (extern "C", torch's signatures) of the
  // shared library at `path` (a name without '/' is searched for as dlopen does). The library
  // stays loaded for the rest of the process: memory it handed out may be freed until exit.
  // @throws InvalidArgumentError naming the path for a missing or unloadable library, and the
  // symbol for a missing function.
  // @param path the library's path or name.
  // @param alloc_symbol the allocation function's name.
  // @param free_symbol the free function's name.
  PluggableAllocator(const std::string& path, const std::string& alloc_symbol,
                     const std::string& free_symbol);

  // Optional hooks, as torch's set_*_fn: init_fn(device_count) when change_current_allocator
  // installs the allocator; reset_fn on empty_cache(); memory_fraction_fn on
  // set_per_process_memory_fraction() (cudakit enforces no limit of its own for this backend);
  // record_stream_fn on record_stream().
  // Sets the hook called when change_current_allocator() installs the allocator.
  // @param fn the hook; empty for none.
  void set_init_fn(InitFn fn) { init_fn_ = std::move(fn); }
  // Sets the hook called on empty_cache().
  // @param fn the hook; empty for none.
  void set_reset_fn(ResetFn fn) { reset_fn_ = std::move(fn); }
  // Sets the hook called on set_per_process_memory_fraction().
  // @param fn the hook; empty for none.
  void set_memory_fraction_fn(MemoryFractionFn fn) { memory_fraction_fn_ = std::move(fn); }
  // Sets the hook called on record_stream(); without one, cudakit orders frees itself.
  // @param fn the hook; empty for none.
  void set_record_stream_fn(RecordStreamFn fn) { record_stream_fn_ = std::move(fn); }

  // @return the allocation function.
  [[nodiscard]] const AllocFn& alloc_fn() const noexcept { return alloc_fn_; }
  // @return the free function.
  [[nodiscard]] const FreeFn& free_fn() const noexcept { return free_fn_; }
  // @return the init hook (empty when not set).
  [[nodiscard]] const InitFn& init_fn() const noexcept { return init_fn_; }
  // @return the reset hook (empty when not set).
  [[nodiscard]] const ResetFn& reset_fn() const noexcept { return reset_fn_; }
  // @return the memory-fraction hook (empty when not set).
  [[nodiscard]] const MemoryFractionFn& memory_fraction_fn() const noexcept { return memory_fraction_fn_; }
  // @return the record_stream hook (empty when not set).
  [[nodiscard]] const RecordStreamFn& record_stream_fn() const noexcept { return record_stream_fn_; }
  // The library the functions came from; empty when they were given directly.
  // @return the path given to the constructor, or "".
  [[nodiscard]] const std::string& library_path() const noexcept { return library_path_; }

 private:
  AllocFn alloc_fn_;
  FreeFn free_fn_;
  InitFn init_fn_;
  ResetFn reset_fn_;
  MemoryFractionFn memory_fraction_fn_;
  RecordStreamFn record_stream_fn_;
  std::string library_path_;
};

}  // namespace cudakit::memory
