// render_memviz_html: a memory snapshot in torch.cuda.memory._snapshot()'s schema, as
// `cudakit memviz` reads it (cudakit's and PyTorch's snapshots alike).
#include "cudakit/memory/viewer/memviz.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view json) {
    (void)cudakit::memory::render_memviz_html(json);
  });
}
