#include "cudakit/nccl/flight_recorder.hpp"

#include <gtest/gtest.h>

#include "support/expect_refused.hpp"

namespace {

using cudakit::nccl::analyze_flight_records;
using cudakit::nccl::DataType;
using cudakit::nccl::FlightRecord;
using cudakit::nccl::FlightRecorder;
using cudakit::nccl::FlightState;
using cudakit::nccl::format_flight_records;
using cudakit::nccl::parse_flight_records;
using cudakit::nccl::RankFlightRecords;
using cudakit::testing::expect_refused;

FlightRecord record(std::uint64_t seq, const char* op, std::uint64_t count, FlightState state = FlightState::completed,
                    DataType dtype = DataType::float32, int peer = -1) {
  return FlightRecord{seq, op, dtype, count, count, peer, 7, state, 0};
}

// `n` all_reduces of 1024 floats, completed but the last, which is enqueued.
RankFlightRecords ranks_records(int rank, int world, std::uint64_t n) {
  RankFlightRecords r{rank, world, {}};
  for (std::uint64_t s = 1; s <= n; ++s)
    r.records.push_back(record(s, "all_reduce", 1024, s == n ? FlightState::enqueued : FlightState::completed));
  return r;
}

TEST(FlightRecorder, KeepsTheLastNOldestFirstAndUpdatesStates) {
  FlightRecorder recorder(3);
  for (std::uint64_t s = 1; s <= 5; ++s) recorder.add(record(s, "broadcast", s, FlightState::enqueued));
  recorder.set_state(4, FlightState::completed);
  recorder.set_state(1, FlightState::completed);  // forgotten already: nothing happens
  const auto records = recorder.records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].seq, 3u);
  EXPECT_EQ(records[2].seq, 5u);
  EXPECT_EQ(records[1].state, FlightState::completed);
  EXPECT_EQ(records[0].state, FlightState::enqueued);
}

TEST(FlightRecorder, TheExchangeFormatRoundTrips) {
  RankFlightRecords r{2, 4, {record(9, "send", 3, FlightState::timed_out, DataType::bfloat16, 1),
                             record(10, "reduce_scatter", 64, FlightState::enqueued, DataType::float8_e5m2)}};
  r.records[1].output_count = 16;
  r.records[0].age_ms = 1234;
  const RankFlightRecords back = parse_flight_records(format_flight_records(r));
  EXPECT_EQ(back.rank, 2);
  EXPECT_EQ(back.world_size, 4);
  EXPECT_EQ(back.records, r.records);
}

TEST(FlightRecorder, MalformedRecordsAreRefusedNamingTheLine) {
  expect_refused([] { (void)parse_flight_records(""); }, "no header line");
  expect_refused([] { (void)parse_flight_records("cudakit-flight-records 2 0 1\n"); }, "line 1: expected");
  expect_refused([] { (void)parse_flight_records("cudakit-flight-records 1 4 2\n"); }, "rank 4 does not fit world size 2");
  expect_refused([] { (void)parse_flight_records("cudakit-flight-records 1 0 30004105\n"); },
                 "rank 0 does not fit world size 30004105");
  expect_refused([] { (void)parse_flight_records("cudakit-flight-records 1 0 2\n1 all_reduce float32 1 1 -1 0 completed\n"); },
                 "line 2: a record has 9 fields, this one 8");
  expect_refused([] { (void)parse_flight_records("cudakit-flight-records 1 0 2\n1 x float33 1 1 -1 0 completed 0\n"); },
                 "unknown dtype 'float33'");
  expect_refused([] { (void)parse_flight_records("cudakit-flight-records 1 0 2\n1 x int8 1 1 -1 0 lost 0\n"); },
                 "unknown state 'lost'");
  expect_refused([] { (void)parse_flight_records("cudakit-flight-records 1 0 2\nq x int8 1 1 -1 0 completed 0\n"); },
                 "sequence number 'q'");
}

TEST(FlightReport, AgreeingRanksAreReportedAsSuchWithTheOperationInFlight) {
  const std::vector<RankFlightRecords> ranks = {ranks_records(0, 2, 5), ranks_records(1, 2, 5)};
  const auto report = analyze_flight_records(ranks, 2);
  EXPECT_TRUE(report.missing.empty());
  EXPECT_TRUE(report.behind.empty());
  EXPECT_TRUE(report.mismatched.empty());
  EXPECT_NE(report.text.find("agree"), std::string::npos) << report.text;
  EXPECT_NE(report.text.find("operation #5 (all_reduce) has not completed on ranks 0, 1"), std::string::npos) << report.text;
}

TEST(FlightReport, ARankThatStoppedIssuingIsBehind) {
  const std::vector<RankFlightRecords> ranks = {ranks_records(0, 3, 12), ranks_records(1, 3, 11), ranks_records(2, 3, 12)};
  const auto report = analyze_flight_records(ranks, 3);
  EXPECT_EQ(report.behind, std::vector<int>{1});
  EXPECT_NE(report.text.find("rank 1 is behind: its last operation is #11 (all_reduce float32 x 1024->1024), others reached #12"),
            std::string::npos)
      << report.text;
}

TEST(FlightReport, DifferentSizesDtypesOrOpsUnderOneNumberAreMismatches) {
  auto a = ranks_records(0, 2, 4), b = ranks_records(1, 2, 4);
  b.records[1].input_count = b.records[1].output_count = 512;  // #2: sizes
  b.records[2].dtype = DataType::float16;                       // #3: dtype
  b.records[3].op = "all_gather";                               // #4: op order
  const std::vector<RankFlightRecords> ranks = {a, b};
  const auto report = analyze_flight_records(ranks, 2);
  EXPECT_EQ(report.mismatched, (std::vector<std::uint64_t>{2, 3, 4}));
  EXPECT_NE(report.text.find("operation #2 differs across ranks: rank 0 all_reduce float32 x 1024->1024; rank 1 all_reduce float32 x 512->512;"),
            std::string::npos)
      << report.text;
  EXPECT_NE(report.text.find("rank 1 all_reduce float16"), std::string::npos) << report.text;
  EXPECT_NE(report.text.find("rank 1 all_gather"), std::string::npos) << report.text;
}

TEST(FlightReport, SendAndRecvPairUpAndASilentRankIsMissing) {
  RankFlightRecords a{0, 3, {record(1, "send", 8, FlightState::completed, DataType::int32, 1)}};
  RankFlightRecords b{1, 3, {record(1, "recv", 8, FlightState::completed, DataType::int32, 0)}};
  const std::vector<RankFlightRecords> ranks = {a, b};
  const auto report = analyze_flight_records(ranks, 3);
  EXPECT_TRUE(report.mismatched.empty()) << report.text;
  EXPECT_EQ(report.missing, std::vector<int>{2});
  EXPECT_NE(report.text.find("rank 2 sent no flight records"), std::string::npos) << report.text;
  // Runs of silent ranks are one line each.
  const std::vector<RankFlightRecords> one = {a};
  const auto wide = analyze_flight_records(one, 1000);
  EXPECT_EQ(wide.missing.size(), 999u);
  EXPECT_NE(wide.text.find("ranks 1-999 sent no flight records"), std::string::npos) << wide.text;
}

}  // namespace
