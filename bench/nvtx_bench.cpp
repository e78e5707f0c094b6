// The cost of an NVTX range with no tool attached (no NVTX_INJECTION64_PATH, no Nsight):
// cudakit::nvtx push+pop pairs beside raw NVTX3 calls, in ns per pair. Target: at most 10 ns per
// pair (torch.cuda.nvtx from Python: bench/torch_nvtx_bench.py). Needs no GPU. Prints one JSON
// line per case ({"bench":"nvtx","case":...,"impl":...,"ns_per_pair":...}) and a table.

#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cudakit/nvtx/ranges.hpp"
#include "cudakit/nvtx/scoped_range.hpp"
#include "support/timing.hpp"

namespace {

namespace nvtx = cudakit::nvtx;
constexpr int kPairs = 5'000'000;
constexpr int kReps = 7;

struct Row {
  const char* name;
  const char* impl;
  double ns;
};

// ns per pair: the median of kReps loops of kPairs pairs.
template <class F>
double ns_per_pair(F&& pair) {
  const double us = cudakit::bench::median_us(kReps, [&] {
    for (int i = 0; i < kPairs; ++i) pair();
  });
  return us * 1e3 / kPairs;
}

}  // namespace

int main() {
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) {
    std::printf("NVTX_INJECTION64_PATH is set: this measures the cost with no tool; unset it\n");
    return 1;
  }
  static const nvtx::RegisteredString kName("bench.range");
  const nvtxDomainHandle_t raw_domain = nvtxDomainCreateA("bench");
  std::vector<Row> rows;
  rows.push_back({"push+pop, message", "nvtx3_raw", ns_per_pair([] {
                    nvtxRangePushA("bench.range");
                    nvtxRangePop();
                  })});
  rows.push_back({"push+pop, domain + attributes", "nvtx3_raw", ns_per_pair([&] {
                    nvtxEventAttributes_t e{};
                    e.version = NVTX_VERSION;
                    e.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
                    e.messageType = NVTX_MESSAGE_TYPE_ASCII;
                    e.message.ascii = "bench.range";
                    nvtxDomainRangePushEx(raw_domain, &e);
                    nvtxDomainRangePop(raw_domain);
                  })});
  rows.push_back({"push+pop, message", "cudakit", ns_per_pair([] {
                    nvtx::range_push("bench.range");
                    nvtx::range_pop();
                  })});
  rows.push_back({"push+pop, registered string", "cudakit", ns_per_pair([] {
                    nvtx::range_push(kName);
                    nvtx::range_pop();
                  })});
  rows.push_back({"ScopedRange", "cudakit", ns_per_pair([] { nvtx::ScopedRange range("bench.range"); })});
  rows.push_back({"push+pop, category + payload", "cudakit", ns_per_pair([] {
                    nvtx::range_push({.name = "bench.range", .category = 2, .payload = nvtx::Payload::of(7u)});
                    nvtx::range_pop();
                  })});
  for (const Row& r : rows) {
    std::printf("{\"bench\":\"nvtx\",\"case\":\"%s\",\"impl\":\"%s\",\"ns_per_pair\":%.2f}\n", r.name, r.impl, r.ns);
  }
  std::printf("\n%-34s %-10s %10s\n", "case (no tool attached)", "impl", "ns/pair");
  for (const Row& r : rows) std::printf("%-34s %-10s %10.2f\n", r.name, r.impl, r.ns);
  std::printf("target: cudakit push+pop <= 10 ns\n");
  return 0;
}
