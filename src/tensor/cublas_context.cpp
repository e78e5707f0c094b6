#include "cudakit/tensor/detail/cublas_context.hpp"

#include <charconv>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cudakit/core/capture_hook.hpp"
#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/detail/component_registry.hpp"
#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/tensor/cublas_error.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/tensor/blas_handle.hpp"
#include "cudakit/tensor/cublas_workspace.hpp"

namespace cudakit::tensor {

// Note [cuBLAS workspaces]
// Many cuBLAS GEMM algorithms need scratch memory. Left alone, a handle takes it from a pool of
// its own that memory_stats never sees and that graph capture cannot account for, so (as torch
// does) every handle gets a workspace from the caching allocator:
// - Eagerly, one per (thread, stream), allocated on that stream: only work queued on the stream
//   uses it, so stream order alone keeps it safe, and freeing it (thread exit,
//   clear_cublas_workspaces) is an ordinary stream-ordered free. cublasSetStream resets a handle
//   to cuBLAS's own workspace, so the workspace is set again after every cublasSetStream.
// - While the stream is capturing, never the eager one: a graph replayed later on another
//   stream would share scratch memory with eager work running concurrently, and would keep
//   using it after the thread freed it. A capture gets its own workspace, allocated during the
//   capture and so routed to the graph's private pool, and freed into that pool when the capture
//   ends or fails (a CaptureHook): like any temporary freed during capture, its memory belongs
//   to the graph until reset(), and a later capture sharing the pool may reuse it (replays of
//   graphs sharing a pool must then keep their capture order, the rule torch states for shared
//   pools).
namespace {

// cuBLAS's row in `cudakit info`: the tensor layer links cuBLAS, so the version is read here,
// not in core (See Note [Components registered by their layer]).
const cudakit::detail::ComponentRegistration cublas_row(cudakit::detail::component_rank::cublas, [] {
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  return ComponentVersion{"cuBLAS", cudakit::detail::concat(major, ".", minor, ".", patch), "libcublas"};
});

struct CapturedWorkspace {
  unsigned long long capture_id;
  cudaStream_t stream;
  cublasHandle_t handle;
  void* ptr;
};

// Workspaces of captures in progress; frees them when their capture ends.
class CaptureWorkspaces final : public CaptureHook {
 public:
  // Never destroyed: capture hooks stay registered for the life of the process.
  static CaptureWorkspaces& instance() {
    static CaptureWorkspaces* registry = [] {
      auto* r = new CaptureWorkspaces;
      register_capture_hook(r);
      return r;
    }();
    return *registry;
  }

  void* get(cublasHandle_t handle, StreamRef stream, unsigned long long capture_id, std::size_t bytes) {
    std::lock_guard lock(mutex_);
    for (const CapturedWorkspace& w : captured_) {
      if (w.capture_id == capture_id && w.handle == handle) return w.ptr;
    }
    void* ptr = memory::allocate(bytes, stream);  // the capture's pool
    captured_.push_back({capture_id, stream.handle(), handle, ptr});
    return ptr;
  }

  void capture_begin(int) override {}
  std::uint64_t capture_end(int, StreamRef capture_stream) override {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    if (cudaStreamGetCaptureInfo(capture_stream.handle(), &status, &id) == cudaSuccess &&
        status == cudaStreamCaptureStatusActive) {
      release_if([&](const CapturedWorkspace& w) { return w.capture_id == id; });
    }
    return 0;  // replays need nothing from us
  }
  void capture_abort(int) noexcept override { release_finished(); }
  void replay(int, std::uint64_t, StreamRef) override {}

  // Frees the workspaces whose capture is no longer in progress on their stream.
  void release_finished() noexcept {
    release_if([](const CapturedWorkspace& w) {
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      unsigned long long id = 0;
      const cudaError_t e = cudaStreamGetCaptureInfo(w.stream, &status, &id);
      if (e != cudaSuccess) (void)cudaGetLastError();
      return e != cudaSuccess || status != cudaStreamCaptureStatusActive || id != w.capture_id;
    });
  }

 private:
  template <class Predicate>
  void release_if(Predicate&& done) noexcept {
    std::lock_guard lock(mutex_);
    std::erase_if(captured_, [&](const CapturedWorkspace& w) {
      if (!done(w)) return false;
      try {
        memory::deallocate(w.ptr);
      } catch (const std::exception&) {
        // The pool went first (only if the program released it mid-capture): nothing to free.
      }
      return true;
    });
  }

  std::mutex mutex_;
  std::vector<CapturedWorkspace> captured_;
};

struct DeviceHandle {
  cublasHandle_t handle = nullptr;
  std::size_t workspace_bytes = 0;
};

// The calling thread's handles (one per device) and eager workspaces (one per stream).
struct ThreadContext {
  std::unordered_map<int, DeviceHandle> handles;
  std::map<std::pair<int, cudaStream_t>, void*> workspaces;

  void free_workspaces() noexcept {
    for (auto& [key, ptr] : workspaces) {
      try {
        memory::deallocate(ptr);
      } catch (const std::exception&) {
        // At exit the allocator may be gone; the memory goes with the process.
      }
    }
    workspaces.clear();
  }
  ~ThreadContext() {
    free_workspaces();
    // Failures at thread exit are ignored: the runtime may be gone.
    for (auto& [device, h] : handles) cublasDestroy(h.handle);
  }
};

ThreadContext& thread_context() {
  thread_local ThreadContext context;
  return context;
}

}  // namespace

std::size_t parse_cublas_workspace_config(std::string_view config) {
  auto fail = [&](std::string_view why) -> std::size_t {
    throw InvalidArgumentError("parse_cublas_workspace_config",
                               cudakit::detail::concat("CUBLAS_WORKSPACE_CONFIG=\"", config, "\": ", why,
                                                       " (expected \":SIZE_KIB:COUNT\" pairs, e.g. \":4096:8\")"));
  };
  std::size_t total_kib = 0;
  std::string_view rest = config;
  if (rest.empty()) return fail("empty");
  int fields = 0;
  std::size_t size_kib = 0;
  while (!rest.empty()) {
    if (rest.front() != ':') return fail("each number must follow a ':'");
    rest.remove_prefix(1);
    std::size_t value = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (ec != std::errc() || end == rest.data()) return fail("a field is not a non-negative integer");
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    if (fields++ % 2 == 0) {
      size_kib = value;
    } else {
      if (size_kib != 0 && value > (std::size_t{1} << 40) / size_kib) return fail("the total is too large");
      total_kib += size_kib * value;
    }
  }
  if (fields % 2 != 0) return fail("a SIZE has no COUNT");
  return total_kib * 1024;
}

std::size_t cublas_workspace_size(int device) {
  if (const char* text = std::getenv("CUBLAS_WORKSPACE_CONFIG"); text && *text) {
    return parse_cublas_workspace_config(text);
  }
  const auto [major, minor] = get_device_capability(device);
  (void)minor;
  return major >= 9 ? std::size_t{32} << 20 : (std::size_t{8} << 20) + (std::size_t{128} << 10);
}

void clear_cublas_workspaces() {
  thread_context().free_workspaces();
  CaptureWorkspaces::instance().release_finished();
}

cublasHandle_t current_blas_handle() { return detail::cublas_handle(current_stream()); }

namespace detail {

void check_cublas(cublasStatus_t status, const char* api, std::source_location location) {
  if (status != CUBLAS_STATUS_SUCCESS) throw CublasError(status, api, {}, location);
}

cublasHandle_t cublas_handle(StreamRef stream) {
  ThreadContext& context = thread_context();
  const int device = stream.device();
  auto it = context.handles.find(device);
  if (it == context.handles.end()) {
    DeviceHandle h;
    h.workspace_bytes = cublas_workspace_size(device);
    check_cublas(cublasCreate(&h.handle), "cublasCreate");
    it = context.handles.emplace(device, h).first;
  }
  const DeviceHandle& h = it->second;
  check_cublas(cublasSetStream(h.handle, stream.handle()), "cublasSetStream");
  if (h.workspace_bytes == 0) return h.handle;  // CUBLAS_WORKSPACE_CONFIG=:0:0 - cuBLAS's own

  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long capture_id = 0;
  CUDAKIT_CHECK_CUDA(cudaStreamGetCaptureInfo(stream.handle(), &status, &capture_id));
  void* workspace = nullptr;
  if (status == cudaStreamCaptureStatusActive) {
    workspace = CaptureWorkspaces::instance().get(h.handle, stream, capture_id, h.workspace_bytes);
  } else {
    void*& eager = context.workspaces[{device, stream.handle()}];
    if (!eager) eager = memory::allocate(h.workspace_bytes, stream);
    workspace = eager;
  }
  check_cublas(cublasSetWorkspace(h.handle, workspace, h.workspace_bytes), "cublasSetWorkspace");
  return h.handle;
}

}  // namespace detail
}  // namespace cudakit::tensor
