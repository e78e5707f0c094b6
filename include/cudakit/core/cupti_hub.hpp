#pragma once
// @brief CuptiHub: the process's one CUPTI subscription, shared by everything in cudakit that needs
// CUPTI (the profiler's activity tracing, graph kernel annotations' node-id mapping), so that
// they work together in one process — CUPTI allows a single subscriber, and PyTorch's profiler
// and annotations conflict over it.
//
// libcupti is loaded at run time, through its table (cudakit/core/detail/cupti_api.hpp):
// binaries start where it is absent, and available() says so. All members are thread-safe.
// Callbacks run on the thread that made the CUDA call (or CUPTI's worker thread for activity
// buffers) and must not call back into the hub.

#include <cupti.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cudakit {

class CuptiHub {
 public:
  // The process-wide hub; loads libcupti and subscribes on first use.
  static CuptiHub& instance();

  // False when libcupti could not be loaded or cuptiSubscribe failed (reason()).
  [[nodiscard]] bool available() const noexcept;
  [[nodiscard]] const std::string& reason() const noexcept;

  // API/resource callbacks. The hub enables `domain` (or one callback id with add_callback_id)
  // while at least one listener wants it. Returns a listener id for remove_callback.
  using CallbackFn = std::function<void(CUpti_CallbackDomain, CUpti_CallbackId, const void* data)>;
  // @throws StateError when !available() or CUPTI refuses to enable the domain / id.
  int add_callback(CUpti_CallbackDomain domain, CallbackFn fn);
  int add_callback_id(CUpti_CallbackDomain domain, CUpti_CallbackId id, CallbackFn fn);
  void remove_callback(int listener);

  // Activity records. Enables `kinds` while at least one listener wants them; every completed
  // record of those kinds is passed to `fn` (from flush() or CUPTI's buffer-completion thread).
  using ActivityFn = std::function<void(const CUpti_Activity& record)>;
  // @throws StateError when !available() or CUPTI refuses a kind (none stays enabled for it).
  int add_activity_listener(std::vector<CUpti_ActivityKind> kinds, ActivityFn fn);
  void remove_activity_listener(int listener);
  // Delivers every buffered record now (cuptiActivityFlushAll with forced flush).
  void flush();

  // The CUPTI calls other parts need, through the loaded library (nullptr / error when absent).
  CUptiResult get_graph_node_id(CUgraphNode node, std::uint64_t* id) const;
  CUptiResult get_graph_id(CUgraph graph, std::uint32_t* id) const;
  // The id kernel records of a replay carry as "graph id": the executable graph's, not the
  // captured graph's (see notes/profiler.md for what the H200 showed about node ids).
  CUptiResult get_graph_exec_id(CUgraphExec exec, std::uint32_t* id) const;
  // Now, in ns on CUPTI's clock (cuptiGetTimestamp), the clock of every activity record: host
  // ranges stamped with it line up with device records in exported traces. Without CUPTI, the
  // system clock's nanoseconds since the epoch.
  [[nodiscard]] std::uint64_t timestamp() const;
  // The API's name for a callback id ("cudaLaunchKernel"), or "cbid <n>" when CUPTI has none.
  [[nodiscard]] std::string callback_name(CUpti_CallbackDomain domain, CUpti_CallbackId id) const;
  // Activity records CUPTI dropped (buffers full) since the hub started.
  [[nodiscard]] std::uint64_t dropped_records() const noexcept;
  // Thread ids in CUPTI's records are system ids (gettid), the ids record_function uses.
  [[nodiscard]] static std::uint32_t current_thread_id() noexcept;

  CuptiHub(const CuptiHub&) = delete;
  CuptiHub& operator=(const CuptiHub&) = delete;

 private:
  CuptiHub();
  ~CuptiHub();
  struct Impl;
  Impl* impl_;
};

}  // namespace cudakit
