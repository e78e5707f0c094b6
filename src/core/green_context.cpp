#include "cudakit/core/green_context.hpp"

#include <numeric>
#include <utility>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/stream_registry.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/runtime_info.hpp"
#include "cudakit/core/trace_hooks.hpp"

namespace cudakit {
namespace {

struct DeviceSms {
  CUdevice device = 0;
  CUdevResource resource{};
  SmResourceInfo info;
};

// A driver that leaves minSmPartitionSize and smCoscheduledAlignment unset (before 13.0) still
// rounds: its smallest partition is the answer to a request of 1 SM, and the step above it the
// alignment.
SmResourceInfo probe_granularity(const CUdevResource& whole) {
  auto smallest_at_least = [&](unsigned count) {
    CUdevResource part{};
    unsigned groups = 1;
    CUDAKIT_DRIVER_CALL(cuDevSmResourceSplitByCount, &part, &groups, &whole, nullptr, 0u, count);
    return groups == 1 ? part.sm.smCount : 0u;
  };
  SmResourceInfo info{whole.sm.smCount, smallest_at_least(1), 0};
  const unsigned next = info.min_partition < info.sm_count ? smallest_at_least(info.min_partition + 1) : 0;
  info.alignment = next > info.min_partition ? next - info.min_partition : info.min_partition;
  return info;
}

DeviceSms device_sms(int ordinal) {
  DeviceSms out;
  const DeviceGuard guard(ordinal);
  CUDAKIT_CHECK_CUDA(cudaFree(nullptr));  // the driver initialized, the primary context made
  CUDAKIT_DRIVER_CALL(cuDeviceGet, &out.device, ordinal);
  CUDAKIT_DRIVER_CALL(cuDeviceGetDevResource, out.device, &out.resource, CU_DEV_RESOURCE_TYPE_SM);
  out.info = {out.resource.sm.smCount, out.resource.sm.minSmPartitionSize, out.resource.sm.smCoscheduledAlignment};
  if (out.info.min_partition == 0 || out.info.alignment == 0) out.info = probe_granularity(out.resource);
  return out;
}

unsigned green_sm_count(CUgreenCtx context) {
  CUdevResource resource{};
  CUDAKIT_DRIVER_CALL(cuGreenCtxGetDevResource, context, &resource, CU_DEV_RESOURCE_TYPE_SM);
  return resource.sm.smCount;
}

cudaStream_t make_stream(CUgreenCtx context, int device, int priority) {
  CUstream stream = nullptr;
  CUDAKIT_DRIVER_CALL(cuGreenCtxStreamCreate, &stream, context, CU_STREAM_NON_BLOCKING, priority);
  auto* handle = reinterpret_cast<cudaStream_t>(stream);
  detail::note_stream_created(handle);
  CUDAKIT_TRACE({.kind = TraceEventKind::stream_create, .device = device, .stream = handle});
  return handle;
}

void destroy_stream(cudaStream_t stream, int device) noexcept {
  CUDAKIT_TRACE_NOTHROW({.kind = TraceEventKind::stream_destroy, .device = device, .stream = stream});
  detail::note_stream_gone(stream);
  CUDAKIT_WARN_CUDA(cudaStreamDestroy(stream));
}

// The set_context calls of this thread not yet popped, innermost last.
struct SetContext {
  const GreenContext* context;
  CUcontext previous_context;
  StreamRef previous_stream;
};
thread_local std::vector<SetContext> set_contexts;

}  // namespace

SmResourceInfo GreenContext::device_resource(int device) {
  return device_sms(detail::resolve_device(device, "GreenContext::device_resource")).info;
}

GreenContext GreenContext::from_resources(CUdevResource* resources, unsigned count, int device, unsigned requested) {
  CUdevice cu_device = 0;
  CUDAKIT_DRIVER_CALL(cuDeviceGet, &cu_device, device);
  CUdevResourceDesc description = nullptr;
  CUDAKIT_DRIVER_CALL(cuDevResourceGenerateDesc, &description, resources, count);
  GreenContext out;
  CUDAKIT_DRIVER_CALL(cuGreenCtxCreate, &out.handle_, description, cu_device, CU_GREEN_CTX_DEFAULT_STREAM);
  out.device_ = device;
  out.requested_ = requested;
  out.sm_count_ = green_sm_count(out.handle_);
  out.stream_ = make_stream(out.handle_, device, 0);
  return out;
}

GreenContext GreenContext::create(unsigned num_sms, int device, std::optional<WorkqueueConfig> workqueues) {
  device = detail::resolve_device(device, "GreenContext::create");
  if (workqueues) {
    throw StateError("GreenContext::create",
                     detail::concat("workqueue configuration is unsupported by this driver: it needs CUDA 13.1 "
                                    "(CU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG); the driver is ",
                                    format_cuda_version(driver_version()),
                                    " and cudakit was built against the CUDA 13.0 headers"));
  }
  DeviceSms sms = device_sms(device);
  const unsigned granted = granted_sm_count(sms.info, num_sms);
  CUdevResource part{};
  unsigned groups = 1;
  CUDAKIT_DRIVER_CALL(cuDevSmResourceSplitByCount, &part, &groups, &sms.resource, nullptr, 0u, granted);
  if (groups != 1) {
    throw CudaError(cudaErrorInvalidValue, "cuDevSmResourceSplitByCount",
                    detail::concat("no partition of ", granted, " SMs on device ", device));
  }
  return from_resources(&part, 1, device, num_sms);
}

std::vector<GreenContext> GreenContext::split(int device, std::span<const unsigned> sm_counts) {
  device = detail::resolve_device(device, "GreenContext::split");
  DeviceSms sms = device_sms(device);
  const std::vector<unsigned> grants = plan_sm_split(sms.info, sm_counts);
  // One split into groups of the grants' common unit, so that every group comes from the same
  // split call and none overlaps another (See Note [Green contexts]).
  unsigned unit = 0;
  for (unsigned grant : grants) unit = std::gcd(unit, grant);
  if (unit < sms.info.min_partition) unit = sms.info.min_partition;
  for (unsigned grant : grants) {
    if (grant % unit != 0) {
      throw InvalidArgumentError("GreenContext::split",
                                 detail::concat("partitions of ", grant, " SMs cannot be built from groups of ", unit,
                                                " (the device's minimum partition ", sms.info.min_partition,
                                                "): request counts with a common multiple of it"));
    }
  }
  unsigned wanted = 0;
  for (unsigned grant : grants) wanted += grant / unit;
  std::vector<CUdevResource> groups(wanted);
  unsigned made = wanted;
  CUDAKIT_DRIVER_CALL(cuDevSmResourceSplitByCount, groups.data(), &made, &sms.resource, nullptr, 0u, unit);
  if (made < wanted) {
    throw InvalidArgumentError("GreenContext::split",
                               detail::concat("the driver made ", made, " groups of ", unit, " SMs on device ", device,
                                              ", ", wanted, " needed for the partitions requested"));
  }
  std::vector<GreenContext> out;
  unsigned next = 0;
  for (std::size_t i = 0; i < grants.size(); ++i) {
    const unsigned count = grants[i] / unit;
    out.push_back(from_resources(groups.data() + next, count, device, sm_counts[i]));
    next += count;
  }
  return out;
}

GreenContext::~GreenContext() { destroy(); }

GreenContext::GreenContext(GreenContext&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), device_(other.device_), sm_count_(other.sm_count_),
      requested_(other.requested_), stream_(std::exchange(other.stream_, nullptr)),
      extra_streams_(std::exchange(other.extra_streams_, {})) {}

GreenContext& GreenContext::operator=(GreenContext&& other) noexcept {
  if (this != &other) {
    destroy();
    handle_ = std::exchange(other.handle_, nullptr);
    device_ = other.device_;
    sm_count_ = other.sm_count_;
    requested_ = other.requested_;
    stream_ = std::exchange(other.stream_, nullptr);
    extra_streams_ = std::exchange(other.extra_streams_, {});
  }
  return *this;
}

void GreenContext::destroy() noexcept {
  if (handle_ == nullptr) return;
  for (cudaStream_t stream : extra_streams_) destroy_stream(stream, device_);
  extra_streams_.clear();
  if (stream_ != nullptr) destroy_stream(std::exchange(stream_, nullptr), device_);
  if (const auto destroy_context = detail::driver().cuGreenCtxDestroy) destroy_context(std::exchange(handle_, nullptr));
  handle_ = nullptr;
}

void GreenContext::check_usable(const char* api) const {
  if (handle_ == nullptr) throw StateError(api, "the GreenContext was moved from");
}

unsigned GreenContext::sm_count() const {
  check_usable("GreenContext::sm_count");
  return sm_count_;
}

unsigned GreenContext::requested_sm_count() const {
  check_usable("GreenContext::requested_sm_count");
  return requested_;
}

int GreenContext::device() const {
  check_usable("GreenContext::device");
  return device_;
}

CUgreenCtx GreenContext::handle() const {
  check_usable("GreenContext::handle");
  return handle_;
}

CUcontext GreenContext::context() const {
  check_usable("GreenContext::context");
  CUcontext context = nullptr;
  CUDAKIT_DRIVER_CALL(cuCtxFromGreenCtx, &context, handle_);
  return context;
}

StreamRef GreenContext::stream() const {
  check_usable("GreenContext::stream");
  return StreamRef(stream_, device_);
}

StreamRef GreenContext::create_stream(int priority) {
  check_usable("GreenContext::create_stream");
  extra_streams_.reserve(extra_streams_.size() + 1);
  extra_streams_.push_back(make_stream(handle_, device_, priority));
  return StreamRef(extra_streams_.back(), device_);
}

void GreenContext::set_context() const {
  check_usable("GreenContext::set_context");
  SetContext entry{this, nullptr, current_stream(device_)};
  CUDAKIT_DRIVER_CALL(cuCtxGetCurrent, &entry.previous_context);
  set_contexts.reserve(set_contexts.size() + 1);
  CUDAKIT_DRIVER_CALL(cuCtxSetCurrent, context());
  set_current_stream(stream());
  set_contexts.push_back(entry);
}

void GreenContext::pop_context() const {
  check_usable("GreenContext::pop_context");
  if (set_contexts.empty() || set_contexts.back().context != this) {
    throw StateError("GreenContext::pop_context",
                     set_contexts.empty() ? "no set_context of this thread to undo"
                                          : "the innermost set_context of this thread is another green context's");
  }
  const SetContext entry = set_contexts.back();
  set_contexts.pop_back();
  set_current_stream(entry.previous_stream);
  CUDAKIT_DRIVER_CALL(cuCtxSetCurrent, entry.previous_context);
}

GreenContextScope::GreenContextScope(const GreenContext& context) {
  previous_stream_ = current_stream(context.device());
  CUDAKIT_DRIVER_CALL(cuCtxGetCurrent, &previous_context_);
  CUDAKIT_DRIVER_CALL(cuCtxSetCurrent, context.context());
  set_current_stream(context.stream());
}

GreenContextScope::~GreenContextScope() {
  try {
    set_current_stream(previous_stream_);
  } catch (...) {
    // The stream was the current one a moment ago: nothing to report but a dying runtime.
  }
  if (const auto set = detail::driver().cuCtxSetCurrent) set(previous_context_);
}

unsigned sm_count_of(StreamRef stream) {
  const auto& driver = detail::driver();
  if (driver.cuStreamGetCtxWithGreen != nullptr && !stream.is_default()) {
    CUcontext context = nullptr;
    CUgreenCtx green = nullptr;
    CUDAKIT_CHECK_DRIVER(driver.cuStreamGetCtxWithGreen(reinterpret_cast<CUstream>(stream.handle()), &context, &green));
    if (green != nullptr) return green_sm_count(green);
  }
  int count = 0;
  CUDAKIT_CHECK_CUDA(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, stream.device()));
  return static_cast<unsigned>(count);
}

}  // namespace cudakit
