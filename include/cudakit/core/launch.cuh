#pragma once
// @brief launch_kernel: how cudakit's layers launch their kernels (nvcc only). It reports the
// launch to the trace hooks (with the kernel's name and, where the caller declares them, the byte
// ranges it reads and writes: See Note [Runtime trace hooks]), launches, and checks the launch
// (CUDAKIT_CHECK_LAUNCH). With no trace listener attached it costs one relaxed load over a bare
// <<<...>>>.
//
//   cudakit::launch_kernel("tensor.fill", fill_kernel<float>, {grid, kBlockThreads}, stream,
//       cudakit::with_accesses([&] {
//         return std::array{cudakit::MemoryAccess{out, n * 4, cudakit::MemoryAccess::Mode::write}};
//       }),
//       out, n, value);

#include <cstddef>
#include <initializer_list>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cudakit/core/launch_check.hpp"
#include "cudakit/core/stream_ref.hpp"
#include "cudakit/core/trace_hooks.hpp"

namespace cudakit {

// A launch's configuration: the `<<<grid, block, shared_bytes>>>` of a kernel launch.
struct KernelGeometry {
  dim3 grid;  // blocks in the grid
  dim3 block;  // threads per block
  std::size_t shared_bytes = 0;  // dynamic shared memory per block, bytes
};

// The ranges a kernel touches, computed only when a trace listener is attached:
//   with_accesses([&] { return std::array{MemoryAccess{...}, ...}; })
// `make` returns any contiguous range of MemoryAccess (std::array, std::vector).
// @tparam Make a callable returning a contiguous range of MemoryAccess.
template <class Make>
struct DeclaredAccesses {
  Make make;  // called at most once per launch, only while a listener is attached
};
// Wraps `make` as the declared accesses of a launch_kernel call.
// @tparam Make a callable returning a contiguous range of MemoryAccess.
// @param make the callable; it may capture by reference (it runs during the launch call).
// @return the wrapper launch_kernel takes.
template <class Make>
[[nodiscard]] DeclaredAccesses<Make> with_accesses(Make make) {
  return {std::move(make)};
}

namespace detail {
template <class T>
inline constexpr bool is_declared_accesses = false;
template <class Make>
inline constexpr bool is_declared_accesses<DeclaredAccesses<Make>> = true;
template <class... Args>
concept NoDeclaredAccesses =
    sizeof...(Args) == 0 || !is_declared_accesses<std::remove_cvref_t<std::tuple_element_t<0, std::tuple<Args...>>>>;
}  // namespace detail

namespace detail {
// Inline, so compiled into the program's functions: CUDAKIT_KEEP_FRAME_POINTER lets a stack walk
// pass through them whatever the program's flags.
inline void trace_launch(const char* name, StreamRef stream, std::span<const MemoryAccess> accesses,
                         bool declared) {
  CUDAKIT_KEEP_FRAME_POINTER();
  emit_trace_event(TraceEvent{.kind = TraceEventKind::kernel_launch,
                              .device = stream.device(),
                              .stream = stream.handle(),
                              .name = name,
                              .accesses = accesses,
                              .accesses_declared = declared});
}
}  // namespace detail

// Launches `kernel` with `args` on `stream`, reporting the ranges `declared` makes. The kernel
// runs after the work queued before it on `stream`; the host does not wait.
// Stream-ordered on `stream`; returns once the kernel is queued. A fault while the kernel runs
// is reported by a later synchronizing call, not by this one.
// @tparam Params the kernel's parameter types.
// @tparam Make the declared accesses' callable.
// @tparam Args the argument types, converted to Params by the launch.
// @param name the kernel's name for listeners and errors (static storage).
// @param kernel the `__global__` function.
// @param geometry grid, block and dynamic shared memory.
// @param stream the stream the kernel is queued on.
// @param declared the ranges the kernel touches, made only while a listener is attached.
// @param args the kernel's arguments.
// @throws CudaError when the launch fails (bad configuration, too many resources, an earlier
//         sticky error).
// @throws whatever a trace listener throws (the sanitizer's SanitizerError), before the kernel
//         is launched.
template <class... Params, class Make, class... Args>
void launch_kernel(const char* name, void (*kernel)(Params...), const KernelGeometry& geometry,
                   StreamRef stream, const DeclaredAccesses<Make>& declared, Args&&... args) {
  if (trace_hooks_active()) [[unlikely]] {
    const auto accesses = declared.make();
    detail::trace_launch(name, stream, std::span<const MemoryAccess>(accesses), true);
  }
  kernel<<<geometry.grid, geometry.block, geometry.shared_bytes, stream.handle()>>>(
      std::forward<Args>(args)...);
  CUDAKIT_CHECK_LAUNCH(name);
}

// The same, for kernels whose accesses are not declared (listeners see accesses_declared false).
// Stream-ordered on `stream`; returns once the kernel is queued.
// @tparam Params the kernel's parameter types.
// @tparam Args the argument types, converted to Params by the launch.
// @param name the kernel's name for listeners and errors (static storage).
// @param kernel the `__global__` function.
// @param geometry grid, block and dynamic shared memory.
// @param stream the stream the kernel is queued on.
// @param args the kernel's arguments.
// @throws CudaError when the launch fails.
template <class... Params, class... Args>
  requires detail::NoDeclaredAccesses<Args...>
void launch_kernel(const char* name, void (*kernel)(Params...), const KernelGeometry& geometry,
                   StreamRef stream, Args&&... args) {
  if (trace_hooks_active()) [[unlikely]] detail::trace_launch(name, stream, {}, false);
  kernel<<<geometry.grid, geometry.block, geometry.shared_bytes, stream.handle()>>>(
      std::forward<Args>(args)...);
  CUDAKIT_CHECK_LAUNCH(name);
}

// What a user's kernel reads and writes, for cudakit::launch: the kernel's name and its byte
// ranges, each named by its argument (static strings: listeners keep the pointers).
//
//   cudakit::launch(scale, grid, block, stream,
//                   {"scale", {cudakit::reads(x, n * 4, "x"), cudakit::writes(y, n * 4, "y")}}, x, y, n);
struct Accesses {
  const char* kernel_name;                  // the kernel's name (static storage)
  std::initializer_list<MemoryAccess> list;  // the ranges it reads and writes
};
// A range the kernel reads.
// @param begin the range's first byte (device address).
// @param bytes the range's length.
// @param argument the kernel argument it belongs to, for reports (static storage; may be null).
// @return the access.
[[nodiscard]] constexpr MemoryAccess reads(const void* begin, std::size_t bytes, const char* argument = nullptr) {
  return {begin, bytes, MemoryAccess::Mode::read, argument};
}
// A range the kernel writes.
// @param begin the range's first byte (device address).
// @param bytes the range's length.
// @param argument the kernel argument it belongs to, for reports (static storage; may be null).
// @return the access.
[[nodiscard]] constexpr MemoryAccess writes(const void* begin, std::size_t bytes, const char* argument = nullptr) {
  return {begin, bytes, MemoryAccess::Mode::write, argument};
}
// A range the kernel both reads and writes.
// @param begin the range's first byte (device address).
// @param bytes the range's length.
// @param argument the kernel argument it belongs to, for reports (static storage; may be null).
// @return the access.
[[nodiscard]] constexpr MemoryAccess reads_writes(const void* begin, std::size_t bytes,
                                                  const char* argument = nullptr) {
  return {begin, bytes, MemoryAccess::Mode::read_write, argument};
}

// Launches a user's kernel with its declared accesses, so that the stream sanitizer (and any
// trace listener) sees what it touches; a kernel launched with <<<...>>> is not seen at all, and
// one through launch_kernel without accesses counts as unchecked. The kernel is queued on
// `stream` after the work already there; the host does not wait.
// The launch uses no dynamic shared memory.
// @tparam Params the kernel's parameter types.
// @tparam Args the argument types, converted to Params by the launch.
// @param kernel the `__global__` function.
// @param grid blocks in the grid.
// @param block threads per block.
// @param stream the stream the kernel is queued on.
// @param accesses the kernel's name and the ranges it touches.
// @param args the kernel's arguments.
// @throws CudaError when the launch fails.
// @throws whatever a trace listener throws (the sanitizer's SanitizerError), before the kernel
//         is launched.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, StreamRef stream, const Accesses& accesses,
            Args&&... args) {
  if (trace_hooks_active()) [[unlikely]] {
    detail::trace_launch(accesses.kernel_name, stream,
                         std::span<const MemoryAccess>(accesses.list.begin(), accesses.list.size()), true);
  }
  kernel<<<grid, block, 0, stream.handle()>>>(std::forward<Args>(args)...);
  CUDAKIT_CHECK_LAUNCH(accesses.kernel_name);
}

}  // namespace cudakit
