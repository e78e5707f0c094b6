#pragma once
// @brief GreenContext: a partition of a GPU's SMs as a kind of device (torch.cuda.green_contexts;
// NVIDIA's cudax calls it a logical device). Work on its streams runs on its SMs only.

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <optional>
#include <span>
#include <vector>

#include "cudakit/core/sm_partition.hpp"
#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

// Note [Green contexts]
// The driver describes a device's SMs as a resource (cuDeviceGetDevResource) with a minimum
// partition size and an alignment (on sm_90: 8 and 8; read, never assumed). create() rounds a
// request up to them (granted_sm_count) and carves one partition; split() carves several
// disjoint ones from a single cuDevSmResourceSplitByCount call — groups of the requests' common
// unit, several groups joined into one partition's descriptor — so that no two share an SM
// (torch's separate create() calls may overlap, and do not say how many SMs each got). Each
// context reports the SMs the driver actually gave it (cuGreenCtxGetDevResource).
//
// Streams of a green context are non-blocking driver streams created in it; the runtime and so
// every cudakit operation accept them like any other stream, and they are registered as cudakit
// streams (the allocator's cross-stream bookkeeping knows them). sm_count_of(stream) says how
// many SMs a stream's work can use, for tuning keys.

// A workqueue configuration (CUDA 13.1's CU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG).
struct WorkqueueConfig {
  unsigned concurrency_limit = 0;  // concurrent workqueues; 0: the driver's choice
  bool shared = true;  // whether the workqueues are shared
};

// An owning, move-only green context: a partition of one device's SMs with its own streams; work
// queued on those streams runs only on the partition's SMs. Made by create() or split(); destroyed
// with its owner (See Note [Green contexts]).
class GreenContext {
 public:
  // A context of at least `num_sms` SMs of `device` (-1: current), rounded to the device's
  // granularity; sm_count() says what was granted. A `workqueues` configuration needs a CUDA
  // 13.1 driver and headers.
  // @param num_sms the fewest SMs wanted.
  // @param device the device ordinal; -1 means the current device.
  // @param workqueues a workqueue configuration; leave empty (see @throws StateError).
  // @return the new context, with its own non-blocking stream.
  // @throws InvalidArgumentError for 0 SMs or more than the device has (naming the rounding).
  // @throws CudaError where the driver lacks green contexts (needs 12.4) or refuses.
  // @throws StateError ("unsupported by this driver") for a workqueue configuration.
  [[nodiscard]] static GreenContext create(unsigned num_sms, int device = -1,
                                           std::optional<WorkqueueConfig> workqueues = std::nullopt);
  // Disjoint partitions of `device`, one per entry of `sm_counts`, each rounded as create's.
  // @param device the device ordinal; -1 means the current device.
  // @param sm_counts the fewest SMs wanted for each partition.
  // @return one context per entry of `sm_counts`, in order; no two share an SM.
  // @throws InvalidArgumentError when the rounded counts exceed the device's SMs, or cannot be
  //         built from groups of one common size.
  // @throws CudaError where the driver lacks green contexts or refuses.
  [[nodiscard]] static std::vector<GreenContext> split(int device, std::span<const unsigned> sm_counts);
  // The device's SM resource as the driver describes it.
  // @param device the device ordinal; -1 means the current device.
  // @return its SM count, minimum partition and alignment.
  // @throws CudaError where the driver lacks green contexts.
  [[nodiscard]] static SmResourceInfo device_resource(int device = -1);

  // Destroys the context's streams and the context. Work queued on them should have completed: the
  // caller synchronizes first. Never throws.
  ~GreenContext();
  // Not copyable: a GreenContext has one owner.
  GreenContext(const GreenContext&) = delete;
  // Not copyable: a GreenContext has one owner.
  GreenContext& operator=(const GreenContext&) = delete;
  // A moved-from GreenContext owns nothing, and every use of it throws StateError.
  // @param other the context to take; it is moved-from afterwards.
  GreenContext(GreenContext&& other) noexcept;
  // Destroys the context this one owned, then takes `other`'s.
  // @param other the context to take; it is moved-from afterwards.
  // @return this context.
  GreenContext& operator=(GreenContext&& other) noexcept;

  // Every accessor below throws StateError on a moved-from GreenContext.
  // @return the SMs the driver granted (the request rounded up, as reported by the driver).
  [[nodiscard]] unsigned sm_count() const;
  // @return the SMs asked for in create() or split().
  [[nodiscard]] unsigned requested_sm_count() const;
  // @return the ordinal of the context's device.
  [[nodiscard]] int device() const;
  // @return the driver's handle, owned by this object.
  [[nodiscard]] CUgreenCtx handle() const;
  // The context as a CUcontext (cuCtxFromGreenCtx), for driver calls and cuCtxSetCurrent.
  // @return the context as a CUcontext, owned by this object.
  // @throws CudaError when the driver cannot convert it.
  [[nodiscard]] CUcontext context() const;
  // The context's own non-blocking stream, valid as long as the context.
  // @return a reference to the stream, valid while the context lives.
  [[nodiscard]] StreamRef stream() const;
  // Another non-blocking stream of the context with `priority`, owned by the context.
  // @param priority the stream's priority (0: lowest; see stream_priority_range).
  // @return a reference to the new stream, valid while the context lives.
  // @throws CudaError when the stream cannot be created.
  [[nodiscard]] StreamRef create_stream(int priority = 0);

  // torch's legacy names: make this context current on the calling thread (its stream the
  // current stream of its device), and undo it. Calls nest; pop_context must undo the
  // innermost set_context of this thread, and it must be this context's.
  // @throws StateError for a pop without its set, or of another context.
  // @throws CudaError when the driver cannot make the context current.
  void set_context() const;
  // Undoes this thread's innermost set_context(), which must be this context's: the previous
  // driver context and current stream are restored.
  // @throws StateError for a pop without its set, or of another context.
  // @throws CudaError when the driver cannot restore the previous context.
  void pop_context() const;

 private:
  GreenContext() = default;
  void check_usable(const char* api) const;
  void destroy() noexcept;
  static GreenContext from_resources(CUdevResource* resources, unsigned count, int device,
                                     unsigned requested);

  CUgreenCtx handle_ = nullptr;
  int device_ = -1;
  unsigned sm_count_ = 0;
  unsigned requested_ = 0;
  cudaStream_t stream_ = nullptr;
  std::vector<cudaStream_t> extra_streams_;
};

// Makes a green context current for a scope: the driver context and the current stream of its
// device; both are restored at the end (torch: `with green_ctx:`).
class GreenContextScope {
 public:
  // @param context the context to make current; it must outlive the scope.
  // @throws StateError for a moved-from context.
  // @throws CudaError when the driver cannot make it current.
  explicit GreenContextScope(const GreenContext& context);
  // Restores the previous driver context and current stream. Never throws.
  ~GreenContextScope();
  // Not copyable: exactly one scope restores the previous state.
  GreenContextScope(const GreenContextScope&) = delete;
  // Not copyable: exactly one scope restores the previous state.
  GreenContextScope& operator=(const GreenContextScope&) = delete;

 private:
  CUcontext previous_context_ = nullptr;
  StreamRef previous_stream_{nullptr, 0};
};

// The SMs work queued on `stream` can use: its green context's count, or the whole device's.
// @param stream any stream.
// @return the SM count available to the stream's work.
// @throws CudaError when the driver or runtime cannot answer.
[[nodiscard]] unsigned sm_count_of(StreamRef stream);

}  // namespace cudakit
