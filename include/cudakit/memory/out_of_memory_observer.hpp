#pragma once
// @brief Out-of-memory observers (torch's _cuda_attach_out_of_memory_observer): functions a device
// allocator calls when it is about to throw OutOfMemoryError, after it has freed its cache and
// retried, so that a program can log the failure or dump a memory snapshot at the moment it
// happened.

#include <cstddef>
#include <functional>
#include <string_view>

#include "cudakit/memory/pool_id.hpp"
#include "cudakit/memory/segment_provider.hpp"

namespace cudakit::memory {

// What the allocator knew when it gave up. The byte counts are those of the error's report.
struct OutOfMemoryInfo {
  int device = 0;  // the allocator's device ordinal
  std::size_t requested_bytes = 0;  // the size of the request that failed
  StreamKey stream = 0;  // the stream it was for
  PoolId pool;  // the pool it was for
  std::size_t allocated_bytes = 0;     // allocated by this allocator, all pools and streams
  std::size_t reserved_bytes = 0;      // obtained from the driver, all pools and streams
  std::size_t device_free_bytes = 0;   // free on the device, as its provider reports it
  std::size_t device_total_bytes = 0;  // the device's total memory, as its provider reports it
  std::size_t largest_free_block = 0;  // the largest cached free block, any pool or stream
  std::size_t private_pools_reserved_bytes = 0;  // reserved by pools other than the default
  bool during_capture = false;         // the stream was capturing: no cache was released
  std::string_view report;             // the OutOfMemoryError's message (valid during the call)
};

// Called with no allocator lock held, on the thread whose allocation failed: it may take a
// snapshot, read statistics, free memory or allocate. Whatever it throws is caught and named
// in the OutOfMemoryError's message, which is thrown all the same.
using OutOfMemoryObserver = std::function<void(const OutOfMemoryInfo&)>;

}  // namespace cudakit::memory
