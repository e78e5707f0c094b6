#include "cudakit/core/sm_partition.hpp"

#include <sstream>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit {
namespace {

std::string describe(const SmResourceInfo& resource) {
  return detail::concat(resource.sm_count, " SMs, partitions of at least ", resource.min_partition,
                        " in multiples of ", resource.alignment);
}

}  // namespace

unsigned granted_sm_count(const SmResourceInfo& resource, unsigned requested) {
  constexpr const char* kApi = "GreenContext";
  if (resource.sm_count == 0 || resource.alignment == 0) {
    throw InvalidArgumentError(kApi, detail::concat("the SM resource describes no SMs or no alignment (", describe(resource), ")"));
  }
  if (requested == 0) throw InvalidArgumentError(kApi, "a partition of 0 SMs");
  unsigned granted = requested < resource.min_partition ? resource.min_partition : requested;
  granted = (granted + resource.alignment - 1) / resource.alignment * resource.alignment;
  if (granted > resource.sm_count || granted < requested) {
    throw InvalidArgumentError(kApi, detail::concat(requested, " SMs requested, ", granted,
                                                    " after rounding, but the device has ", describe(resource)));
  }
  return granted;
}

std::vector<unsigned> plan_sm_split(const SmResourceInfo& resource, std::span<const unsigned> requested) {
  if (requested.empty()) throw InvalidArgumentError("GreenContext::split", "no partitions requested");
  std::vector<unsigned> grants;
  unsigned total = 0;
  std::ostringstream asked;
  for (const unsigned n : requested) {
    grants.push_back(granted_sm_count(resource, n));
    total += grants.back();
    asked << (grants.size() > 1 ? ", " : "") << n << " -> " << grants.back();
  }
  if (total > resource.sm_count) {
    throw InvalidArgumentError("GreenContext::split",
                               detail::concat("partitions of ", asked.str(), " SMs need ", total,
                                              " SMs, but the device has ", describe(resource)));
  }
  return grants;
}

}  // namespace cudakit
