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
  unsigned concurrency_limit = 0;
  bool shared = true;
};

class GreenContext {
 public:
  // A context of at least `num_sms` SMs of `device` (-1: current), rounded to the device's
  // granularity; sm_count() says what was granted. A `workqueues` configuration needs a CUDA
  // 13.1 driver and headers.
  // @throws InvalidArgumentError for 0 SMs or more than the device has (naming the rounding);
  // CudaError where the driver lacks green contexts (needs 12.4) or refuses; StateError
  // ("unsupported by this driver") for a workqueue configuration.
  [[nodiscard]] static GreenContext create(unsigned num_sms, int device = -1,
                                           std::optional<WorkqueueConfig> workqueues = std::nullopt);
  // Disjoint partitions of `device`, one per entry of `sm_counts`, each rounded as create's.
  // @throws InvalidArgumentError when the rounded counts exceed the device's SMs.
  [[nodiscard]] static std::vector<GreenContext> split(int device, std::span<const unsigned> sm_counts);
  // The device's SM resource as the driver describes it. @throws CudaError.
  [[nodiscard]] static SmResourceInfo device_resource(int device = -1);

  ~GreenContext();
  GreenContext(const GreenContext&) = delete;
  GreenContext& operator=(const GreenContext&) = delete;
  // A moved-from GreenContext owns nothing, and every use of it throws StateError.
  GreenContext(GreenContext&& other) noexcept;
  GreenContext& operator=(GreenContext&& other) noexcept;

  [[nodiscard]] unsigned sm_count() const;            // the SMs granted
  [[nodiscard]] unsigned requested_sm_count() const;  // the SMs asked for
  [[nodiscard]] int device() const;
  [[nodiscard]] CUgreenCtx handle() const;
  // The context as a CUcontext (cuCtxFromGreenCtx), for driver calls and cuCtxSetCurrent.
  [[nodiscard]] CUcontext context() const;
  // The context's own non-blocking stream, valid as long as the context.
  [[nodiscard]] StreamRef stream() const;
  // Another non-blocking stream of the context with `priority`, owned by the context.
  [[nodiscard]] StreamRef create_stream(int priority = 0);

  // torch's legacy names: make this context current on the calling thread (its stream the
  // current stream of its device), and undo it. Calls nest; pop_context must undo the
  // innermost set_context of this thread, and it must be this context's.
  // @throws StateError for a pop without its set, or of another context.
  void set_context() const;
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
  explicit GreenContextScope(const GreenContext& context);
  ~GreenContextScope();
  GreenContextScope(const GreenContextScope&) = delete;
  GreenContextScope& operator=(const GreenContextScope&) = delete;

 private:
  CUcontext previous_context_ = nullptr;
  StreamRef previous_stream_{nullptr, 0};
};

// The SMs work queued on `stream` can use: its green context's count, or the whole device's.
// @throws CudaError.
[[nodiscard]] unsigned sm_count_of(StreamRef stream);

}  // namespace cudakit
