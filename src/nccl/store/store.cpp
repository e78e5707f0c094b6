#include "cudakit/nccl/store/store.hpp"

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/nccl/nccl_error.hpp"

namespace cudakit::nccl {

using cudakit::detail::concat;

void store_barrier(Store& store, const std::string& name, int world_size) {
  const std::string count_key = concat("barrier/", name, "/count");
  const std::string done_key = concat("barrier/", name, "/done");
  const std::int64_t arrived = store.add(count_key, 1);
  if (arrived > world_size)
    throw StateError("store_barrier", concat("barrier '", name, "' was reached by ", arrived,
                                             " ranks, more than the world size ", world_size));
  if (arrived == world_size) store.set(done_key, "1");
  const std::string keys[] = {done_key};
  try {
    store.wait(keys);
  } catch (const NcclError& e) {
    // How many came: the message says whether ranks are missing or the store is.
    std::int64_t now = -1;
    try {
      now = store.add(count_key, 0);
    } catch (const Error&) {
    }
    throw NcclError(0, "store_barrier", store.rank(), concat("barrier '", name, "'"),
                    concat(now < 0 ? std::string("?") : std::to_string(now), " of ", world_size,
                           " ranks arrived before the timeout (", e.what(), ")"));
  }
}

}  // namespace cudakit::nccl
