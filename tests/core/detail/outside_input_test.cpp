// The rules every reader of outside input follows (Note [Outside input]): quoted excerpts, the
// size limit (a file's size, and an endless pipe), NUL bytes, JSON nesting before parsing, and
// parser messages that do not echo the input; and the library's writers (Note [Replacing a file]).
#include "cudakit/core/detail/outside_input.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/core/error.hpp"
#include "support/expect_refused.hpp"
#include "support/scoped_env.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_files.hpp"

namespace cudakit::detail {
namespace {

namespace fs = std::filesystem;
using cudakit::testing::expect_refused;
using cudakit::testing::read_file;
using cudakit::testing::ScopedEnv;
using cudakit::testing::ScratchDir;
using cudakit::testing::write_file;

TEST(OutsideInput, QuotesEscapeEveryByteThatIsNotPrintable) {
  EXPECT_EQ(quote_input(std::string("a\0b\n'\\\t\r\xff", 9)), "'a\\x00b\\n\\'\\\\\\t\\r\\xff'");
  EXPECT_EQ(quote_input("plain, text"), "'plain, text'");
}

TEST(OutsideInput, QuotesAtMostTheirLimitAndSayHowLongTheInputWas) {
  const std::string long_line(300000, 'x');
  EXPECT_EQ(quote_input(long_line), "'" + std::string(kQuotedInputBytes, 'x') + "'... (300000 bytes)");
  EXPECT_EQ(quote_input(long_line, 3), "'xxx'... (300000 bytes)");
}

TEST(OutsideInput, PositionsCountLinesAndColumnsFromOne) {
  const std::string text = "ab\ncd\n\nef";
  EXPECT_EQ(position_of(text, 0).line, 1u);
  EXPECT_EQ(position_of(text, 4).line, 2u);
  EXPECT_EQ(position_of(text, 4).column, 2u);
  EXPECT_EQ(position_of(text, 8).line, 4u);
  EXPECT_EQ(position_of(text, 1000).line, 4u);  // past the end: the end
}

TEST(OutsideInput, NestingIsCheckedBeforeParsing) {
  const auto nested = [](std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  check_json_depth(nested(kMaxJsonDepth), "f.json", "api");
  expect_refused([&] { check_json_depth(nested(kMaxJsonDepth + 1), "f.json", "api"); },
                 "f.json:1: JSON nests deeper than 256 levels (byte 256, column 257)");
  expect_refused([&] { check_json_depth("{\"a\":\n" + nested(100000), "f.json", "api"); }, "f.json:2: JSON nests");
  // Brackets in strings, also after an escaped quote, are text.
  check_json_depth("[\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"]", "f.json", "api");
  expect_refused([&] { check_json_depth("[\"\\\\\"" + nested(300) + "]", "f.json", "api"); }, "nests deeper");
}

TEST(OutsideInput, ParserMessagesQuoteTheInputBriefly) {
  const std::string text = "{\"a\": \"" + std::string(300000, 'x') + "\\q\"}";
  try {
    (void)parse_outside_json<nlohmann::json>(text, "f.json", "api");
    FAIL() << "accepted";
  } catch (const InvalidArgumentError& e) {
    const std::string what = e.what();
    EXPECT_LT(what.size(), 500u) << what.substr(0, 600);
    EXPECT_NE(what.find("f.json:1:"), std::string::npos) << what;
    EXPECT_NE(what.find("not valid JSON: syntax error while parsing value"), std::string::npos) << what;
    EXPECT_EQ(what.find("last read"), std::string::npos) << what;
  }
  expect_refused([] { (void)parse_outside_json<nlohmann::json>("[1e400]", "f.json", "api"); },
                 "f.json: not valid JSON: number overflow parsing '1e400'");
  try {  // the parser quotes the whole number: cut
    (void)parse_outside_json<nlohmann::json>("[1" + std::string(300000, '0') + "e400]", "f.json", "api");
    FAIL() << "accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_LT(std::string(e.what()).size(), 500u);
  }
  EXPECT_EQ(parse_outside_json<nlohmann::json>("{\"a\": [1]}", "f.json", "api")["a"][0], 1);
}

TEST(OutsideInput, FilesOverTheLimitAreRefusedBeforeTheyAreRead) {
  const ScratchDir dir;
  const fs::path path = dir.path() / "big.json";
  write_file(path, std::string(5000, ' '));
  expect_refused([&] { (void)read_input_file(path.string(), "api", 4096); },
                 path.string() + ": holds 5000 bytes, more than the 4096");
  EXPECT_EQ(read_input_file(path.string(), "api", 5000).size(), 5000u);
  const ScopedEnv limit("CUDAKIT_INPUT_MAX_BYTES", "100");
  EXPECT_EQ(input_size_limit(), 100u);
  expect_refused([&] { (void)read_text_file(path.string(), "api"); }, "more than the 100");
  const ScopedEnv bad("CUDAKIT_INPUT_MAX_BYTES", "lots");
  expect_refused([] { (void)input_size_limit(); }, "CUDAKIT_INPUT_MAX_BYTES: invalid argument: takes a count");
}

TEST(OutsideInput, AnEndlessPipeStopsAtTheLimit) {
  const ScratchDir dir;
  const fs::path fifo = dir.path() / "endless";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::signal(SIGPIPE, SIG_IGN);
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    const std::string chunk(4096, 'a');
    while (::write(fd, chunk.data(), chunk.size()) > 0) {
    }
    ::close(fd);
  });
  expect_refused([&] { (void)read_input_file(fifo.string(), "api", 1 << 20); },
                 fifo.string() + ": holds more than the 1048576 bytes");
  writer.join();
}

TEST(OutsideInput, NulBytesAndFoldersAreRefusedAndMissingFilesAreFileErrors) {
  const ScratchDir dir;
  write_file(dir.path() / "nul.json", std::string("{\n\"a\": \0}", 9));
  expect_refused([&] { (void)read_input_file((dir.path() / "nul.json").string(), "api"); },
                 "nul.json: line 2: a NUL byte at byte 7");
  expect_refused([&] { (void)read_input_file(dir.path().string(), "api"); }, "is a folder, not a file");
  try {
    (void)read_input_file((dir.path() / "missing").string(), "api");
    FAIL() << "read a missing file";
  } catch (const FileError& e) {
    EXPECT_EQ(e.status(), ENOENT);
    EXPECT_EQ(std::string(e.what()).find("invalid argument"), std::string::npos) << e.what();
  }
}

TEST(ReplacingAFile, FollowsALinkAndKeepsIt) {
  const ScratchDir dir;
  write_file(dir.path() / "target.json", "old");
  fs::create_symlink("target.json", dir.path() / "link.json");
  write_text_file((dir.path() / "link.json").string(), "new", "api");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link.json"));
  EXPECT_EQ(read_file(dir.path() / "target.json"), "new");
}

TEST(ReplacingAFile, RefusesAReadOnlyFileAndWritesADeviceInPlace) {
  const ScratchDir dir;
  const fs::path locked = dir.path() / "locked.json";
  write_file(locked, "mine");
  fs::permissions(locked, fs::perms(0444));
  try {
    write_text_file(locked.string(), "new", "api");
    FAIL() << "replaced a read-only file";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("it is read-only (mode 0444)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(locked), "mine");
  write_text_file("/dev/null", "gone", "api");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(ReplacingAFile, AFullDiskIsAFileError) {
  // /dev/full, written in place as a device, fails as a full disk does: ENOSPC.
  const int full = ::open("/dev/full", O_WRONLY);
  if (full < 0) GTEST_SKIP() << "no /dev/full";
  ::close(full);
  try {
    write_text_file("/dev/full", std::string(1 << 16, 'x'), "api");
    FAIL() << "wrote to /dev/full";
  } catch (const FileError& e) {
    EXPECT_EQ(e.status(), ENOSPC);
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("invalid argument"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cudakit::detail
