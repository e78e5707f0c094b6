#pragma once
// @brief Chrome trace export: TraceEvents as the JSON that Perfetto and chrome://tracing open, in
// Kineto's layout (what torch.profiler's export_chrome_trace writes), so that tools made for
// PyTorch traces read ours. See Note [Chrome trace layout] in src/profiler/chrome_trace.cpp.

#include <string>

#include "cudakit/graphs/kernel_annotations.hpp"
#include "cudakit/profiler/trace_events.hpp"

namespace cudakit::profiler {

// The trace as JSON text. With `annotations`, every kernel, memcpy and memset event whose
// "graph node id" is a key gets the fields of that node's annotation objects in its "args"
// (later objects win, and annotation fields win over the event's own fields), exactly as
// `cudakit trace merge` would do afterwards.
// @param events the recorded events.
// @param annotations graph kernel annotations to merge, or null for none.
// @return the trace as JSON text.
[[nodiscard]] std::string chrome_trace_json(const TraceEvents& events,
                                            const graphs::KernelAnnotations* annotations = nullptr);

// Writes chrome_trace_json(events, annotations) to `path`.
// @param path the file to write (replaced whole).
// @param events the recorded events.
// @param annotations graph kernel annotations to merge, or null for none.
// @throws FileError naming the path and why when it cannot be written.
void write_chrome_trace(const std::string& path, const TraceEvents& events,
                        const graphs::KernelAnnotations* annotations = nullptr);

}  // namespace cudakit::profiler
