// `cudakit trace merge TRACE.json ANNOTATIONS.json -o OUT.json`: joins graph kernel annotations
// to a recorded Chrome trace by "graph node id", offline (no GPU, no CUPTI). The result opens in
// Perfetto with each kernel's annotation fields beside its grid and block.

#include <iostream>
#include <memory>
#include <string>

#include "command.hpp"
#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/graphs/kernel_annotations.hpp"
#include "cudakit/profiler/trace_merge.hpp"
#include "errors.hpp"
#include "output_file.hpp"

namespace cudakit::cli {
namespace {

struct TraceMergeOptions {
  std::string trace;
  std::string annotations;
  std::string output = "trace_annotated.json";
};

int run_trace_merge(const TraceMergeOptions& options) {
  require_distinct_files("--output", options.output, "TRACE", options.trace);
  require_distinct_files("--output", options.output, "ANNOTATIONS", options.annotations);
  // Made first, so that an output that cannot be written fails before the work.
  OutputFile out(options.output);
  // The library's messages name the file, the event index or key at fault.
  const graphs::KernelAnnotations annotations = graphs::load_kernel_annotations(options.annotations);
  const profiler::TraceMergeResult result = profiler::merge_trace_annotations(
      cudakit::detail::read_text_file(options.trace, "merge_trace_annotations"), annotations, options.trace);
  out.write(result.json);
  out.commit();
  (out.is_standard_output() ? std::cerr : std::cout)
      << "wrote " << (out.is_standard_output() ? "standard output" : options.output) << ": annotated "
      << result.annotated_events << " of " << result.graph_node_events << " events with a graph node id\n";
  if (result.graph_node_events > 0 && result.annotated_events == 0) {
    std::cerr << "cudakit trace merge: warning: no node id of the trace is in "
              << options.annotations << " (annotations from another capture?)\n";
  }
  return 0;
}

std::function<int()> setup_trace(CLI::App& command) {
  command.require_subcommand(1);
  auto options = std::make_shared<TraceMergeOptions>();
  CLI::App* merge = command.add_subcommand(
      "merge", "merge kernel annotations into a Chrome trace by graph node id (offline)");
  merge->add_option("TRACE", options->trace, "Chrome trace JSON (export_chrome_trace, Kineto)")
      ->required()
      ->check(readable_file());
  merge->add_option("ANNOTATIONS", options->annotations,
                    "annotations JSON: {\"<node id>\": [{...}, ...], ...}")
      ->required()
      ->check(readable_file());
  merge->add_option("-o,--output", options->output, "merged trace to write (- for standard output)")
      ->capture_default_str()
      ->check(writable_file());
  return [options] { return run_trace_merge(*options); };
}

const RegisterCommand kTrace("trace", "work with profiler traces (merge)", setup_trace);

}  // namespace
}  // namespace cudakit::cli
