#pragma once
// @brief Graph: an owning, move-only CUDA graph with its private memory pool
// (torch.cuda.CUDAGraph).
//
// Life cycle: capture_begin on a side stream, the work to record, capture_end (which
// instantiates unless keep_graph), then replay() any number of times, then reset() or
// destruction. GraphCapture is the scope form of capture_begin/capture_end and the usual way in.
//
// Memory: while capturing, the capturing thread's allocations on the graph's device come from
// the graph's private pool (See Note [Graph pools] in src/graphs/detail/graph_pool.hpp). Memory
// allocated during capture keeps its address across replays — the graph reads and writes it —
// until it is freed; the pool itself is released when the last graph using it is reset or
// destroyed. A capture that fails releases the pool too (torch leaks it).

#include <memory>
#include <string>

#include "cudakit/core/capture_hook.hpp"
#include "cudakit/core/optional_stream.hpp"
#include "cudakit/graphs/capture_error_mode.hpp"
#include "cudakit/graphs/graph_ref.hpp"
#include "cudakit/graphs/instantiate_options.hpp"
#include "cudakit/memory/pool_id.hpp"

namespace cudakit::graphs {

// An owning, move-only CUDA graph: captured once from the work queued on a stream, replayed any
// number of times with one launch. Holds the captured cudaGraph_t, its executable instance and the
// private memory pool of the capture's allocations. One thread at a time: a Graph is not safe to
// use from several threads at once.
class Graph {
 public:
  // keep_graph = false: capture_end instantiates at once, as torch does. keep_graph = true:
  // capture_end stops after capturing, so the graph can be dumped or inspected; instantiate() or
  // the first replay() instantiates it. The captured cudaGraph_t is kept either way. Makes no
  // CUDA call.
  // @param keep_graph whether capture_end() leaves instantiation to instantiate() or replay().
  explicit Graph(bool keep_graph = false);
  // Resets (see reset()); never throws. The host does not wait for replays still running.
  ~Graph();
  // Not copyable: a Graph has one owner.
  Graph(const Graph&) = delete;
  // Not copyable: a Graph has one owner.
  Graph& operator=(const Graph&) = delete;
  // A moved-from Graph owns nothing, and every use of it but reset() and destruction throws
  // StateError (See Note [Moved-from owners]); assigning a Graph to it makes it usable again.
  // @param other the graph to take; it is moved-from afterwards.
  Graph(Graph&& other) noexcept;
  // Resets this graph (as reset()), then takes `other`'s.
  // @param other the graph to take; it is moved-from afterwards.
  // @return this graph.
  Graph& operator=(Graph&& other) noexcept;

  // Starts capturing the calling thread's current stream (which must not be the legacy default
  // stream) into this graph: work queued on it from now on is recorded, not run. Every
  // registered CaptureHook's capture_begin() runs first, on the calling thread.
  // @param pool {} for a new private pool, or another graph's pool() / graph_pool_handle() to
  //        share one.
  // @param mode which CUDA calls of other threads the capture tolerates (torch's
  //        capture_error_mode).
  // @param enable_annotations record mark_kernels regions (See Note [Kernel annotations] in
  //        src/graphs/annotations.cpp).
  // @throws StateError when the graph is not empty, is already capturing, or the stream cannot
  //         capture (the legacy default stream, or one already capturing).
  // @throws CudaError from cudaStreamBeginCapture (the pool is released again).
  // @throws whatever a CaptureHook's capture_begin() throws (hooks already begun are aborted).
  void capture_begin(memory::PoolId pool = {}, CaptureErrorMode mode = CaptureErrorMode::global,
                     bool enable_annotations = false);
  // Ends the capture (on the thread that began it) and, unless keep_graph, instantiates.
  // Stream ordering: nothing runs; the captured work exists only as the graph from here on. Work
  // queued on the stream afterwards runs normally again (it is not ordered after any replay).
  // @throws StateError without a capture in progress.
  // @throws CudaError when the capture failed — a call made during it was illegal and
  //         invalidated it: the partial graph is destroyed, the pool released, and the error's
  //         api() names the call that broke the capture (when CUPTI can tell; otherwise
  //         "cudaStreamEndCapture") and its message gives the error of that call. Also from
  //         cudaGraphInstantiate, when instantiating.
  void capture_end();
  // Abandons a capture in progress: ends it, destroys the partial graph and releases the pool.
  // For error paths (GraphCapture calls it when an exception leaves its scope). Never throws.
  void capture_abort() noexcept;
  // torch's CUDAGraph.register_generator_state: this graph carries `generator`'s state (any
  // generator with capture_state(), e.g. random::Generator), so that each replay draws fresh
  // numbers from it, as from the device's default generator, which every capture carries
  // already. Register before capture_begin, or during a capture before the generator's first
  // draw in it; registrations last across reset() and new captures. The generator must outlive
  // the graph's captures and replays.
  // @tparam Generator a type with `CaptureHook* capture_state()` (null: nothing to carry).
  // @param generator the generator whose state replays advance.
  // @throws StateError after the capture ended.
  // @throws whatever capture_state() throws (for a host generator).
  template <class Generator>
  void register_generator_state(Generator& generator) {
    if (CaptureHook* state = generator.capture_state()) register_capture_state(*state);
  }
  // The same for any state a capture must carry forward (See capture_hook.hpp). Registering one
  // twice is registering it once. During a capture, the state's capture_begin() runs at once.
  // @param state the state; it must outlive the graph's captures and replays.
  // @throws StateError after the capture ended (before reset()).
  void register_capture_state(CaptureHook& state);
  // The flags the next instantiation uses (torch's by default: InstantiateOptions). Set them
  // before capture_end (which instantiates unless keep_graph) or, for a kept graph, before
  // instantiate() or the first replay(); they last across reset(). Makes no CUDA call.
  // @param options the instantiation flags.
  // @throws StateError once the graph is instantiated (reset() first).
  void set_instantiate_options(const InstantiateOptions& options);
  // @return the flags the graph was or will be instantiated with.
  [[nodiscard]] InstantiateOptions instantiate_options() const;
  // Instantiates a kept graph; no-op when already instantiated.
  // Synchronous on the host; queues no work.
  // @throws StateError without a captured graph, or while capturing.
  // @throws CudaError from cudaGraphInstantiateWithFlags.
  void instantiate();
  // Launches the graph on `stream` (left out: the current stream of the graph's device),
  // instantiating a kept graph first. Stream ordering: the replay runs after the work queued
  // before it on `stream` and before the work queued after it; the host does not wait. Replays
  // on different streams are not ordered against each other.
  // Registered CaptureHooks (the random generators' offsets) queue their update on `stream`
  // first, so each replay draws fresh numbers.
  // @param stream the stream to launch on; the current stream of the graph's device when omitted.
  // @throws StateError for a graph that was never captured, was reset, or is capturing.
  // @throws CudaError from cudaGraphInstantiate or cudaGraphLaunch.
  void replay(OptionalStream stream = {});
  // Destroys the graph and its executable instance and gives up the pool (released when no
  // other graph shares it). Memory allocated during capture and still live is not freed: free it
  // first. The graph may capture again afterwards.
  void reset() noexcept;

  // The graph's memory pool: pass it to another capture_begin to share the pool. {} before the
  // first capture_begin.
  // These accessors throw StateError on a moved-from Graph.
  // @return the pool's id, or an empty id.
  [[nodiscard]] memory::PoolId pool() const;
  // Whether a capture into this graph is in progress.
  // @return true between capture_begin() and capture_end() or capture_abort().
  [[nodiscard]] bool is_capturing() const;
  // Whether the graph has an executable instance (replay() launches it without instantiating).
  // @return true once instantiated, until reset().
  [[nodiscard]] bool is_instantiated() const;
  // The device captured on (-1 before capture_begin).
  // @return the device ordinal, or -1.
  [[nodiscard]] int device() const;
  // Non-owning handles, valid until reset().
  // @return the captured graph and its executable instance (either may be null).
  [[nodiscard]] GraphRef ref() const;
  // cudaGraphDebugDotPrint of the captured graph.
  // @param path the file to write (Graphviz DOT).
  // @param flags cudaGraphDebugDotFlags bits; verbose by default.
  // @throws StateError without a captured graph.
  // @throws CudaError when the runtime cannot write the file.
  void debug_dump(const std::string& path, unsigned flags = cudaGraphDebugDotFlagsVerbose) const;

 private:
  struct Impl;
  Impl& usable(const char* api) const;
  std::unique_ptr<Impl> impl_;
};

// A new pool id for captures to share (torch.cuda.graph_pool_handle): the pool is created by
// the first capture_begin that uses it and released when the last graph using it lets go.
// @return a pool id no graph uses yet.
[[nodiscard]] memory::PoolId graph_pool_handle() noexcept;

}  // namespace cudakit::graphs
