// merge_trace_annotations: a Chrome trace and the annotations merged into it, the two files of
// `cudakit trace merge`. One input holds both: the annotations' JSON, a NUL byte, the trace's
// JSON (without a NUL, all of it is annotations and the trace is empty).
#include "cudakit/graphs/kernel_annotations.hpp"
#include "cudakit/profiler/trace_merge.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view input) {
    const std::size_t nul = input.find('\0');
    const std::string_view trace = nul == std::string_view::npos ? "" : input.substr(nul + 1);
    const auto annotations = cudakit::graphs::kernel_annotations_from_json(input.substr(0, nul));
    (void)cudakit::profiler::merge_trace_annotations(trace, annotations);
  });
}
