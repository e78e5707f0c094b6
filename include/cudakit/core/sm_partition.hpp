#pragma once
// @brief The arithmetic of SM partitions (green contexts), from a device's SM resource as the
// driver describes it: how many SMs a request is granted, and whether a split fits. Pure
// functions.

#include <span>
#include <vector>

namespace cudakit {

// A device's (or a green context's) SM resource: cuDeviceGetDevResource's smCount,
// minSmPartitionSize and smCoscheduledAlignment.
struct SmResourceInfo {
  unsigned sm_count = 0;  // the SMs the resource has
  unsigned min_partition = 0;  // the fewest SMs a partition can have
  unsigned alignment = 0;      // a partition's SM count is a multiple of this
};

// The SMs a partition of `requested` SMs gets: at least min_partition, rounded up to a multiple
// of alignment. @throws InvalidArgumentError for 0 SMs, a resource that describes no SMs or
// alignment, or a granted count above the resource's SMs (naming request, grant, the device's
// count, minimum and alignment).
// @param resource the SM resource the partition is carved from.
// @param requested the fewest SMs wanted.
// @return the SMs the partition gets.
[[nodiscard]] unsigned granted_sm_count(const SmResourceInfo& resource, unsigned requested);

// The grants for partitions of `requested` SMs each, carved one after another out of one
// resource. @throws InvalidArgumentError as granted_sm_count, or when the grants add up to more
// than the resource's SMs (naming each request and grant).
// @param resource the SM resource the partitions are carved from.
// @param requested the fewest SMs wanted for each partition.
// @return the grant of each request, in order.
[[nodiscard]] std::vector<unsigned> plan_sm_split(const SmResourceInfo& resource,
                                                  std::span<const unsigned> requested);

}  // namespace cudakit
