#include "cudakit/nccl/flight_recorder.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <sstream>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::nccl {

using cudakit::detail::concat;

namespace {

constexpr std::string_view kHeader = "cudakit-flight-records";
// Far above any NCCL world; a header claiming more is not one of ours.
constexpr int kMaxWorldSize = 1 << 20;
constexpr std::string_view kStateNames[] = {"enqueued", "completed", "timed_out", "failed"};

bool is_point_to_point(std::string_view op) { return op == "send" || op == "recv"; }

std::string describe(const FlightRecord& r) {
  return concat(r.op, " ", data_type_name(r.dtype), " x ", r.input_count, "->", r.output_count,
                r.peer >= 0 ? concat(is_point_to_point(r.op) ? " peer " : " root ", r.peer) : std::string());
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t at = 0;
  while (at < line.size()) {
    const std::size_t start = line.find_first_not_of(' ', at);
    if (start == std::string_view::npos) break;
    const std::size_t end = std::min(line.find(' ', start), line.size());
    words.push_back(line.substr(start, end - start));
    at = end;
  }
  return words;
}

template <class T>
T parse_number(std::string_view word, std::size_t line, const char* what) {
  T v{};
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
  if (ec != std::errc() || end != word.data() + word.size())
    throw InvalidArgumentError("parse_flight_records",
                               concat("line ", line, ": the ", what, " '", word, "' is not a number"));
  return v;
}

}  // namespace

std::string_view flight_state_name(FlightState state) noexcept {
  const auto index = static_cast<std::size_t>(state);
  return index < std::size(kStateNames) ? kStateNames[index] : std::string_view("unknown");
}

FlightRecorder::FlightRecorder(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}

void FlightRecorder::add(FlightRecord record) {
  std::lock_guard lock(mutex_);
  if (ring_.size() < capacity_) {
    ring_.push_back(std::move(record));
    enqueued_at_.push_back(Clock::now());
    return;
  }
  ring_[next_] = std::move(record);
  enqueued_at_[next_] = Clock::now();
  next_ = (next_ + 1) % capacity_;
}

void FlightRecorder::set_state(std::uint64_t seq, FlightState state) {
  std::lock_guard lock(mutex_);
  // Recent records are the ones asked about: search from the newest.
  for (std::size_t i = 0; i < ring_.size(); ++i) {
    FlightRecord& r = ring_[(next_ + ring_.size() - 1 - i) % ring_.size()];
    if (r.seq == seq) {
      r.state = state;
      return;
    }
  }
}

std::vector<FlightRecord> FlightRecorder::records() const {
  std::lock_guard lock(mutex_);
  std::vector<FlightRecord> out;
  out.reserve(ring_.size());
  const auto now = Clock::now();
  for (std::size_t i = 0; i < ring_.size(); ++i) {
    const std::size_t at = (next_ + i) % ring_.size();
    out.push_back(ring_[at]);
    out.back().age_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - enqueued_at_[at]).count();
  }
  return out;
}

std::string format_flight_records(const RankFlightRecords& records) {
  std::ostringstream out;
  out << kHeader << " 1 " << records.rank << ' ' << records.world_size << '\n';
  for (const FlightRecord& r : records.records)
    out << r.seq << ' ' << r.op << ' ' << data_type_name(r.dtype) << ' ' << r.input_count << ' ' << r.output_count << ' '
        << r.peer << ' ' << r.stream << ' ' << flight_state_name(r.state) << ' ' << r.age_ms << '\n';
  return std::move(out).str();
}

RankFlightRecords parse_flight_records(std::string_view text) {
  RankFlightRecords out;
  std::size_t line_number = 0;
  bool header = false;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    ++line_number;
    const auto words = split_words(line);
    if (words.empty()) continue;
    if (!header) {
      if (words.size() != 4 || words[0] != kHeader || words[1] != "1")
        throw InvalidArgumentError("parse_flight_records",
                                   concat("line ", line_number, ": expected '", kHeader, " 1 <rank> <world size>', found '", line, "'"));
      out.rank = parse_number<int>(words[2], line_number, "rank");
      out.world_size = parse_number<int>(words[3], line_number, "world size");
      if (out.world_size < 1 || out.world_size > kMaxWorldSize || out.rank < 0 || out.rank >= out.world_size)
        throw InvalidArgumentError("parse_flight_records", concat("line ", line_number, ": rank ", out.rank,
                                                                  " does not fit world size ", out.world_size));
      header = true;
      continue;
    }
    if (words.size() != 9)
      throw InvalidArgumentError("parse_flight_records",
                                 concat("line ", line_number, ": a record has 9 fields, this one ", words.size()));
    FlightRecord r;
    r.seq = parse_number<std::uint64_t>(words[0], line_number, "sequence number");
    r.op = std::string(words[1]);
    const auto dtype = parse_data_type(words[2]);
    if (!dtype)
      throw InvalidArgumentError("parse_flight_records", concat("line ", line_number, ": unknown dtype '", words[2], "'"));
    r.dtype = *dtype;
    r.input_count = parse_number<std::uint64_t>(words[3], line_number, "input count");
    r.output_count = parse_number<std::uint64_t>(words[4], line_number, "output count");
    r.peer = parse_number<int>(words[5], line_number, "root or peer");
    r.stream = parse_number<std::uint64_t>(words[6], line_number, "stream id");
    const auto state = std::find(std::begin(kStateNames), std::end(kStateNames), words[7]);
    if (state == std::end(kStateNames))
      throw InvalidArgumentError("parse_flight_records", concat("line ", line_number, ": unknown state '", words[7], "'"));
    r.state = static_cast<FlightState>(state - std::begin(kStateNames));
    r.age_ms = parse_number<std::int64_t>(words[8], line_number, "age");
    out.records.push_back(std::move(r));
  }
  if (!header) throw InvalidArgumentError("parse_flight_records", "no header line");
  return out;
}

FlightReport analyze_flight_records(std::span<const RankFlightRecords> ranks, int world_size) {
  FlightReport report;
  std::ostringstream text;
  std::map<int, const RankFlightRecords*> by_rank;
  for (const RankFlightRecords& r : ranks)
    if (r.rank >= 0 && r.rank < world_size) by_rank[r.rank] = &r;
  for (int rank = 0; rank < world_size; ++rank)
    if (!by_rank.contains(rank)) report.missing.push_back(rank);
  // One line per run of silent ranks: a big world with most ranks gone stays one line.
  for (std::size_t i = 0; i < report.missing.size();) {
    std::size_t j = i;
    while (j + 1 < report.missing.size() && report.missing[j + 1] == report.missing[j] + 1) ++j;
    if (i == j) text << "rank " << report.missing[i];
    else text << "ranks " << report.missing[i] << "-" << report.missing[j];
    text << " sent no flight records (dead, unreachable, or hung outside cudakit)\n";
    i = j + 1;
  }
  // The last number each rank issued, and what it was.
  std::uint64_t newest = 0;
  for (const auto& [rank, records] : by_rank)
    if (!records->records.empty()) newest = std::max(newest, records->records.back().seq);
  for (const auto& [rank, records] : by_rank) {
    const std::uint64_t last = records->records.empty() ? 0 : records->records.back().seq;
    if (last >= newest) continue;
    report.behind.push_back(rank);
    text << "rank " << rank << " is behind: its last operation is #" << last
         << (records->records.empty() ? std::string() : concat(" (", describe(records->records.back()), ")"))
         << ", others reached #" << newest << "\n";
  }
  // Under each number that several ranks kept: do they agree?
  std::map<std::uint64_t, std::vector<std::pair<int, const FlightRecord*>>> by_seq;
  for (const auto& [rank, records] : by_rank)
    for (const FlightRecord& r : records->records) by_seq[r.seq].emplace_back(rank, &r);
  for (const auto& [seq, entries] : by_seq) {
    const FlightRecord& first = *entries.front().second;
    const bool p2p = is_point_to_point(first.op);
    const bool agree = std::all_of(entries.begin(), entries.end(), [&](const auto& e) {
      const FlightRecord& r = *e.second;
      if (p2p) return is_point_to_point(r.op) && r.dtype == first.dtype;
      return r.op == first.op && r.dtype == first.dtype && r.input_count == first.input_count &&
             r.output_count == first.output_count && r.peer == first.peer;
    });
    if (agree) continue;
    report.mismatched.push_back(seq);
    text << "operation #" << seq << " differs across ranks:";
    for (const auto& [rank, r] : entries) text << " rank " << rank << " " << describe(*r) << ";";
    text << "\n";
  }
  // The oldest operation not completed everywhere: where the ranks wait.
  for (const auto& [seq, entries] : by_seq) {
    std::vector<int> waiting;
    for (const auto& [rank, r] : entries)
      if (r->state != FlightState::completed) waiting.push_back(rank);
    if (waiting.empty()) continue;
    text << "operation #" << seq << " (" << entries.front().second->op << ") has not completed on rank";
    if (waiting.size() > 1) text << "s";
    for (std::size_t i = 0; i < waiting.size(); ++i) text << (i == 0 ? " " : ", ") << waiting[i];
    text << "\n";
    break;
  }
  if (report.missing.empty() && report.behind.empty() && report.mismatched.empty())
    text << "the ranks' records agree: every rank issued the same operations\n";
  report.text = std::move(text).str();
  return report;
}

}  // namespace cudakit::nccl
