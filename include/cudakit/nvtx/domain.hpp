#pragma once
// @brief The cudakit NVTX domain: every range and mark cudakit::nvtx makes is in it, so that Nsight
// Systems shows them in a row of their own ("cudakit") with categories named by name_category.
//
// Note [NVTX without a tool]
// NVTX3 is header-only: each call loads a function pointer. It points to an initializer until
// the first NVTX call of the process, which looks for a tool (NVTX_INJECTION64_PATH); with none,
// every pointer is set to null and a call is one load and a not-taken branch. The domain handle
// is created once, at the first use (a function-local static: one load and a not-taken branch
// afterwards), so a range costs those two branches and one relaxed load of the trace hooks, all
// inline (See bench/nvtx_bench.cpp for the figures).

#include <nvtx3/nvToolsExt.h>

#include <cstdint>

namespace cudakit::nvtx {

// The process's cudakit domain (nvtxDomainCreateA("cudakit") at the first call). Thread-safe.
// @return the domain's handle; null where no tool is attached.
[[nodiscard]] inline nvtxDomainHandle_t domain() noexcept {
  static const nvtxDomainHandle_t handle = nvtxDomainCreateA("cudakit");
  return handle;
}

// Names category `id` in the cudakit domain (what Nsight shows for ranges of that category).
// Category 0 is "no category" and cannot be named.
// @param id the category, 1 or more (EventAttributes::category).
// @param name its name; NVTX copies it.
// @throws InvalidArgumentError for category 0 or a null name.
void name_category(std::uint32_t id, const char* name);

}  // namespace cudakit::nvtx
