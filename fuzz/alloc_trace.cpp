// parse_alloc_trace: the CSV text of a recorded allocation trace (`op,id,size,stream[,thread]`
// lines), read whole and streamed in small batches (AllocTraceReader, as `cudakit alloc-replay`
// reads): the two must agree op for op, whatever the batch boundaries cut.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cudakit/memory/alloc_trace.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [size](std::string_view text) {
    const std::string copy(text);
    const cudakit::memory::AllocTrace whole = cudakit::memory::parse_alloc_trace(copy, "trace");
    cudakit::memory::AllocTraceReader reader(text, "trace");
    std::vector<cudakit::memory::AllocTraceOp> batch;
    std::size_t at = 0;
    while (reader.read(batch, size % 7 + 1)) {
      for (const auto& op : batch) {
        const auto& expected = whole.ops.at(at++);
        if (op.slot != expected.slot || op.size != expected.size || op.stream != expected.stream ||
            op.is_alloc != expected.is_alloc || op.thread != expected.thread) {
          std::fprintf(stderr, "fuzz: operation %zu differs between the whole and the streamed read\n", at - 1);
          std::abort();
        }
      }
    }
    if (at != whole.ops.size()) {
      std::fprintf(stderr, "fuzz: the streamed read has %zu operations, the whole read %zu\n", at, whole.ops.size());
      std::abort();
    }
  });
}
