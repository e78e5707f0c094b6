// Allocation traces read a batch at a time (Note [Reading traces]): the field count from the
// header and the thread column, gzip read to its end, slots reused so memory follows what is
// live, bounded lines and messages, and the streamed replay (its timing, its failures).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/alloc_replay.hpp"
#include "cudakit/memory/alloc_trace.hpp"
#include "support/expect_refused.hpp"
#include "support/gzip.hpp"
#include "support/paths.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_files.hpp"

namespace cudakit::memory {
namespace {

namespace fs = std::filesystem;
using cudakit::testing::expect_refused;
using cudakit::testing::ScratchDir;
using cudakit::testing::write_file;

using cudakit::testing::Gzip;
using cudakit::testing::gzip;

// `n` allocations on two streams, each freed two operations later: at most two live at once.
std::string churn(int n) {
  std::string text = "op,id,size,stream\n";
  for (int i = 0; i < n; ++i) {
    text += "a," + std::to_string(i) + "," + std::to_string(512 * (i % 5 + 1)) + ",s" + std::to_string(i % 2) + "\n";
    if (i > 0) text += "f," + std::to_string(i - 1) + ",0,s" + std::to_string((i - 1) % 2) + "\n";
  }
  return text + "f," + std::to_string(n - 1) + ",0,s" + std::to_string((n - 1) % 2) + "\n";
}

TEST(AllocTraceReader, TheHeaderSetsTheFieldCountAndTheThreadColumnIsKept) {
  const AllocTrace t = parse_alloc_trace("op,id,size,stream,thread\na,1,64,s0,77\nf,1,0,s0,78\n", "t");
  ASSERT_EQ(t.ops.size(), 2u);
  EXPECT_EQ(t.ops[0].thread, 77u);
  EXPECT_EQ(t.ops[1].thread, 78u);
  EXPECT_EQ(parse_alloc_trace("a,1,64,s0\n", "t").ops.at(0).thread, 0u);
  expect_refused([] { (void)parse_alloc_trace("a,1,64,s0,5\n", "t"); },
                 "t:1: expected 4 comma-separated fields (op,id,size,stream), found 5 (line: 'a,1,64,s0,5')");
  expect_refused([] { (void)parse_alloc_trace("op,id,size,stream\na,1,64,s0,5\n", "t"); },
                 "t:2: expected 4 comma-separated fields");
  expect_refused([] { (void)parse_alloc_trace("op,id,size,stream,thread\na,1,64,s0\n", "t"); },
                 "t:2: expected 5 comma-separated fields (op,id,size,stream,thread), found 4");
  expect_refused([] { (void)parse_alloc_trace("op,id,size,stream,thread\na,1,64,s0,x\n", "t"); },
                 "t:2: thread is not a non-negative integer");
  expect_refused([] { (void)parse_alloc_trace("op,id,size,stream,tid\n", "t"); }, "t:1: a header names the columns");
  expect_refused([] { (void)parse_alloc_trace("a,1,64,\n", "t"); }, "t:1: the stream is empty");
}

TEST(AllocTraceReader, BatchesOfAnySizeReadTheSameOperations) {
  const std::string text = churn(100);
  const AllocTrace whole = parse_alloc_trace(text, "t");
  for (const std::size_t batch : {1u, 3u, 64u, 1000u}) {
    AllocTraceReader reader(text, "t");
    std::vector<AllocTraceOp> ops;
    std::size_t at = 0;
    while (reader.read(ops, batch)) {
      EXPECT_LE(ops.size(), batch);
      for (std::size_t i = 0; i < ops.size(); ++i, ++at) {
        EXPECT_EQ(ops[i].slot, whole.ops.at(at).slot);
        EXPECT_EQ(ops[i].size, whole.ops.at(at).size);
        EXPECT_EQ(reader.line_of(i), at + 2) << "the header is line 1";
      }
    }
    EXPECT_EQ(at, whole.ops.size());
    EXPECT_EQ(reader.ops_read(), whole.ops.size());
  }
}

TEST(AllocTraceReader, SlotsAreReusedSoTheyNumberTheAllocationsLiveAtOnce) {
  const AllocTrace t = parse_alloc_trace(churn(10000), "t");
  EXPECT_EQ(t.ops.size(), 20000u);
  EXPECT_EQ(t.num_ids, 2u);
  EXPECT_EQ(t.num_streams, 2u);
  // An id freed and allocated again is a new allocation.
  const AllocTrace again = parse_alloc_trace("a,1,8,0\nf,1,0,0\na,1,16,0\nf,1,0,0\n", "t");
  EXPECT_EQ(again.ops[3].size, 16u);
  EXPECT_EQ(again.num_ids, 1u);
}

TEST(AllocTraceReader, LinesAndMessagesAreBounded) {
  const std::string long_line = "a,1,64," + std::string(300000, 's') + "\n";
  try {
    (void)parse_alloc_trace(long_line, "t");
    FAIL() << "accepted a 300 KB line";
  } catch (const InvalidArgumentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("t:1: the line is longer than 4096 bytes"), std::string::npos) << what.substr(0, 400);
    EXPECT_LT(what.size(), 500u);
  }
  expect_refused([] { (void)parse_alloc_trace(std::string("a,1,6\0" "4,s0\n", 11), "t"); },
                 "t:1: the line holds a NUL byte (not a text trace) (line: 'a,1,6\\x004,s0')");
  expect_refused([] { (void)parse_alloc_trace("a,1,18446744073709551615,s0\na,2,1,s0\n", "t"); },
                 "t:2: the live sizes add up to more than 2^64 bytes");
}

TEST(AllocTraceReader, GzipIsReadToItsEndAndATruncatedFileIsAnError) {
  const ScratchDir dir;
  const std::string text = churn(2000);
  write_file(dir.path() / "whole.csv.gz", gzip(text, Gzip::whole));
  EXPECT_EQ(load_alloc_trace((dir.path() / "whole.csv.gz").string()).ops.size(), 4000u);
  for (const Gzip form : {Gzip::cut_after_flush, Gzip::header_only}) {
    const fs::path path = dir.path() / "cut.csv.gz";
    write_file(path, gzip(text, form));
    expect_refused([&] { (void)load_alloc_trace(path.string()); },
                   path.string() + ": the compressed data ends early (a truncated gzip file");
  }
  // Members one after another are one file (as `cat a.gz b.gz` makes); anything else after one
  // is not.
  write_file(dir.path() / "two.csv.gz", gzip("a,1,8,0\n", Gzip::whole) + gzip("f,1,0,0\n", Gzip::whole));
  EXPECT_EQ(load_alloc_trace((dir.path() / "two.csv.gz").string()).ops.size(), 2u);
  write_file(dir.path() / "junk.csv.gz", gzip(text, Gzip::whole) + "junk");
  expect_refused([&] { (void)load_alloc_trace((dir.path() / "junk.csv.gz").string()); },
                 "junk.csv.gz: 4+ bytes follow the compressed data ('junk'...)");
  // A plain file is read as it is, whatever its name.
  write_file(dir.path() / "plain.csv.gz", text);
  EXPECT_EQ(load_alloc_trace((dir.path() / "plain.csv.gz").string()).ops.size(), 4000u);
  try {
    (void)load_alloc_trace((dir.path() / "missing.csv").string());
    FAIL() << "read a missing file";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.csv: No such file or directory"), std::string::npos) << e.what();
  }
}

// Allocates from a counter; refuses one size, as an allocator out of memory does.
struct CountingAllocator {
  std::size_t refused_size = 0;
  std::size_t live = 0;
  std::size_t empties = 0;
  std::uintptr_t next = 4096;
  void* alloc(std::size_t n, int) {
    if (n == refused_size) throw std::bad_alloc();
    ++live;
    return reinterpret_cast<void*>(next += 4096);
  }
  void free(void*, int) { --live; }
  void empty_cache() { ++empties; }
  void reset_peaks() {}
  std::size_t peak_allocated() { return 0; }
  std::size_t peak_reserved() { return 0; }
  std::size_t device_allocations() { return 0; }
};

TEST(AllocTraceReplay, AStreamedReplayCountsItsOperationsAndItsStreams) {
  const std::string text = churn(1000);
  AllocTraceReader reader(text, "t");
  CountingAllocator a;
  std::vector<std::uint32_t> asked;
  const ReplayResult r = replay_alloc_trace(a, reader, [&](std::uint32_t s) {
    if (std::find(asked.begin(), asked.end(), s) == asked.end()) asked.push_back(s);
    return static_cast<int>(s);
  }, nullptr, 7);
  EXPECT_EQ(r.ops, 2000u);
  EXPECT_EQ(asked, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(a.live, 0u);
}

TEST(AllocTraceReplay, AFailedAllocationFreesWhatIsLiveAndSaysItsLine) {
  AllocTraceReader reader("a,1,64,s0\na,2,128,s1\na,3,999,s0\n", "t");
  CountingAllocator a;
  a.refused_size = 999;
  std::uint64_t line = 0;
  EXPECT_THROW((void)replay_alloc_trace(a, reader, [](std::uint32_t s) { return static_cast<int>(s); }, &line),
               std::bad_alloc);
  EXPECT_EQ(line, 3u);
  EXPECT_EQ(a.live, 0u) << "the allocations made before the failure are freed";
  // The whole-trace replay frees them too.
  const AllocTrace whole = parse_alloc_trace("a,1,64,s0\na,2,999,s0\n", "t");
  CountingAllocator b;
  b.refused_size = 999;
  EXPECT_THROW((void)replay_alloc_trace(b, whole, std::vector<int>{0}), std::bad_alloc);
  EXPECT_EQ(b.live, 0u);
}

}  // namespace
}  // namespace cudakit::memory
