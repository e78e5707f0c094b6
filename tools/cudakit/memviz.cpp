// `cudakit memviz SNAPSHOT.json -o memory.html`: renders a memory snapshot (cudakit's or
// PyTorch's torch.cuda.memory._snapshot()) as one self-contained HTML page.

#include <iostream>
#include <stdexcept>
#include <string>

#include "errors.hpp"
#include "command.hpp"
#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/memory/viewer/memviz.hpp"
#include "output_file.hpp"

namespace cudakit::cli {
namespace {

struct MemvizOptions {
  std::string snapshot;
  std::string output = "memory.html";
};

int run_memviz(const MemvizOptions& options) {
  require_distinct_files("--output", options.output, "SNAPSHOT", options.snapshot);
  // Made first, so that an output that cannot be written fails before the work.
  OutputFile out(options.output);
  const std::string text = cudakit::detail::read_text_file(options.snapshot, "read_text_file");
  std::string page;
  try {
    page = memory::render_memviz_html(text);
  } catch (const InvalidArgumentError& e) {
    // The message names the bad key; the file it came from is what the user needs next to it.
    throw std::runtime_error(options.snapshot + ": " + e.what());
  }
  out.write(page);
  out.commit();
  (out.is_standard_output() ? std::cerr : std::cout)
      << "wrote " << (out.is_standard_output() ? "standard output" : options.output) << " ("
      << (page.size() + 1023) / 1024 << " KiB); open it in a browser\n";
  return 0;
}

std::function<int()> setup_memviz(CLI::App& command) {
  auto options = std::make_shared<MemvizOptions>();
  command
      .add_option("SNAPSHOT", options->snapshot,
                  "snapshot JSON (dump_snapshot, or torch.cuda.memory._snapshot() saved as JSON)")
      ->required()
      ->check(readable_file());
  command.add_option("-o,--output", options->output, "HTML file to write (- for standard output)")
      ->capture_default_str()
      ->check(writable_file());
  return [options] { return run_memviz(*options); };
}

const RegisterCommand kMemviz("memviz",
                              "render a memory snapshot (JSON) as a self-contained HTML page",
                              setup_memviz);

}  // namespace
}  // namespace cudakit::cli
