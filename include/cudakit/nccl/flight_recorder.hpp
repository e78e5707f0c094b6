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

// Where a recorded operation stands: enqueued on its stream, completed (its event has
// fired), timed_out (not complete within the communicator's timeout) or failed (NCCL refused it
// or the communicator failed).
enum class FlightState : std::uint8_t { enqueued, completed, timed_out, failed };
// @param state a record's state
// @return its name in the exchange format ("enqueued", "completed", "timed_out", "failed"), or
//   "unknown" for a value outside the enum.
[[nodiscard]] std::string_view flight_state_name(FlightState state) noexcept;

// One operation a rank issued, as its flight recorder keeps it.
struct FlightRecord {
  std::uint64_t seq = 0;  // the operation's sequence number in its communicator, from 1
  std::string op;  // "all_reduce", "send", ...
  DataType dtype = DataType::float32;  // the operation's element type
  std::uint64_t input_count = 0;   // elements read (0 for recv)
  std::uint64_t output_count = 0;  // elements written (0 for send, and for reduce off its root)
  int peer = -1;  // the root (reduce, broadcast) or the peer (send, recv); -1 otherwise
  std::uint64_t stream = 0;  // the stream's id
  FlightState state = FlightState::enqueued;  // where the operation stood when the records were taken
  std::int64_t age_ms = 0;  // since enqueue, when the records were taken
  // Whether both records are the same, field by field.
  // @return true when every field is equal.
  friend bool operator==(const FlightRecord&, const FlightRecord&) = default;
};

// One rank's records, as it publishes them on a timeout.
struct RankFlightRecords {
  int rank = -1;       // the publishing rank
  int world_size = 0;  // the ranks of its communicator
  std::vector<FlightRecord> records;  // oldest first
};

// A rank's last operations of one communicator, in a ring of fixed capacity. Thread-safe: the
// thread that issues operations adds records while the watchdog changes their states and reads
// them.
class FlightRecorder {
 public:
  // Keeps the last `capacity` records (at least 1).
  // @param capacity how many records are kept; 0 counts as 1
  explicit FlightRecorder(std::size_t capacity);
  // Adds a record (its seq and state as given; age counts from now), replacing the oldest once
  // the ring is full.
  // @param record the operation just enqueued
  void add(FlightRecord record);
  // Sets the state of record `seq`, if it is still kept.
  // @param seq the operation's sequence number
  // @param state its new state
  void set_state(std::uint64_t seq, FlightState state);
  // @return the kept records, oldest first, each with its age (age_ms) as of this call.
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
// @param records one rank's records
// @return the header line, then one line per record, oldest first.
[[nodiscard]] std::string format_flight_records(const RankFlightRecords& records);
// Reads what format_flight_records() wrote.
// @param text the exchange format of Note [Flight records]
// @return the rank's records, in the text's order
// @throws InvalidArgumentError naming the line and what is wrong with it (no header, a record
//   without its 9 fields, a number that is none, an unknown dtype or state, a rank outside its
//   world).
[[nodiscard]] RankFlightRecords parse_flight_records(std::string_view text);

// What analyze_flight_records() found.
struct FlightReport {
  std::vector<int> missing;          // ranks that sent no records
  std::vector<int> behind;           // ranks whose last operation is before the others'
  std::vector<std::uint64_t> mismatched;  // numbers under which ranks disagree
  std::string text;                  // the whole report, one finding a line
};
// Compares the records of the ranks of one communicator of `world_size` ranks.
// @param ranks the records each rank published (a rank absent from them is missing)
// @param world_size the communicator's number of ranks
// @return the missing, behind and mismatched findings, and the report's text.
[[nodiscard]] FlightReport analyze_flight_records(std::span<const RankFlightRecords> ranks, int world_size);

}  // namespace cudakit::nccl
