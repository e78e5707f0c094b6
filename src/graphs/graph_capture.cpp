#include "cudakit/graphs/graph_capture.hpp"

#include <exception>
#include <map>

#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"

namespace cudakit::graphs {
namespace {

// The calling thread's capture stream on `device`, as torch's per-process capture stream but
// per thread, so that threads capturing at once do not capture into each other's graphs.
StreamRef side_stream(int device) {
  thread_local std::map<int, Stream> streams;
  auto it = streams.find(device);
  if (it == streams.end()) it = streams.emplace(device, Stream(device)).first;
  return it->second.ref();
}

}  // namespace

GraphCapture::GraphCapture(Graph& graph, const CaptureOptions& options)
    : graph_(graph), caller_(current_stream()), uncaught_at_start_(std::uncaught_exceptions()) {
  const StreamRef stream = options.stream ? *options.stream : side_stream(caller_.device());
  // The captured work must see what the caller queued before the scope, as if run in order.
  stream.wait_stream(caller_);
  if (options.instantiate) graph.set_instantiate_options(*options.instantiate);
  guard_.emplace(stream);
  try {
    graph.capture_begin(options.pool, options.capture_error_mode, options.enable_annotations);
  } catch (...) {
    guard_.reset();
    throw;
  }
}

GraphCapture::~GraphCapture() noexcept(false) {
  if (ended_) return;
  finish(std::uncaught_exceptions() > uncaught_at_start_);
}

void GraphCapture::end() {
  if (ended_) throw StateError("GraphCapture::end", "the capture has already ended");
  finish(false);
}

void GraphCapture::finish(bool abandon) {
  ended_ = true;
  const StreamRef capture_stream = guard_->current_stream();
  if (abandon) {
    graph_.capture_abort();
    guard_.reset();
    return;
  }
  try {
    graph_.capture_end();
  } catch (...) {
    guard_.reset();
    throw;
  }
  guard_.reset();
  // Work the caller queues next runs after anything queued on the capture stream.
  caller_.wait_stream(capture_stream);
}

}  // namespace cudakit::graphs
