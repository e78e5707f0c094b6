// The detector on planted bugs (every one must be found, as the hazard planted) and on correctly
// synchronized programs (none may be reported), each written as the trace hooks report it.

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>

#include "sanitizer/event_program.hpp"

namespace {

using cudakit::sanitizer::HazardKind;
using cudakit::testing::buffer;
using cudakit::testing::event;
using cudakit::testing::EventProgram;
using cudakit::testing::rd;
using cudakit::testing::rw;
using cudakit::testing::stream;
using cudakit::testing::wr;

constexpr std::size_t N = 4096;
const auto s0 = stream(0), s1 = stream(1), s2 = stream(2), s3 = stream(3);
const auto e0 = event(0), e1 = event(1), e2 = event(2), e3 = event(3);
char* const b0 = buffer(0);
char* const b1 = buffer(1);
char* const b2 = buffer(2);

struct Case {
  const char* name;
  std::function<void(EventProgram&)> build;
  std::optional<HazardKind> planted;  // nullopt: a correct program
};

std::string describe(const std::vector<cudakit::sanitizer::RaceReport>& reports) {
  std::string s;
  for (const auto& r : reports) s += r.to_string();
  return s;
}

// A block allocated on s0 and written there, the start of many programs.
void written_on_s0(EventProgram& p, char* b = b0) { p.alloc(s0, b, N).kernel(s0, {wr(b, N)}); }
// ... then handed to s1, which reads it.
void read_on_s1(EventProgram& p) {
  written_on_s0(p);
  p.record(e0, s0).wait(s1, e0).kernel(s1, {rd(b0, N)});
}

const Case kBugs[] = {
    {"raw_two_streams", [](EventProgram& p) { written_on_s0(p); p.kernel(s1, {rd(b0, N)}); }, HazardKind::read_after_write},
    {"war_two_streams",
     [](EventProgram& p) { written_on_s0(p); p.sync_stream(s0).kernel(s1, {rd(b0, N)}).kernel(s0, {wr(b0, N)}); },
     HazardKind::write_after_read},
    {"waw_two_streams", [](EventProgram& p) { written_on_s0(p); p.kernel(s1, {wr(b0, N)}); }, HazardKind::write_after_write},
    {"event_recorded_before_the_write",
     [](EventProgram& p) {
       p.alloc(s0, b0, N).record(e0, s0).kernel(s0, {wr(b0, N)}).wait(s1, e0).kernel(s1, {rd(b0, N)});
     },
     HazardKind::read_after_write},
    {"wait_on_the_wrong_event",
     [](EventProgram& p) {
       written_on_s0(p);
       p.record(e0, s0).record(e1, s2).wait(s1, e1).kernel(s1, {rd(b0, N)});
     },
     HazardKind::read_after_write},
    {"wait_on_an_event_never_recorded",
     [](EventProgram& p) { written_on_s0(p); p.wait(s1, e3).kernel(s1, {rd(b0, N)}); }, HazardKind::read_after_write},
    {"stream_wait_in_the_wrong_direction",
     [](EventProgram& p) { written_on_s0(p); p.wait_stream(s0, s1).kernel(s1, {rd(b0, N)}); },
     HazardKind::read_after_write},
    {"copy_reads_a_buffer_another_stream_writes",
     [](EventProgram& p) { written_on_s0(p); p.alloc(s1, b1, N).copy(s1, b1, b0, N); }, HazardKind::read_after_write},
    {"copy_overwrites_another_streams_fill",
     [](EventProgram& p) {
       p.alloc(s0, b0, N).fill(s0, b0, N).alloc(s1, b1, N).fill(s1, b1, N).copy(s1, b0, b1, N);
     },
     HazardKind::write_after_write},
    {"memset_while_another_stream_reads",
     [](EventProgram& p) { written_on_s0(p); p.sync_stream(s0).kernel(s1, {rd(b0, N)}).fill(s0, b0, N); },
     HazardKind::write_after_read},
    {"overlapping_views",
     [](EventProgram& p) { p.alloc(s0, b0, N).kernel(s0, {wr(b0, 2048)}).kernel(s1, {rd(b0 + 1024, 2048)}); },
     HazardKind::read_after_write},
    {"slice_written_inside_a_buffer_another_stream_wrote",
     [](EventProgram& p) { written_on_s0(p); p.kernel(s1, {wr(b0 + 100, 100)}); }, HazardKind::write_after_write},
    {"views_overlapping_by_one_byte",
     [](EventProgram& p) { p.alloc(s0, b0, N).kernel(s0, {wr(b0, 1001)}).kernel(s1, {rd(b0 + 1000, 1000)}); },
     HazardKind::read_after_write},
    {"free_while_another_stream_reads",
     [](EventProgram& p) { read_on_s1(p); p.free(b0, N); }, HazardKind::free_while_in_use},
    {"allocator_reuse_of_a_block_another_stream_reads",
     [](EventProgram& p) { read_on_s1(p); p.free(b0, N).alloc(s0, b0, N).kernel(s0, {wr(b0, N)}); },
     HazardKind::free_while_in_use},
    {"record_stream_for_the_wrong_stream",
     [](EventProgram& p) { read_on_s1(p); p.record_stream(b0, s2).free(b0, N); }, HazardKind::free_while_in_use},
    {"free_while_another_stream_writes",
     [](EventProgram& p) {
       p.alloc(s0, b0, N).record(e0, s0).wait(s1, e0).kernel(s1, {wr(b0, N)}).free(b0, N);
     },
     HazardKind::free_while_in_use},
    {"use_after_free_on_the_same_stream",
     [](EventProgram& p) { written_on_s0(p); p.free(b0, N).kernel(s0, {rd(b0, N)}); }, HazardKind::use_after_free},
    {"use_after_free_of_a_slice",
     [](EventProgram& p) { written_on_s0(p); p.free(b0, N).sync_device().kernel(s1, {rd(b0 + 100, 100)}); },
     HazardKind::use_after_free},
    {"read_of_fresh_memory", [](EventProgram& p) { p.alloc(s0, b0, N).kernel(s0, {rd(b0, N)}); },
     HazardKind::uninitialized_read},
    {"read_of_the_half_nothing_wrote",
     [](EventProgram& p) { p.alloc(s0, b0, N).kernel(s0, {wr(b0, N / 2)}).kernel(s0, {rd(b0, N)}); },
     HazardKind::uninitialized_read},
    {"read_of_a_collectives_output_without_waiting",
     [](EventProgram& p) {
       written_on_s0(p);
       p.alloc(s0, b1, N).collective(s0, b0, b1, N).kernel(s1, {rd(b1, N)});
     },
     HazardKind::read_after_write},
    {"write_to_a_collectives_input_while_it_sends",
     [](EventProgram& p) {
       written_on_s0(p);
       p.alloc(s0, b1, N).sync_stream(s0).collective(s0, b0, b1, N).kernel(s1, {wr(b0, N)});
     },
     HazardKind::write_after_read},
    {"collective_sends_an_input_not_ready",
     [](EventProgram& p) {
       p.alloc(s1, b0, N).kernel(s1, {wr(b0, N)}).alloc(s0, b1, N).collective(s0, b0, b1, N);
     },
     HazardKind::read_after_write},
    {"race_inside_a_replayed_graph",
     [](EventProgram& p) {
       p.alloc(s0, b0, N);
       p.capture_begin(s0, 1).record(e0, s0).wait(s1, e0);     // fork s1 into the capture
       p.kernel(s0, {wr(b0, N)}).kernel(s1, {rd(b0, N)});     // no edge between the two
       p.record(e1, s1).wait(s0, e1).capture_end(s0, 1);      // join
       p.replay(1, s2);
     },
     HazardKind::read_after_write},
    {"graph_output_read_by_another_stream",
     [](EventProgram& p) {
       p.alloc(s0, b0, N).capture_begin(s0, 2).kernel(s0, {wr(b0, N)}).capture_end(s0, 2);
       p.replay(2, s2).kernel(s3, {rd(b0, N)});
     },
     HazardKind::read_after_write},
    {"graph_replayed_before_its_input_is_ready",
     [](EventProgram& p) {
       p.alloc(s3, b0, N).alloc(s0, b1, N).kernel(s3, {wr(b0, N)});
       p.capture_begin(s0, 3).kernel(s0, {rd(b0, N), wr(b1, N)}).capture_end(s0, 3);
       p.replay(3, s2);
     },
     HazardKind::read_after_write},
    {"one_graph_replayed_on_two_streams",
     [](EventProgram& p) {
       p.alloc(s0, b0, N).capture_begin(s0, 4).kernel(s0, {wr(b0, N)}).capture_end(s0, 4);
       p.replay(4, s1).replay(4, s2);
     },
     HazardKind::write_after_write},
    {"host_waits_for_the_wrong_stream",
     [](EventProgram& p) { written_on_s0(p); p.sync_stream(s2).kernel(s1, {rd(b0, N)}); }, HazardKind::read_after_write},
    {"host_waits_for_an_event_recorded_before_the_write",
     [](EventProgram& p) {
       p.alloc(s0, b0, N).record(e0, s0).kernel(s0, {wr(b0, N)}).sync_event(e0).kernel(s1, {rd(b0, N)});
     },
     HazardKind::read_after_write},
    {"second_write_after_the_event",
     [](EventProgram& p) {
       written_on_s0(p);
       p.record(e0, s0).kernel(s0, {wr(b0, N)}).wait(s1, e0).kernel(s1, {rd(b0, N)});
     },
     HazardKind::read_after_write},
    {"read_write_kernel_then_unordered_read",
     [](EventProgram& p) { written_on_s0(p); p.kernel(s0, {rw(b0, N)}).sync_stream(s2).kernel(s1, {rd(b0, N)}); },
     HazardKind::read_after_write},
    {"three_streams_with_a_missing_link",
     [](EventProgram& p) {
       written_on_s0(p);
       p.record(e1, s1).record(e0, s0).wait(s1, e0).wait(s2, e1).kernel(s2, {rd(b0, N)});
     },
     HazardKind::read_after_write},
    {"cublas_call_reads_an_operand_not_ready",
     [](EventProgram& p) {
       written_on_s0(p);
       p.alloc(s1, b1, N).kernel(s1, {wr(b1, N)}).alloc(s1, b2, N);
       p.kernel(s1, {rd(b0, N, "a"), rd(b1, N, "b"), wr(b2, N, "out")}, "tensor.matmul (cuBLAS)");
     },
     HazardKind::read_after_write},
};

const Case kCorrect[] = {
    {"same_stream", [](EventProgram& p) { written_on_s0(p); p.kernel(s0, {rd(b0, N)}); }, std::nullopt},
    {"event_chain", [](EventProgram& p) { read_on_s1(p); }, std::nullopt},
    {"stream_wait", [](EventProgram& p) { written_on_s0(p); p.wait_stream(s1, s0).kernel(s1, {rd(b0, N)}); }, std::nullopt},
    {"host_synchronizes_the_stream",
     [](EventProgram& p) { written_on_s0(p); p.sync_stream(s0).kernel(s1, {rd(b0, N)}); }, std::nullopt},
    {"host_synchronizes_the_event",
     [](EventProgram& p) { written_on_s0(p); p.record(e0, s0).sync_event(e0).kernel(s1, {rd(b0, N)}); }, std::nullopt},
    {"device_synchronize",
     [](EventProgram& p) {
       written_on_s0(p);
       p.alloc(s1, b1, N).kernel(s1, {wr(b1, N)}).sync_device().kernel(s2, {rd(b0, N), rd(b1, N)});
     },
     std::nullopt},
    {"disjoint_halves_on_two_streams",
     [](EventProgram& p) { p.alloc(s0, b0, N).kernel(s0, {wr(b0, N / 2)}).kernel(s1, {wr(b0 + N / 2, N / 2)}); },
     std::nullopt},
    {"adjacent_slices",
     [](EventProgram& p) {
       p.alloc(s0, b0, N).kernel(s0, {wr(b0, 1000)}).kernel(s1, {wr(b0 + 1000, 1000)}).kernel(s1, {rd(b0 + 1000, 1000)});
     },
     std::nullopt},
    {"concurrent_readers",
     [](EventProgram& p) { written_on_s0(p); p.sync_stream(s0).kernel(s1, {rd(b0, N)}).kernel(s2, {rd(b0, N)}); },
     std::nullopt},
    {"write_after_read_ordered_by_an_event",
     [](EventProgram& p) {
       written_on_s0(p);
       p.sync_stream(s0).kernel(s1, {rd(b0, N)}).record(e0, s1).wait(s0, e0).kernel(s0, {wr(b0, N)});
     },
     std::nullopt},
    {"record_stream", [](EventProgram& p) { read_on_s1(p); p.record_stream(b0, s1).free(b0, N); }, std::nullopt},
    {"record_stream_then_reuse",
     [](EventProgram& p) {
       read_on_s1(p);
       p.record_stream(b0, s1).free(b0, N).alloc(s0, b0, N).kernel(s0, {wr(b0, N)}).kernel(s0, {rd(b0, N)});
     },
     std::nullopt},
    {"record_stream_for_two_streams",
     [](EventProgram& p) {
       read_on_s1(p);
       p.wait(s2, e0).kernel(s2, {rd(b0, N)}).record_stream(b0, s1).record_stream(b0, s2).free(b0, N);
     },
     std::nullopt},
    {"free_after_waiting_for_the_reader",
     [](EventProgram& p) { read_on_s1(p); p.wait_stream(s0, s1).free(b0, N); }, std::nullopt},
    {"free_after_the_host_synchronizes_the_reader",
     [](EventProgram& p) { read_on_s1(p); p.sync_stream(s1).free(b0, N); }, std::nullopt},
    {"reuse_on_the_same_stream",
     [](EventProgram& p) {
       written_on_s0(p);
       p.kernel(s0, {rd(b0, N)}).free(b0, N).alloc(s0, b0, N).kernel(s0, {wr(b0, N)}).kernel(s0, {rd(b0, N)});
     },
     std::nullopt},
    {"three_stage_pipeline",
     [](EventProgram& p) {
       written_on_s0(p);
       p.alloc(s1, b1, N).alloc(s2, b2, N);
       p.record(e0, s0).wait(s1, e0).kernel(s1, {rd(b0, N), wr(b1, N)}).record(e1, s1);
       p.wait(s2, e1).kernel(s2, {rd(b1, N), wr(b2, N)}).record(e2, s2);
       p.wait(s0, e2).kernel(s0, {wr(b0, N), rd(b2, N)});
     },
     std::nullopt},
    {"double_buffered_producer_consumer",
     [](EventProgram& p) {
       p.alloc(s0, b0, N).alloc(s0, b1, N);
       char* bufs[] = {b0, b1};
       cudaEvent_t ready[] = {event(10), event(11)};
       cudaEvent_t consumed[] = {event(12), event(13)};
       for (int i = 0; i < 6; ++i) {
         const int k = i % 2;
         p.wait(s0, consumed[k]).kernel(s0, {wr(bufs[k], N)}, "produce").record(ready[k], s0);
         p.wait(s1, ready[k]).kernel(s1, {rd(bufs[k], N)}, "consume").record(consumed[k], s1);
       }
     },
     std::nullopt},
    {"collective_between_waits",
     [](EventProgram& p) {
       written_on_s0(p);
       p.alloc(s0, b1, N).wait_stream(s1, s0).collective(s1, b0, b1, N).wait_stream(s0, s1).kernel(s0, {rd(b1, N)});
     },
     std::nullopt},
    {"graph_with_fork_and_join",
     [](EventProgram& p) {
       p.alloc(s0, b0, N).alloc(s0, b1, N);
       p.capture_begin(s0, 11).kernel(s0, {wr(b0, N)}).record(e0, s0).wait(s1, e0);
       p.kernel(s1, {rd(b0, N), wr(b1, N)}).record(e1, s1).wait(s0, e1).kernel(s0, {rd(b1, N)}).capture_end(s0, 11);
       p.replay(11, s2).sync_stream(s2).kernel(s3, {rd(b0, N), rd(b1, N)});
     },
     std::nullopt},
    {"graph_replayed_twice_on_one_stream",
     [](EventProgram& p) {
       p.alloc(s0, b0, N).capture_begin(s0, 12).kernel(s0, {wr(b0, N)}).kernel(s0, {rd(b0, N)}).capture_end(s0, 12);
       p.replay(12, s2).replay(12, s2);
     },
     std::nullopt},
    {"graph_input_ready_through_an_event",
     [](EventProgram& p) {
       p.alloc(s3, b0, N).alloc(s0, b1, N).kernel(s3, {wr(b0, N)});
       p.capture_begin(s0, 13).kernel(s0, {rd(b0, N), wr(b1, N)}).capture_end(s0, 13);
       p.record(e3, s3).wait(s2, e3).replay(13, s2);
     },
     std::nullopt},
    {"graph_private_pool_block_freed_after_the_capture",
     [](EventProgram& p) {
       p.capture_begin(s0, 14).alloc(s0, b0, N).kernel(s0, {wr(b0, N)}).kernel(s0, {rd(b0, N)}).capture_end(s0, 14);
       p.replay(14, s2).free(b0, N).replay(14, s2);
     },
     std::nullopt},
    {"event_recorded_again_later",
     [](EventProgram& p) { read_on_s1(p); p.kernel(s0, {rd(b0, N)}).record(e0, s0).wait(s2, e0).kernel(s2, {rd(b0, N)}); },
     std::nullopt},
    {"in_place_updates_on_one_stream",
     [](EventProgram& p) {
       written_on_s0(p);
       for (int i = 0; i < 10; ++i) p.kernel(s0, {rw(b0, N)});
     },
     std::nullopt},
    {"copy_chain",
     [](EventProgram& p) {
       p.alloc(s0, b0, N).alloc(s1, b1, N).fill(s0, b0, N).record(e0, s0).wait(s1, e0).copy(s1, b1, b0, N);
       p.sync_stream(s1).kernel(s0, {rd(b1, N)});
     },
     std::nullopt},
    {"memset_initializes", [](EventProgram& p) { p.alloc(s0, b0, N).fill(s0, b0, N).kernel(s0, {rd(b0, N)}); }, std::nullopt},
    {"copy_initializes",
     [](EventProgram& p) { written_on_s0(p); p.alloc(s0, b1, N).copy(s0, b1, b0, N).kernel(s0, {rd(b1, N)}); },
     std::nullopt},
    {"overlapping_views_on_one_stream",
     [](EventProgram& p) {
       p.alloc(s0, b0, N).kernel(s0, {wr(b0, 2048)}).kernel(s0, {rd(b0 + 1024, 1024), wr(b0 + 2048, 1024)});
       p.kernel(s0, {wr(b0 + 512, 512)}).kernel(s0, {rd(b0, 3072)});
     },
     std::nullopt},
    {"allocated_used_and_freed_on_a_side_stream",
     [](EventProgram& p) { p.alloc(s1, b0, N).kernel(s1, {wr(b0, N)}).kernel(s1, {rd(b0, N)}).free(b0, N); },
     std::nullopt},
    {"memory_the_allocator_did_not_give_is_not_uninitialized",
     [](EventProgram& p) { p.kernel(s0, {rd(buffer(9), N)}); }, std::nullopt},
    {"undeclared_kernel_is_unchecked_not_reported",
     [](EventProgram& p) { written_on_s0(p); p.undeclared_kernel(s1, "raw"); }, std::nullopt},
    {"ordered_through_the_host_then_another_stream",
     [](EventProgram& p) {
       written_on_s0(p);
       p.sync_stream(s0).kernel(s1, {wr(b0 + 10, 10)}).record(e1, s1).wait(s2, e1).kernel(s2, {rd(b0, N)});
     },
     std::nullopt},
    {"stream_wait_chain",
     [](EventProgram& p) { written_on_s0(p); p.wait_stream(s1, s0).wait_stream(s2, s1).kernel(s2, {rd(b0, N)}); },
     std::nullopt},
    {"destroyed_event_is_forgotten_not_misused",
     [](EventProgram& p) {
       written_on_s0(p);
       p.record(e0, s0).wait(s1, e0).destroy_event(e0).kernel(s1, {rd(b0, N)});
     },
     std::nullopt},
};

class PlantedBug : public ::testing::TestWithParam<Case> {};
class CorrectProgram : public ::testing::TestWithParam<Case> {};

TEST_P(PlantedBug, IsFoundAsPlanted) {
  EventProgram p;
  GetParam().build(p);
  const auto reports = p.run();
  ASSERT_FALSE(reports.empty()) << GetParam().name << ": not found";
  EXPECT_EQ(reports.front().kind, *GetParam().planted) << describe(reports);
}

TEST_P(CorrectProgram, IsNotReported) {
  EventProgram p;
  GetParam().build(p);
  const auto reports = p.run();
  EXPECT_TRUE(reports.empty()) << describe(reports);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Sanitizer, PlantedBug, ::testing::ValuesIn(kBugs), case_name);
INSTANTIATE_TEST_SUITE_P(Sanitizer, CorrectProgram, ::testing::ValuesIn(kCorrect), case_name);

TEST(SanitizerSuite, HasAtLeastThirtyOfEach) {
  EXPECT_GE(std::size(kBugs), 30u);
  EXPECT_GE(std::size(kCorrect), 30u);
}

}  // namespace
