#pragma once
// @brief FlightRecorder: each rank's record of its last N collectives (torch's NCCL flight
// recorder), the text form in which ranks exchange them, and the report that says, from the
// records of all ranks, which rank is behind or disagrees. See Note [Flight records].

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cudakit/nccl/data_type.hpp"

namespace cudakit::nccl {

// Note [Flight records]
// A communicator numbers its operations 1, 2, ... in the order the program issues them; every
// rank of a correct program issues the same collective under the same number (send/recv pair
// up across ranks instead, and are compared by count only). A record is kept from enqueue
// (state enqueued) until the watchdog sees its completion event (completed) or gives up on it
// (timed_out, failed). The exchange format is text, one record a line:
//   cudakit-flight-records 1 <rank> <world_size>
//   <seq> <op> <dtype> <input count> <output count> <root or peer, -1> <stream id> <state> <age ms>
// On a timeout the ranks publish this through the store and analyze_flight_records reads all
// of them: a rank that sent nothing is missing (dead, or hung outside cudakit), a rank whose
// last number is lower than the others' is behind (it never issued the rest), and a number
// under which ranks recorded different operations, dtypes or counts is a mismatch.
enum class FlightState : std::uint8_t { enqueued, completed, timed_out, failed };
[[nodiscard]] std::string_view flight_state_name(FlightState state) noexcept;

struct FlightRecord {
  std::uint64_t seq = 0;
  std::string op;  // "all_reduce", "send", ...
  DataType dtype = DataType::float32;
  std::uint64_t input_count = 0;
  std::uint64_t output_count = 0;
  int peer = -1;  // the root (reduce, broadcast) or the peer (send, recv); -1 otherwise
  std::uint64_t stream = 0;  // the stream's id
  FlightState state = FlightState::enqueued;
  std::int64_t age_ms = 0;  // since enqueue, when the records were taken
  friend bool operator==(const FlightRecord&, const FlightRecord&) = default;
};

struct RankFlightRecords {
  int rank = -1;
  int world_size = 0;
  std::vector<FlightRecord> records;  // oldest first
};

class FlightRecorder {
 public:
  // Keeps the last `capacity` records (at least 1).
  explicit FlightRecorder(std::size_t capacity);
  // Adds a record (its seq and state as given; age counts from now).
  void add(FlightRecord record);
  // Sets the state of record `seq`, if it is still kept.
  void set_state(std::uint64_t seq, FlightState state);
  // The kept records, oldest first, with their ages.
  [[nodiscard]] std::vector<FlightRecord> records() const;

 private:
  using Clock = std::chrono::steady_clock;
  mutable std::mutex mutex_;
  std::size_t capacity_;
  std::vector<FlightRecord> ring_;
  std::vector<Clock::time_point> enqueued_at_;
  std::size_t next_ = 0;  // where the next record goes once the ring is full
};

// The exchange format of Note [Flight records].
[[nodiscard]] std::string format_flight_records(const RankFlightRecords& records);
// @throws InvalidArgumentError naming the line and what is wrong with it.
[[nodiscard]] RankFlightRecords parse_flight_records(std::string_view text);

struct FlightReport {
  std::vector<int> missing;          // ranks that sent no records
  std::vector<int> behind;           // ranks whose last operation is before the others'
  std::vector<std::uint64_t> mismatched;  // numbers under which ranks disagree
  std::string text;                  // the whole report, one finding a line
};
// Compares the records of the ranks of one communicator of `world_size` ranks.
[[nodiscard]] FlightReport analyze_flight_records(std::span<const RankFlightRecords> ranks, int world_size);

}  // namespace cudakit::nccl
