// parse_flight_records: the records another rank publishes through the store on a timeout (See
// Note [Flight records]). What parses must format and parse back to the same records, and the
// analysis must take it.
#include <cstdlib>

#include "cudakit/nccl/flight_recorder.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view text) {
    const auto records = cudakit::nccl::parse_flight_records(text);
    const auto again = cudakit::nccl::parse_flight_records(cudakit::nccl::format_flight_records(records));
    if (again.records != records.records || again.rank != records.rank) std::abort();
    const cudakit::nccl::RankFlightRecords ranks[] = {records, again};
    (void)cudakit::nccl::analyze_flight_records(ranks, records.world_size);
  });
}
