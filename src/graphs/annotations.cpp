#include <cuda.h>
#include <cupti.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cudakit/core/cupti_hub.hpp"
#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/graphs/kernel_annotation_registry.hpp"
#include "cudakit/graphs/kernel_annotation_scope.hpp"
#include "graphs/detail/annotation_capture.hpp"

// Note [Kernel annotations]
// Goal: key each annotated node by the id the profiler reports for it when the graph is
// replayed — the graphNodeId of CUPTI's kernel, memcpy and memset activity records.
//
// Which node is that? Instantiation clones the captured graph: cudaGraphInstantiate makes a new
// node for every node of the cudaGraph_t, announcing each with CUPTI's resource callback
// CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED (CUpti_GraphData: node = the clone, originalNode = the
// captured node). Replays run the clones, and the activity records carry the clone's id, not
// the captured node's: NVIDIA's own cuda_graphs_trace sample re-keys, on this callback, what it
// learned about the original node to cuptiGetGraphNodeId(clone) before it joins activity
// records, and the GPU test (AnnotationGpu.IdsMatchCuptiActivity) checks both facts on every
// run: every replayed kernel's graphNodeId is a clone's id and none is a captured node's id.
// A graph instantiated twice therefore has two sets of ids, both recorded.
//
// So there are two steps.
// 1. At capture: which region was each node made in? Regions are per thread (mark_kernels), and
//    at each region boundary the capturing thread's AnnotationCapture lists the nodes of the
//    graph being captured (cudaStreamGetCaptureInfo + cudaGraphGetNodes: querying the capture
//    graph is allowed mid-capture) and gives the nodes it has not seen yet the regions open
//    until then. This needs no CUPTI and does not depend on which thread a callback runs on;
//    nodes created on forked streams of the capture are found as well.
// 2. At instantiation: while cudaGraphInstantiate runs, the CLONED callback (on the
//    instantiating thread) pairs each annotated captured node with its clone; afterwards the
//    clone's id is taken from the mechanism: cuGraphNodeGetToolsId(clone) (CUDA >= 13.1, the
//    id tools are meant to report) or cuptiGetGraphNodeId(clone). Both need the callback: no
//    public API lists an executable graph's nodes. Ids are read after instantiation returns,
//    because CuptiHub's callbacks must not call back into the hub.
//
// Under the cupti mechanism the clones are not needed: the profiler's GPU test
// (ProfilerGpu graph replay ids, driver 580.159 = CUDA 13.0) established that a replayed
// node's graphNodeId is (cuptiGetGraphExecId(exec) << 32) | (low 32 bits of the captured node's
// cuptiGetGraphNodeId), for kernel and memset nodes alike. Keyed that way, memcpy and memset
// nodes are annotated too; the CLONED callback, by contrast, did not name the nodes that replays
// run for memset and memcpy on that driver (the ids: notes/figures.md, notes/graphs.md), so it is
// used only for tools ids (cuGraphNodeGetToolsId on the clone).

namespace cudakit::graphs {
namespace {

using Regions = std::vector<Annotation>;

thread_local Regions t_regions;
thread_local detail::AnnotationCapture* t_active = nullptr;

// One cudaGraphInstantiate of an annotated graph, on the calling thread.
struct Instantiation {
  const std::unordered_map<cudaGraphNode_t, Regions>* annotated;
  struct Clone {
    cudaGraphNode_t clone;
    cudaGraphNode_t original;
    const Regions* regions;
  };
  std::vector<Clone> clones;
};
thread_local Instantiation* t_instantiating = nullptr;

struct State {
  std::mutex mutex;
  KernelAnnotations registry;
  std::optional<AnnotationMechanism> forced;
  bool listening = false;
  bool warned_no_clones = false;
};

State& state() {
  static State* s = new State;  // never destroyed: graphs may be instantiated during exit
  return *s;
}

bool tools_ids_supported() { return cudakit::detail::driver().cuGraphNodeGetToolsId != nullptr; }
bool cupti_available() { return CuptiHub::instance().available(); }

std::optional<AnnotationMechanism> from_environment() {
  const char* value = std::getenv("CUDAKIT_ANNOTATIONS_MECHANISM");
  if (!value || !*value || std::strcmp(value, "auto") == 0) return std::nullopt;
  for (auto m : {AnnotationMechanism::tools_id, AnnotationMechanism::cupti, AnnotationMechanism::none}) {
    if (std::strcmp(value, to_string(m)) == 0) return m;
  }
  static bool warned = false;
  if (!std::exchange(warned, true)) {
    CUDAKIT_LOG(warning, "CUDAKIT_ANNOTATIONS_MECHANISM=", value,
                " is not tools_id, cupti, none or auto; using auto");
  }
  return std::nullopt;
}

// Why `m` cannot work here, or nullptr when it can.
const char* unusable(AnnotationMechanism m) {
  if (m == AnnotationMechanism::none) return nullptr;
  if (!cupti_available()) {
    return "CUPTI is not available (its node-cloned callback maps captured nodes to replayed ones)";
  }
  if (m == AnnotationMechanism::tools_id && !tools_ids_supported()) {
    return "the driver has no cuGraphNodeGetToolsId (needs CUDA 13.1)";
  }
  return nullptr;
}

void on_node_cloned(const void* data) {
  Instantiation* inst = t_instantiating;
  if (!inst) return;
  const auto* resource = static_cast<const CUpti_ResourceData*>(data);
  const auto* graph = static_cast<const CUpti_GraphData*>(resource->resourceDescriptor);
  if (!graph) return;
  auto it = inst->annotated->find(graph->originalNode);
  if (it != inst->annotated->end()) inst->clones.push_back({graph->node, graph->originalNode, &it->second});
}

void ensure_clone_listener() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.listening) return;
  CuptiHub::instance().add_callback_id(
      CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
      [](CUpti_CallbackDomain, CUpti_CallbackId, const void* data) { on_node_cloned(data); });
  s.listening = true;  // kept: resource callbacks cost nothing outside graph building
}

std::optional<std::uint64_t> node_id(AnnotationMechanism m, cudaGraphNode_t node) {
  if (m == AnnotationMechanism::tools_id) {
    unsigned long long id = 0;
    if (cudakit::detail::driver().cuGraphNodeGetToolsId(node, &id) == CUDA_SUCCESS) return id;
    return std::nullopt;
  }
  std::uint64_t id = 0;
  if (CuptiHub::instance().get_graph_node_id(node, &id) == CUPTI_SUCCESS) return id;
  return std::nullopt;
}

// The type of a node that annotations cover (kernel, memcpy, memset), else nullopt.
std::optional<cudaGraphNodeType> annotated_type(cudaGraphNode_t node) {
  cudaGraphNodeType type{};
  if (cudaGraphNodeGetType(node, &type) != cudaSuccess) return std::nullopt;
  if (type == cudaGraphNodeTypeKernel || type == cudaGraphNodeTypeMemcpy ||
      type == cudaGraphNodeTypeMemset) {
    return type;
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(AnnotationMechanism mechanism) noexcept {
  switch (mechanism) {
    case AnnotationMechanism::tools_id: return "tools_id";
    case AnnotationMechanism::cupti: return "cupti";
    case AnnotationMechanism::none: break;
  }
  return "none";
}

AnnotationMechanism annotation_mechanism() {
  std::optional<AnnotationMechanism> chosen;
  {
    State& s = state();
    std::lock_guard lock(s.mutex);
    chosen = s.forced;
  }
  if (!chosen) chosen = from_environment();
  if (chosen && !unusable(*chosen)) return *chosen;
  if (!cupti_available()) return AnnotationMechanism::none;
  return tools_ids_supported() ? AnnotationMechanism::tools_id : AnnotationMechanism::cupti;
}

void set_annotation_mechanism(std::optional<AnnotationMechanism> mechanism) {
  if (mechanism) {
    if (const char* why = unusable(*mechanism)) {
      throw StateError("set_annotation_mechanism",
                       cudakit::detail::concat("mechanism ", to_string(*mechanism), " cannot work here: ", why));
    }
  }
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.forced = mechanism;
}

bool annotations_available() { return annotation_mechanism() != AnnotationMechanism::none; }

KernelAnnotations get_kernel_annotations() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.registry;
}

void clear_kernel_annotations() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.registry.clear();
}

void save_kernel_annotations(const std::string& path) {
  save_kernel_annotations(path, get_kernel_annotations());
}

// ---- regions ----

KernelAnnotationScope::KernelAnnotationScope(std::string name) { enter({{"name", std::move(name)}}); }
KernelAnnotationScope::KernelAnnotationScope(Annotation fields) { enter(std::move(fields)); }
KernelAnnotationScope::KernelAnnotationScope(std::initializer_list<Annotation::value_type> fields) { enter(Annotation(fields)); }

void KernelAnnotationScope::enter(Annotation fields) {
  if (auto* capture = detail::AnnotationCapture::active()) capture->attribute_new_nodes();
  t_regions.push_back(std::move(fields));
}

KernelAnnotationScope::~KernelAnnotationScope() {
  if (auto* capture = detail::AnnotationCapture::active()) capture->attribute_new_nodes();
  t_regions.pop_back();
}

const std::vector<Annotation>& current_regions() noexcept { return t_regions; }

Annotation current_annotation() {
  Annotation merged;
  for (const Annotation& region : t_regions) {
    for (const auto& [key, value] : region) merged.insert_or_assign(key, value);
  }
  return merged;
}

}  // namespace cudakit::graphs

namespace cudakit::graphs::detail {

AnnotationCapture::AnnotationCapture(cudaStream_t stream) : stream_(stream) { t_active = this; }

AnnotationCapture::~AnnotationCapture() {
  if (t_active == this) t_active = nullptr;
}

AnnotationCapture* AnnotationCapture::active() noexcept { return t_active; }

void AnnotationCapture::attribute_new_nodes() noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  // Errors are not cleared here: an invalidated capture is reported by capture_end, which may
  // need the thread's last error to name the culprit.
  if (cudaStreamGetCaptureInfo(stream_, &status, nullptr, &graph) != cudaSuccess ||
      status != cudaStreamCaptureStatusActive || !graph) {
    return;
  }
  std::size_t count = 0;
  if (cudaGraphGetNodes(graph, nullptr, &count) != cudaSuccess || count == seen_.size()) return;
  std::vector<cudaGraphNode_t> nodes(count);
  if (cudaGraphGetNodes(graph, nodes.data(), &count) != cudaSuccess) return;
  const auto& regions = t_regions;
  try {
    for (cudaGraphNode_t node : nodes) {
      if (!seen_.insert(node).second || regions.empty()) continue;
      const std::optional<cudaGraphNodeType> type = annotated_type(node);
      if (!type) continue;
      annotated_.emplace(node, regions);
    }
  } catch (const std::bad_alloc&) {
    CUDAKIT_LOG(warning, "out of host memory while recording kernel annotations");
  }
}

void AnnotationCapture::finish() noexcept {
  attribute_new_nodes();
  if (t_active == this) t_active = nullptr;
}

cudaGraphExec_t AnnotationCapture::instantiate(cudaGraph_t graph, unsigned long long flags) {
  cudaGraphExec_t exec = nullptr;
  const AnnotationMechanism mechanism = annotation_mechanism();
  if (annotated_.empty() || mechanism != AnnotationMechanism::tools_id) {
    CUDAKIT_CHECK_CUDA(cudaGraphInstantiateWithFlags(&exec, graph, flags));
    if (annotated_.empty() || mechanism == AnnotationMechanism::none) return exec;
    // cupti: replayed ids derive from the executable graph's id and the captured nodes' ids.
    auto& hub = CuptiHub::instance();
    std::uint32_t exec_id = 0;
    if (hub.get_graph_exec_id(reinterpret_cast<CUgraphExec>(exec), &exec_id) != CUPTI_SUCCESS) {
      CUDAKIT_LOG(warning, "cuptiGetGraphExecId failed; this graph's annotations were not recorded");
      return exec;
    }
    State& s = state();
    std::lock_guard lock(s.mutex);
    for (const auto& [node, regions] : annotated_) {
      std::uint64_t captured_id = 0;
      if (hub.get_graph_node_id(node, &captured_id) != CUPTI_SUCCESS) continue;
      const std::uint64_t id = (std::uint64_t{exec_id} << 32) | (captured_id & 0xffffffffull);
      s.registry.insert_or_assign(id, regions);
    }
    return exec;
  }
  ensure_clone_listener();
  Instantiation inst{&annotated_, {}};
  t_instantiating = &inst;
  const cudaError_t status = cudaGraphInstantiateWithFlags(&exec, graph, flags);
  t_instantiating = nullptr;
  CUDAKIT_CHECK_CUDA(status);

  State& s = state();
  std::lock_guard lock(s.mutex);
  for (const auto& c : inst.clones) {
    if (auto id = node_id(mechanism, c.clone)) s.registry.insert_or_assign(*id, *c.regions);
  }
  if (inst.clones.empty() && !std::exchange(s.warned_no_clones, true)) {
    CUDAKIT_LOG(warning, "CUPTI reported no cloned graph nodes while instantiating an annotated "
                "graph; its annotations were not recorded");
  }
  return exec;
}

}  // namespace cudakit::graphs::detail
