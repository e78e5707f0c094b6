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

// The process's single CUPTI subscriber, shared by every part of cudakit that listens to CUPTI. Get
// it with instance(); all members are thread-safe.
class CuptiHub {
 public:
  // The process-wide hub; loads libcupti and subscribes on first use. Never throws for a
  // missing libcupti (available() says so).
  // @return the hub, which lives until the process exits.
  static CuptiHub& instance();

  // False when libcupti could not be loaded or cuptiSubscribe failed (reason()).
  // @return true when CUPTI can be used.
  [[nodiscard]] bool available() const noexcept;
  // @return why CUPTI is unavailable; empty when it is available.
  [[nodiscard]] const std::string& reason() const noexcept;

  // API/resource callbacks. The hub enables `domain` (or one callback id with add_callback_id)
  // while at least one listener wants it. Returns a listener id for remove_callback.
  // A callback: the domain, the callback id and CUPTI's data for it (e.g. a CUpti_CallbackData).
  using CallbackFn = std::function<void(CUpti_CallbackDomain, CUpti_CallbackId, const void* data)>;
  // Listens to every callback of `domain`.
  // @param domain the CUPTI callback domain (e.g. CUPTI_CB_DOMAIN_RUNTIME_API).
  // @param fn called for each callback, on the thread that made the CUDA call.
  // @return the listener id, for remove_callback().
  // @throws StateError when !available() or CUPTI refuses to enable the domain.
  int add_callback(CUpti_CallbackDomain domain, CallbackFn fn);
  // Listens to one callback id of `domain` only.
  // @param domain the CUPTI callback domain.
  // @param id the callback id in that domain (e.g.
  //        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000).
  // @param fn called for each such callback, on the thread that made the CUDA call.
  // @return the listener id, for remove_callback().
  // @throws StateError when !available() or CUPTI refuses to enable the id.
  int add_callback_id(CUpti_CallbackDomain domain, CUpti_CallbackId id, CallbackFn fn);
  // Removes a listener; its domain or id is disabled when no other listener wants it. An unknown
  // id is ignored.
  // @param listener an id from add_callback() or add_callback_id().
  void remove_callback(int listener);

  // Activity records. Enables `kinds` while at least one listener wants them; every completed
  // record of those kinds is passed to `fn` (from flush() or CUPTI's buffer-completion thread).
  // An activity listener: called once per completed record of a kind it asked for.
  using ActivityFn = std::function<void(const CUpti_Activity& record)>;
  // @param kinds the activity kinds wanted (e.g. CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).
  // @param fn called for each completed record of those kinds.
  // @return the listener id, for remove_activity_listener().
  // @throws StateError when !available() or CUPTI refuses a kind (none stays enabled for it).
  // @throws InvalidArgumentError for a kind CUPTI does not define.
  int add_activity_listener(std::vector<CUpti_ActivityKind> kinds, ActivityFn fn);
  // Removes a listener; its kinds are disabled when no other listener wants them. An unknown id
  // is ignored. Records already buffered may still reach it until the next flush().
  // @param listener an id from add_activity_listener().
  void remove_activity_listener(int listener);
  // Delivers every buffered record now (cuptiActivityFlushAll with forced flush), on the calling
  // thread; a no-op without CUPTI. Records of device work still running are not complete and
  // come later: synchronize first to see them all.
  void flush();

  // The CUPTI calls other parts need, through the loaded library (an error result when absent).
  // cuptiGetGraphNodeId.
  // @param node a node of a graph.
  // @param id receives CUPTI's id of the node.
  // @return CUPTI's result; CUPTI_ERROR_NOT_INITIALIZED without CUPTI.
  CUptiResult get_graph_node_id(CUgraphNode node, std::uint64_t* id) const;
  // cuptiGetGraphId.
  // @param graph a graph.
  // @param id receives CUPTI's id of the graph.
  // @return CUPTI's result; CUPTI_ERROR_NOT_INITIALIZED without CUPTI.
  CUptiResult get_graph_id(CUgraph graph, std::uint32_t* id) const;
  // The id kernel records of a replay carry as "graph id": the executable graph's, not the
  // captured graph's (see notes/profiler.md for what the H200 showed about node ids).
  // @param exec an executable graph.
  // @param id receives CUPTI's id of the executable graph.
  // @return CUPTI's result; CUPTI_ERROR_NOT_INITIALIZED without CUPTI.
  CUptiResult get_graph_exec_id(CUgraphExec exec, std::uint32_t* id) const;
  // Now, in ns on CUPTI's clock (cuptiGetTimestamp), the clock of every activity record: host
  // ranges stamped with it line up with device records in exported traces. Without CUPTI, the
  // system clock's nanoseconds since the epoch.
  // @return the time in nanoseconds.
  [[nodiscard]] std::uint64_t timestamp() const;
  // The API's name for a callback id ("cudaLaunchKernel"), or "cbid <n>" when CUPTI has none.
  // @param domain the callback's domain.
  // @param id the callback id.
  // @return the name.
  [[nodiscard]] std::string callback_name(CUpti_CallbackDomain domain, CUpti_CallbackId id) const;
  // Activity records CUPTI dropped (buffers full) since the hub started.
  // @return the count of dropped records.
  [[nodiscard]] std::uint64_t dropped_records() const noexcept;
  // Thread ids in CUPTI's records are system ids (gettid), the ids record_function uses.
  // @return the calling thread's system id.
  [[nodiscard]] static std::uint32_t current_thread_id() noexcept;

  // Not copyable: there is one hub per process.
  CuptiHub(const CuptiHub&) = delete;
  // Not copyable: there is one hub per process.
  CuptiHub& operator=(const CuptiHub&) = delete;

 private:
  CuptiHub();
  ~CuptiHub();
  struct Impl;
  Impl* impl_;
};

}  // namespace cudakit
