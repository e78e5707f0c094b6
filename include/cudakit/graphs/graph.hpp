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
#include "cudakit/memory/pool_id.hpp"

namespace cudakit::graphs {

class Graph {
 public:
  // keep_graph = false: capture_end instantiates at once, as torch does. keep_graph = true:
  // capture_end stops after capturing, so the graph can be dumped or inspected; instantiate() or
  // the first replay() instantiates it. The captured cudaGraph_t is kept either way.
  explicit Graph(bool keep_graph = false);
  // Resets; never throws.
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  // A moved-from Graph owns nothing, and every use of it but reset() and destruction throws
  // StateError (See Note [Moved-from owners]); assigning a Graph to it makes it usable again.
  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) noexcept;

  // Starts capturing the calling thread's current stream (which must not be the legacy default
  // stream) into this graph: work queued on it from now on is recorded, not run.
  // @param pool {} for a new private pool, or another graph's pool() / graph_pool_handle() to
  //        share one.
  // @param mode which CUDA calls of other threads the capture tolerates (torch's
  //        capture_error_mode).
  // @param enable_annotations record mark_kernels regions (See Note [Kernel annotations] in
  //        src/graphs/annotations.cpp).
  // @throws StateError when the graph is not empty or the stream cannot capture; CudaError from
  //         cudaStreamBeginCapture (the pool is released again).
  void capture_begin(memory::PoolId pool = {}, CaptureErrorMode mode = CaptureErrorMode::global,
                     bool enable_annotations = false);
  // Ends the capture (on the thread that began it) and, unless keep_graph, instantiates.
  // @throws StateError without a capture in progress. When the capture failed — a call made
  //         during it was illegal and invalidated it — the partial graph is destroyed, the pool
  //         released, and a CudaError is thrown whose api() names the call that broke the capture
  //         (when CUPTI can tell; otherwise "cudaStreamEndCapture") and whose message gives the
  //         error of that call.
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
  // @throws StateError after the capture ended; what capture_state() throws (a host generator).
  template <class Generator>
  void register_generator_state(Generator& generator) {
    if (CaptureHook* state = generator.capture_state()) register_capture_state(*state);
  }
  // The same for any state a capture must carry forward (See capture_hook.hpp). Registering one
  // twice is registering it once.
  void register_capture_state(CaptureHook& state);
  // Instantiates a kept graph; no-op when already instantiated.
  // @throws StateError without a captured graph; CudaError from cudaGraphInstantiate.
  void instantiate();
  // Launches the graph on `stream` (left out: the current stream of the graph's device),
  // instantiating a kept graph first. Stream ordering: the replay runs after the work queued
  // before it on `stream` and before the work queued after it; the host does not wait. Replays
  // on different streams are not ordered against each other.
  // @throws StateError for a graph that was never captured, was reset, or is capturing;
  //         CudaError from cudaGraphLaunch.
  void replay(OptionalStream stream = {});
  // Destroys the graph and its executable instance and gives up the pool (released when no
  // other graph shares it). Memory allocated during capture and still live is not freed: free it
  // first. The graph may capture again afterwards.
  void reset() noexcept;

  // The graph's memory pool: pass it to another capture_begin to share the pool. {} before the
  // first capture_begin.
  [[nodiscard]] memory::PoolId pool() const;
  // Whether a capture into this graph is in progress.
  [[nodiscard]] bool is_capturing() const;
  // Whether the graph has an executable instance (replay() launches it without instantiating).
  [[nodiscard]] bool is_instantiated() const;
  // The device captured on (-1 before capture_begin).
  [[nodiscard]] int device() const;
  // Non-owning handles, valid until reset().
  [[nodiscard]] GraphRef ref() const;
  // cudaGraphDebugDotPrint of the captured graph. @throws StateError without one.
  void debug_dump(const std::string& path, unsigned flags = cudaGraphDebugDotFlagsVerbose) const;

 private:
  struct Impl;
  Impl& usable(const char* api) const;
  std::unique_ptr<Impl> impl_;
};

// A new pool id for captures to share (torch.cuda.graph_pool_handle): the pool is created by
// the first capture_begin that uses it and released when the last graph using it lets go.
[[nodiscard]] memory::PoolId graph_pool_handle() noexcept;

}  // namespace cudakit::graphs
