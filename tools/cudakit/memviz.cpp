// `cudakit memviz SNAPSHOT.json -o memory.html`: renders a memory snapshot (cudakit's or
// PyTorch's torch.cuda.memory._snapshot()) as one self-contained HTML page.

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "command.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/memory/memviz.hpp"

namespace cudakit::cli {
namespace {

struct MemvizOptions {
  std::string snapshot;
  std::string output = "memory.html";
};

int run_memviz(const MemvizOptions& options) {
  std::ifstream in(options.snapshot, std::ios::binary);
  if (!in) {
    std::cerr << "cudakit memviz: cannot read " << options.snapshot << ": " << std::strerror(errno)
              << "\n";
    return 1;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string page;
  try {
    page = memory::render_memviz_html(text.str());
  } catch (const InvalidArgumentError& e) {
    // The message names the bad key; the file it came from is what the user needs next to it.
    std::cerr << "cudakit memviz: " << options.snapshot << ": " << e.what() << "\n";
    return 1;
  }
  std::ofstream out(options.output, std::ios::binary | std::ios::trunc);
  if (!out || !out.write(page.data(), static_cast<std::streamsize>(page.size())) || !out.flush()) {
    std::cerr << "cudakit memviz: cannot write " << options.output << ": " << std::strerror(errno)
              << "\n";
    return 1;
  }
  std::cout << "wrote " << options.output << " (" << (page.size() + 1023) / 1024
            << " KiB); open it in a browser\n";
  return 0;
}

std::function<int()> setup_memviz(CLI::App& command) {
  auto options = std::make_shared<MemvizOptions>();
  command
      .add_option("snapshot", options->snapshot,
                  "snapshot JSON (dump_snapshot, or torch.cuda.memory._snapshot() saved as JSON)")
      ->required();
  command.add_option("-o,--output", options->output, "HTML file to write")->capture_default_str();
  return [options] { return run_memviz(*options); };
}

const RegisterCommand kMemviz("memviz",
                              "render a memory snapshot (JSON) as a self-contained HTML page",
                              setup_memviz);

}  // namespace
}  // namespace cudakit::cli
