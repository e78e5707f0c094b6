// Host tier of the GDS layer: GdsFile and its engine into host memory, on the host's file system
// (the engine runs for real: chunks, alignment, threads, page-cache checks, errors).
#include "cudakit/gds/gds_file.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <cstdlib>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "cudakit/gds/io_error.hpp"
#include "cudakit/gds/io_tuning.hpp"
#include "cudakit/gds/save_file.hpp"
#include "cudakit/tensor/factories.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_files.hpp"

namespace cudakit::gds {
namespace {

using cudakit::testing::ScratchDir;

std::string pattern(std::size_t bytes, unsigned seed = 1) { return cudakit::testing::patterned_bytes(bytes, seed); }

// Small chunks and several threads, so that a few hundred KiB cross many chunk boundaries; no
// page-cache check, so that the file just written is read with O_DIRECT where the file system
// allows it.
GdsOptions small_chunks(int threads = 3) {
  GdsOptions options;
  options.chunk_bytes = 16384;
  options.io_threads = threads;
  options.page_cache_check = false;
  options.cold_reads = ColdReads::direct;  // what a load measured elsewhere in the process does not change it
  options.cufile = CuFileUse::never;
  return options;
}

std::string error_text(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& error) {
    return error.what();
  }
  ADD_FAILURE() << "no error thrown";
  return {};
}

TEST(GdsFile, LoadsEveryOffsetAndSizeAcrossChunkBoundaries) {
  ScratchDir dir;
  const std::string bytes = pattern(200000);
  cudakit::testing::write_file(dir.path() / "data.bin", bytes);
  GdsFile file(dir.path() / "data.bin", O_RDONLY, small_chunks());
  for (std::uint64_t offset : {0ull, 1ull, 4095ull, 4096ull, 16383ull, 16385ull, 99999ull}) {
    for (std::size_t size : {std::size_t{1}, std::size_t{4096}, std::size_t{16384}, std::size_t{50001}}) {
      if (offset + size > bytes.size()) continue;
      std::vector<char> out(size + 2, '#');
      const IoReport report = file.load(out.data() + 1, size, offset);
      ASSERT_EQ(std::string(out.data() + 1, size), bytes.substr(offset, size)) << offset << " " << size;
      EXPECT_EQ(out.front(), '#');  // nothing written outside the buffer
      EXPECT_EQ(out.back(), '#');
      EXPECT_EQ(report.bytes, size);
      EXPECT_EQ(report.direct_bytes + report.buffered_bytes, size);
      if (file.o_direct()) {
        EXPECT_EQ(report.path, IoPath::cudakit_odirect) << report.to_string();
        EXPECT_EQ(report.direct_bytes, size);
      } else {
        EXPECT_EQ(report.path, IoPath::buffered);
        EXPECT_NE(report.note.find("O_DIRECT"), std::string::npos) << report.note;
      }
    }
  }
}

TEST(GdsFile, LoadsTheWholeFileWithEachThreadCount) {
  ScratchDir dir;
  const std::string bytes = pattern(300001, 7);
  cudakit::testing::write_file(dir.path() / "data.bin", bytes);
  for (int threads : {1, 2, 5, 64}) {
    GdsFile file(dir.path() / "data.bin", O_RDONLY, small_chunks(threads));
    std::string out(bytes.size(), '\0');
    const IoReport report = file.load(out.data(), out.size());
    EXPECT_EQ(out, bytes) << threads << " threads";
    // 19 chunks of 16 KiB: never more threads than chunks.
    EXPECT_EQ(report.io_threads, std::min(threads, 19));
  }
}

TEST(GdsFile, BufferedWhenODirectIsOffAndSaysSo) {
  ScratchDir dir;
  const std::string bytes = pattern(70000, 3);
  cudakit::testing::write_file(dir.path() / "data.bin", bytes);
  GdsOptions options = small_chunks();
  options.o_direct = false;
  GdsFile file(dir.path() / "data.bin", O_RDONLY, options);
  EXPECT_FALSE(file.o_direct());
  std::string out(bytes.size(), '\0');
  const IoReport report = file.load(out.data(), out.size());
  EXPECT_EQ(out, bytes);
  EXPECT_EQ(report.path, IoPath::buffered);
  EXPECT_EQ(report.buffered_bytes, bytes.size());
  EXPECT_NE(report.note.find("O_DIRECT turned off"), std::string::npos) << report.note;
}

TEST(GdsFile, ChunksInThePageCacheAreReadThroughIt) {
  ScratchDir dir;
  const std::string bytes = pattern(65536, 4);
  cudakit::testing::write_file(dir.path() / "data.bin", bytes);
  GdsOptions options = small_chunks();
  options.page_cache_check = true;
  GdsFile file(dir.path() / "data.bin", O_RDONLY, options);
  if (!file.o_direct()) GTEST_SKIP() << file.o_direct_status();
  // A buffered read: every page is now cached.
  EXPECT_EQ(cudakit::testing::read_file(dir.path() / "data.bin"), bytes);
  std::string out(bytes.size(), '\0');
  const IoReport report = file.load(out.data(), out.size());
  EXPECT_EQ(out, bytes);
  EXPECT_EQ(report.buffered_bytes, bytes.size()) << report.to_string();
  EXPECT_NE(report.note.find("page cache"), std::string::npos) << report.note;
}

TEST(GdsFile, ColdChunksReadBufferedWhenAskedAndSaySo) {
  ScratchDir dir;
  const std::string bytes = pattern(300001, 5);
  cudakit::testing::write_file(dir.path() / "data.bin", bytes);
  GdsOptions options = small_chunks();
  options.cold_reads = ColdReads::buffered;
  GdsFile file(dir.path() / "data.bin", O_RDONLY, options);
  if (!file.o_direct()) GTEST_SKIP() << file.o_direct_status();
  std::string out(bytes.size(), '\0');
  const IoReport report = file.load(out.data(), out.size());
  EXPECT_EQ(out, bytes);
  EXPECT_EQ(report.path, IoPath::buffered) << report.to_string();
  EXPECT_EQ(report.buffered_bytes, bytes.size());
  EXPECT_EQ(report.direct_bytes, 0u);
  EXPECT_NE(report.note.find("read through the page cache ahead of the threads"), std::string::npos) << report.note;
}

TEST(GdsFile, AutomaticColdReadsMeasureBothWaysOnceThenKeepTheFaster) {
  forget_cold_read_measurements();
  ScratchDir dir;
  const std::string bytes = pattern(600001, 6);  // 37 chunks of 16 KiB: over four rounds of 3 threads
  cudakit::testing::write_file(dir.path() / "data.bin", bytes);
  GdsOptions options = small_chunks();
  options.cold_reads = ColdReads::automatic;
  GdsFile file(dir.path() / "data.bin", O_RDONLY, options);
  if (!file.o_direct()) GTEST_SKIP() << file.o_direct_status();
  std::string out(bytes.size(), '\0');
  const IoReport first = file.load(out.data(), out.size());
  EXPECT_EQ(out, bytes);
  EXPECT_NE(first.note.find("cold reads measured"), std::string::npos) << first.note;
  // Two rounds of each way: 6 chunks of 16 KiB O_DIRECT and 6 buffered at least.
  EXPECT_GE(first.direct_bytes, 6u * 16384);
  EXPECT_GE(first.buffered_bytes, 6u * 16384);
  EXPECT_EQ(first.direct_bytes + first.buffered_bytes, bytes.size());
  const bool buffered_won = first.note.find("the rest buffered") != std::string::npos;
  EXPECT_NE(buffered_won, first.note.find("the rest O_DIRECT") != std::string::npos) << first.note;
  // The next load on the file system goes the measured way, all of it, without measuring again.
  std::string again(bytes.size(), '\0');
  const IoReport second = file.load(again.data(), again.size());
  EXPECT_EQ(again, bytes);
  EXPECT_EQ(second.note.find("cold reads measured"), std::string::npos) << second.note;
  EXPECT_EQ(buffered_won ? second.buffered_bytes : second.direct_bytes, bytes.size()) << second.to_string();
  forget_cold_read_measurements();
}

TEST(GdsFile, ReadPastTheEndNamesPathOffsetAndSizes) {
  ScratchDir dir;
  cudakit::testing::write_file(dir.path() / "short.bin", pattern(1000));
  GdsFile file(dir.path() / "short.bin", O_RDONLY, small_chunks());
  std::vector<char> out(2000, '#');
  const std::string message = error_text([&] { (void)file.load(out.data(), 500, 600); });
  EXPECT_NE(message.find("short.bin"), std::string::npos) << message;
  EXPECT_NE(message.find("offset 600 + 500 bytes = 1100 > file size 1000"), std::string::npos) << message;
  EXPECT_EQ(out[0], '#');  // nothing was read
  EXPECT_THROW((void)file.load(out.data(), 1, 1001), InvalidArgumentError);
  EXPECT_EQ(file.statistics().loads, 0u);
}

TEST(GdsFile, MissingFileNamesPathAndReason) {
  ScratchDir dir;
  const std::string message = error_text([&] { GdsFile file(dir.path() / "absent.bin"); });
  EXPECT_NE(message.find("absent.bin"), std::string::npos) << message;
  EXPECT_NE(message.find("O_RDONLY"), std::string::npos) << message;
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
}

TEST(GdsFile, SavesAtUnalignedOffsetsAndLoadsBack) {
  ScratchDir dir;
  const auto path = dir.path() / "out.bin";
  const std::string first = pattern(100003, 5);
  const std::string second = pattern(33333, 6);
  {
    GdsFile file(path, O_RDWR | O_CREAT, small_chunks());
    const IoReport saved = file.save(first.data(), first.size(), 0);
    EXPECT_EQ(saved.bytes, first.size());
    EXPECT_EQ(saved.direct_bytes + saved.buffered_bytes, first.size());
    if (file.o_direct()) {
      EXPECT_EQ(saved.path, IoPath::cudakit_odirect) << saved.to_string();
      EXPECT_EQ(saved.buffered_bytes, first.size() % 4096) << saved.to_string();  // the tail only
    }
    (void)file.save(second.data(), second.size(), 12345);  // unaligned head and tail
    EXPECT_EQ(file.size(), first.size());
    (void)file.save(second.data(), second.size(), first.size() + 7);  // grows the file
    EXPECT_EQ(file.size(), first.size() + 7 + second.size());
    EXPECT_EQ(file.statistics().saves, 3u);
  }
  std::string expected = first;
  expected.replace(12345, second.size(), second);
  expected += std::string(7, '\0') + second;
  EXPECT_EQ(cudakit::testing::read_file(path), expected);
}

TEST(GdsFile, BatchLoadPutsEachBufferInPlace) {
  ScratchDir dir;
  const std::string bytes = pattern(90000, 8);
  cudakit::testing::write_file(dir.path() / "data.bin", bytes);
  GdsFile file(dir.path() / "data.bin", O_RDONLY, small_chunks());
  std::vector<std::string> outs{std::string(10, '\0'), std::string(40000, '\0'), std::string(20001, '\0')};
  const std::vector<IoRequest> requests{{outs[0].data(), 10, 5}, {outs[1].data(), 40000, 20000}, {outs[2].data(), 20001, 69999}};
  const IoReport report = file.load_batch(requests);
  EXPECT_EQ(report.requests, 3u);
  EXPECT_EQ(report.bytes, 60011u);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(outs[i], bytes.substr(requests[i].file_offset, requests[i].bytes)) << i;
  }
}

TEST(GdsFile, CpuTensorsLoadAndSave) {
  ScratchDir dir;
  const auto path = dir.path() / "tensors.bin";
  tensor::Tensor a = tensor::arange(1000.0, {.dtype = tensor::DType::float32});
  tensor::Tensor b = tensor::arange(77.0, {.dtype = tensor::DType::int64});
  {
    GdsFile file(path, O_RDWR | O_CREAT, small_chunks());
    const std::vector<TensorAt> batch{{a, 0}, {b, 4000}};
    EXPECT_EQ(file.save_batch(batch).bytes, 4000u + 77u * 8u);
  }
  GdsFile file(path, O_RDONLY, small_chunks());
  tensor::Tensor a2 = tensor::zeros({1000}, {.dtype = tensor::DType::float32});
  tensor::Tensor b2 = tensor::zeros({77}, {.dtype = tensor::DType::int64});
  (void)file.load(a2, 0);
  (void)file.load(b2, 4000);
  EXPECT_EQ(a2.to_vector<float>(), a.to_vector<float>());
  EXPECT_EQ(b2.to_vector<std::int64_t>(), b.to_vector<std::int64_t>());
  const tensor::Tensor transposed = tensor::zeros({4, 4}).t();
  const std::string message = error_text([&] { (void)file.load(transposed, 0); });
  EXPECT_NE(message.find("not contiguous"), std::string::npos) << message;
}

TEST(GdsFile, AsyncLoadReportsWhenWaited) {
  ScratchDir dir;
  const std::string bytes = pattern(120000, 9);
  cudakit::testing::write_file(dir.path() / "data.bin", bytes);
  GdsFile file(dir.path() / "data.bin", O_RDONLY, small_chunks());
  std::string out(bytes.size(), '\0');
  IoTicket ticket = file.load_async(out.data(), out.size(), 0);
  const IoReport report = ticket.wait();
  EXPECT_EQ(out, bytes);
  EXPECT_EQ(report.bytes, bytes.size());
  EXPECT_EQ(file.last_io().bytes, bytes.size());
  IoTicket failing = file.load_async(out.data(), 10, bytes.size());
  EXPECT_THROW((void)failing.wait(), InvalidArgumentError);
}

TEST(GdsFile, StatisticsSumEachPath) {
  ScratchDir dir;
  const std::string bytes = pattern(50000, 10);
  cudakit::testing::write_file(dir.path() / "data.bin", bytes);
  GdsFile file(dir.path() / "data.bin", O_RDONLY, small_chunks());
  std::string out(bytes.size(), '\0');
  const IoReport first = file.load(out.data(), 100, 0);
  (void)file.load(out.data(), 20000, 1);
  const IoStatistics stats = file.statistics();
  EXPECT_EQ(stats.loads, 2u);
  EXPECT_EQ(stats.of(first.path).calls, 2u);
  EXPECT_EQ(stats.of(first.path).bytes, 20100u);
  EXPECT_EQ(file.last_io().bytes, 20000u);
  EXPECT_NE(file.last_io().to_string().find("load 20000 bytes via"), std::string::npos);
}

TEST(GdsFile, ThreadsLoadingOneFileConcurrentlyEachGetTheirBytes) {
  ScratchDir dir;
  const std::string bytes = pattern(160000, 11);
  cudakit::testing::write_file(dir.path() / "data.bin", bytes);
  GdsFile file(dir.path() / "data.bin", O_RDONLY, small_chunks(2));
  std::vector<std::thread> threads;
  std::vector<std::string> outs(4, std::string(40000, '\0'));
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] { (void)file.load(outs[t].data(), 40000, 40000u * t); });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(outs[t], bytes.substr(40000u * t, 40000)) << t;
  EXPECT_EQ(file.statistics().loads, 4u);
}

// A file-size limit makes the write fail part-way (EFBIG), as a full disk would.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    previous_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    ::signal(SIGXFSZ, previous_);
  }

 private:
  rlimit saved_{};
  sighandler_t previous_{};
};

TEST(GdsFile, IncompleteWriteIsAnErrorNamingBytesWritten) {
  ScratchDir dir;
  const std::string bytes = pattern(100000, 12);
  GdsFile file(dir.path() / "limited.bin", O_RDWR | O_CREAT, small_chunks(1));
  std::string message;
  {
    FileSizeLimit limit(40000);
    message = error_text([&] { (void)file.save(bytes.data(), bytes.size(), 0); });
  }
  EXPECT_NE(message.find("limited.bin"), std::string::npos) << message;
  EXPECT_NE(message.find("incomplete"), std::string::npos) << message;
  EXPECT_NE(message.find("of "), std::string::npos) << message;
  EXPECT_EQ(file.statistics().saves, 0u);  // a failed save is never recorded as done
}

TEST(GdsOptions, EnvironmentGrammarAndErrors) {
  GdsOptions options;
  options.set("CHUNK_BYTES", "4M");
  EXPECT_EQ(options.chunk_bytes, 4u << 20);
  options.set("IO_THREADS", "12");
  EXPECT_EQ(options.io_threads, 12);
  options.set("O_DIRECT", "0");
  EXPECT_FALSE(options.o_direct);
  options.set("CUFILE", "required");
  EXPECT_EQ(options.cufile, CuFileUse::required);
  EXPECT_EQ(options.cold_reads, ColdReads::automatic);
  options.set("COLD_READS", "buffered");
  EXPECT_EQ(options.cold_reads, ColdReads::buffered);
  options.set("COLD_READS", "direct");
  EXPECT_EQ(options.cold_reads, ColdReads::direct);
  EXPECT_NE(error_text([&] { options.set("COLD_READS", "fast"); }).find("CUDAKIT_GDS_COLD_READS=\"fast\": takes auto, direct or buffered"),
            std::string::npos);
  EXPECT_EQ(options.cold_reads, ColdReads::direct);
  const std::string chunk = error_text([&] { options.set("CHUNK_BYTES", "1000"); });
  EXPECT_NE(chunk.find("CUDAKIT_GDS_CHUNK_BYTES=\"1000\""), std::string::npos) << chunk;
  EXPECT_NE(chunk.find("multiple of 4096"), std::string::npos) << chunk;
  EXPECT_NE(error_text([&] { options.set("IO_THREADS", "0"); }).find("from 1 to 256"), std::string::npos);
  EXPECT_NE(error_text([&] { options.set("IO_THREADS", "-3"); }).find("IO_THREADS"), std::string::npos);
  EXPECT_NE(error_text([&] { options.set("CHUNK_BYTES", "99999999999999999999999"); }).find("fits"), std::string::npos);
  EXPECT_NE(error_text([&] { options.set("CUFILE", "yes"); }).find("auto, never or required"), std::string::npos);
  EXPECT_NE(error_text([&] { options.set("CHUNKS", "1"); }).find("unknown setting CUDAKIT_GDS_CHUNKS"), std::string::npos);
  EXPECT_EQ(options.io_threads, 12);  // a refused value changes nothing
}

TEST(GdsOptions, FromEnvironmentReadsTheVariables) {
  ::setenv("CUDAKIT_GDS_IO_THREADS", "3", 1);
  ::setenv("CUDAKIT_GDS_FSYNC", "1", 1);
  const GdsOptions options = GdsOptions::from_environment();
  EXPECT_EQ(options.io_threads, 3);
  EXPECT_TRUE(options.fsync);
  ::setenv("CUDAKIT_GDS_FSYNC", "maybe", 1);
  EXPECT_THROW((void)GdsOptions::from_environment(), InvalidArgumentError);
  ::unsetenv("CUDAKIT_GDS_IO_THREADS");
  ::unsetenv("CUDAKIT_GDS_FSYNC");
}

TEST(IoTuning, FileSystemDefaultsAndOverrides) {
  const IoTuning local = tuning_for("ext4", {});
  const IoTuning remote = tuning_for("nfs", {});
  EXPECT_GT(remote.chunk_bytes, local.chunk_bytes);
  EXPECT_GT(remote.io_threads, local.io_threads);
  GdsOptions options;
  options.chunk_bytes = 65536;
  options.io_threads = 2;
  const IoTuning chosen = tuning_for("ext4", options);
  EXPECT_EQ(chosen.chunk_bytes, 65536u);
  EXPECT_EQ(chosen.io_threads, 2);
  EXPECT_EQ(local.chunk_bytes % local.alignment, 0u);
}

TEST(SaveFile, AtomicSaveThatFailsLeavesTheOldFileAndNoTemporary) {
  ScratchDir dir;
  const auto path = dir.path() / "checkpoint.bin";
  const std::string old_bytes = pattern(30000, 13);
  cudakit::testing::write_file(path, old_bytes);
  const std::string bytes = pattern(100000, 14);
  const std::vector<IoRequest> requests{{const_cast<char*>(bytes.data()), bytes.size(), 0}};
  std::string message;
  {
    FileSizeLimit limit(50000);
    message = error_text([&] { (void)save_file(path, requests, {.atomic = true}, small_chunks()); });
  }
  EXPECT_NE(message.find("incomplete"), std::string::npos) << message;
  EXPECT_EQ(cudakit::testing::read_file(path), old_bytes);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);  // no temporary left
  // Without the limit the same save replaces the file.
  const IoReport report = save_file(path, requests, {.atomic = true}, small_chunks());
  EXPECT_EQ(report.bytes, bytes.size());
  EXPECT_EQ(cudakit::testing::read_file(path), bytes);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(SaveFile, NonAtomicSaveTruncatesAndWritesEveryRequest) {
  ScratchDir dir;
  const auto path = dir.path() / "plain.bin";
  cudakit::testing::write_file(path, pattern(90000, 15));
  const std::string a = pattern(5000, 16), b = pattern(7000, 17);
  const std::vector<IoRequest> requests{{const_cast<char*>(a.data()), a.size(), 0},
                                        {const_cast<char*>(b.data()), b.size(), 6000}};
  (void)save_file(path, requests, {.fsync = true}, small_chunks());
  EXPECT_EQ(cudakit::testing::read_file(path), a + std::string(1000, '\0') + b);
}

}  // namespace
}  // namespace cudakit::gds
