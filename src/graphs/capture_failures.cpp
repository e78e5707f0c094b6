#include "graphs/detail/capture_failures.hpp"

#include <cupti.h>

#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "cudakit/core/cupti_hub.hpp"

namespace cudakit::graphs::detail {
namespace {

struct Record {
  std::uint64_t sequence;
  std::thread::id thread;
  FailedCall call;
};

// CUPTI may name a runtime function with its version suffix ("cudaMalloc_v3020").
std::string plain_name(const char* name) {
  std::string s = name ? name : "";
  const auto v = s.rfind("_v");
  if (v != std::string::npos && v + 2 < s.size() &&
      s.find_first_not_of("0123456789", v + 2) == std::string::npos) {
    s.erase(v);
  }
  return s;
}

// Process-wide: the CUPTI listener serves every watch at once.
struct Monitor {
  std::mutex mutex;
  int watches = 0;
  int listener = -1;
  std::uint64_t sequence = 0;
  std::deque<Record> records;  // the latest few, oldest first

  static constexpr std::size_t kKept = 64;

  void on_runtime_call(const void* data) {
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (cb->callbackSite != CUPTI_API_EXIT || !cb->functionReturnValue) return;
    const auto status = *static_cast<const cudaError_t*>(cb->functionReturnValue);
    if (!is_capture_error(status)) return;
    std::lock_guard lock(mutex);
    records.push_back({++sequence, std::this_thread::get_id(),
                       {plain_name(cb->functionName), status}});
    if (records.size() > kKept) records.pop_front();
  }
};

Monitor& monitor() {
  static Monitor* m = new Monitor;  // never destroyed: CUPTI may call back during exit
  return *m;
}

}  // namespace

bool is_capture_error(cudaError_t status) noexcept {
  switch (status) {
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
    case cudaErrorStreamCaptureMerge:
    case cudaErrorStreamCaptureUnmatched:
    case cudaErrorStreamCaptureUnjoined:
    case cudaErrorStreamCaptureIsolation:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorCapturedEvent:
    case cudaErrorStreamCaptureWrongThread:
      return true;
    default:
      return false;
  }
}

CaptureFailureWatch::CaptureFailureWatch() {
  Monitor& m = monitor();
  bool subscribe = false;
  {
    std::lock_guard lock(m.mutex);
    start_sequence_ = m.sequence;
    subscribe = m.watches++ == 0;
  }
  if (!subscribe) return;
  auto& hub = CuptiHub::instance();
  if (!hub.available()) return;
  const int id = hub.add_callback(CUPTI_CB_DOMAIN_RUNTIME_API,
                                  [](CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
                                    monitor().on_runtime_call(data);
                                  });
  std::lock_guard lock(m.mutex);
  m.listener = id;
}

CaptureFailureWatch::~CaptureFailureWatch() {
  Monitor& m = monitor();
  int listener = -1;
  {
    std::lock_guard lock(m.mutex);
    if (--m.watches == 0) listener = std::exchange(m.listener, -1);
  }
  // Unsubscribed when no capture runs: the runtime-API domain costs every call a callback.
  if (listener >= 0) CuptiHub::instance().remove_callback(listener);
}

std::optional<FailedCall> CaptureFailureWatch::culprit() const {
  Monitor& m = monitor();
  {
    std::lock_guard lock(m.mutex);
    const Record* other_thread = nullptr;
    for (const Record& r : m.records) {
      if (r.sequence <= start_sequence_) continue;
      if (r.thread == std::this_thread::get_id()) return r.call;
      if (!other_thread) other_thread = &r;
    }
    if (other_thread) return other_thread->call;
  }
  const cudaError_t last = cudaPeekAtLastError();
  if (is_capture_error(last)) return FailedCall{"", last};
  return std::nullopt;
}

}  // namespace cudakit::graphs::detail
