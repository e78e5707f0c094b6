// The snapshot viewer: the page is self-contained and carries the snapshot unchanged, malformed
// snapshots are refused naming the bad key, the CLI reports its errors, and (where Chromium is
// installed) the page's script really draws the timeline and the segment map.
#include "cudakit/memory/viewer/memviz.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cudakit/core/error.hpp"
#include "support/cudakit_cli.hpp"
#include "support/paths.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_files.hpp"

namespace {

namespace fs = std::filesystem;
using cudakit::memory::render_memviz_html;
using cudakit::testing::ScratchDir;
using cudakit::testing::read_file;
using cudakit::testing::write_file;
using nlohmann::json;

fs::path fixture_path(const std::string& name) {
  return fs::path(cudakit::testing::test_data_dir()) / "memory" / name;
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::size_t count_of(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The JSON text the page carries (between its data element's tags).
std::string embedded_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"memviz-data\">";
  const auto begin = html.find(open);
  if (begin == std::string::npos) return {};
  const auto start = begin + open.size();
  return html.substr(start, html.find("</script>", start) - start);
}

// Runs a shell command; returns its exit status (-1 when it did not exit normally).
int run_shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string shell_quoted(const fs::path& path) { return "'" + path.string() + "'"; }

const std::array<const char*, 2> kFixtures = {"snapshot_small.json", "snapshot_oom.json"};

// ---------------------------------------------------------------------------------------------
// The page

TEST(Memviz, PageIsOneSelfContainedFile) {
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    const std::string html = render_memviz_html(read_file(fixture_path(name)));
    const std::string lower = lowercase(html);
    EXPECT_EQ(lower.rfind("<!doctype html>", 0), 0u);
    EXPECT_NE(lower.find("</html>"), std::string::npos);
    // Nothing may be fetched: no URLs, stylesheets, external scripts, frames, images or fonts.
    for (const char* banned : {"http://", "https://", "<link", "<iframe", "<img", "<object",
                               "<embed", "@import", "@font-face", "//cdn", "src=", "href="}) {
      EXPECT_EQ(lower.find(banned), std::string::npos) << "found " << banned;
    }
    // CSS url() only for the page's own SVG patterns.
    EXPECT_FALSE(std::regex_search(lower, std::regex(R"(url\(\s*[^#\s])")));
    // Exactly the data element and the inline script.
    EXPECT_EQ(count_of(lower, "<script"), 2u);
    EXPECT_EQ(count_of(lower, "</script"), 2u);
    EXPECT_NE(html.find("<style>"), std::string::npos);
  }
}

TEST(Memviz, PageCarriesTheSnapshotUnchanged) {
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    const std::string input = read_file(fixture_path(name));
    const std::string html = render_memviz_html(input);
    const std::string data = embedded_data(html);
    ASSERT_FALSE(data.empty());
    EXPECT_EQ(json::parse(data), json::parse(input));
  }
  const std::string html = render_memviz_html(read_file(fixture_path("snapshot_small.json")));
  EXPECT_NE(html.find("src/model/attention.cpp"), std::string::npos);
  EXPECT_NE(html.find("\"active_pending_free\""), std::string::npos);
}

TEST(Memviz, ScriptEndTagsInTheDataCannotEndTheDataElement) {
  // A frame name that would close the data element and open a script if embedded verbatim.
  const json snapshot = {{"segments", json::array()},
                         {"device_traces",
                          {{{{"action", "alloc"},
                             {"addr", 4096},
                             {"size", 512},
                             {"stream", 0},
                             {"frames",
                              {{{"filename", "</SCRIPT><script>alert(1)</script><!--"},
                                {"line", 1},
                                {"name", "operator</script>"}}}}}}}}};
  const std::string html = render_memviz_html(snapshot.dump());
  const std::string lower = lowercase(html);
  EXPECT_EQ(count_of(lower, "</script"), 2u);
  EXPECT_EQ(count_of(lower, "<script"), 2u);
  EXPECT_EQ(html.find("<!--"), std::string::npos);
  EXPECT_EQ(json::parse(embedded_data(html)), snapshot);
}

TEST(Memviz, ToleratesMissingOptionalKeysAndUnknownOnes) {
  const std::vector<std::string> accepted = {
      R"({"segments": [], "device_traces": []})",
      R"({"segments": [], "device_traces": [[]]})",
      // Only the keys the drawing needs.
      R"({"device_traces": [], "segments": [{"address": 4096, "total_size": 1024}]})",
      // Blocks without addresses tile their segment (older torch snapshots).
      R"({"device_traces": [], "segments": [{"address": 4096, "total_size": 1024,
          "blocks": [{"size": 512, "state": "active_allocated"},
                     {"size": 512, "state": "inactive"}]}]})",
      // Events without stream, time or frames; the legacy "free" and a future action.
      R"({"segments": [], "device_traces": [[{"action": "alloc", "addr": 1, "size": 2},
                             {"action": "free", "addr": 1, "size": 2},
                             {"action": "some_future_action", "addr": 0, "size": 0}]]})",
      // Keys torch adds that the viewer ignores; negative stream ids (torch's int64 streams).
      R"({"segments": [{"address": 4096, "total_size": 512, "stream": -1, "history": [],
          "blocks": [{"size": 512, "state": "inactive", "history": []}]}],
         "device_traces": [[{"action": "snapshot", "addr": 0, "size": 0, "compile_context": "n/a",
                             "user_metadata": ""}]],
         "allocator_settings": {"expandable_segments": true}, "device_stats": {"num_ooms": 0},
         "external_annotations": []})",
      // torch's oom event: the free device memory in "device_free", no "addr".
      R"({"segments": [], "device_traces": [[{"action": "oom", "device_free": 1024, "size": 4096, "stream": 0,
                             "time_us": 17, "frames": []}]]})",
  };
  for (const auto& input : accepted) {
    SCOPED_TRACE(input);
    EXPECT_NO_THROW({ (void)render_memviz_html(input); });
  }
}

TEST(Memviz, RejectsMalformedSnapshotsNamingTheKey) {
  struct Case {
    const char* input;
    const char* expected;
  };
  const Case cases[] = {
      {"", "snapshot:1:1: not valid JSON"},
      {R"({"device_traces": [], "segments": [)", "snapshot:1:36: not valid JSON"},
      {"[]", "top level: expected an object"},
      // JSON that is no snapshot at all: refused, not drawn as an empty page.
      {R"({"traceEvents": 5})",
       "top level: missing key \"segments\": not a memory snapshot"},
      {R"({"traceEvents": []})", "it looks like a Chrome/Perfetto trace"},
      {R"({})", "top level: missing key \"segments\""},
      {R"({"segments": []})", "top level: missing key \"device_traces\""},
      {R"({"device_traces": [[]]})", "top level: missing key \"segments\""},
      {R"({"device_traces": [], "segments": {}})", "segments: expected an array, got an object"},
      {R"({"device_traces": [], "segments": [3]})", "segments[0]: expected an object, got number 3"},
      {R"({"device_traces": [], "segments": [{"total_size": 1}]})", "segments[0]: missing key \"address\""},
      {R"({"device_traces": [], "segments": [{"address": 0, "total_size": "big"}]})",
       "segments[0].total_size: expected a non-negative integer, got string \"big\""},
      {R"({"device_traces": [], "segments": [{"address": -4096, "total_size": 1}]})",
       "segments[0].address: expected a non-negative integer, got number -4096"},
      {R"({"device_traces": [], "segments": [{"address": 0, "total_size": 1, "segment_pool_id": [1]}]})",
       "segments[0].segment_pool_id: expected an array of two integers"},
      {R"({"device_traces": [], "segments": [{"address": 0, "total_size": 1, "is_expandable": "no"}]})",
       "segments[0].is_expandable: expected a boolean"},
      {R"({"device_traces": [], "segments": [{"address": 0, "total_size": 8,
          "blocks": [{"size": 4, "state": "inactive"}, {"size": 4.5, "state": "inactive"}]}]})",
       "segments[0].blocks[1].size: expected a non-negative integer, got number 4.5"},
      {R"({"device_traces": [], "segments": [{"address": 0, "total_size": 8,
          "blocks": [{"size": 8, "state": "freed"}]}]})",
       "segments[0].blocks[0].state: unknown block state \"freed\""},
      {R"({"device_traces": [], "segments": [{"address": 0, "total_size": 8, "blocks": [{"size": 8}]}]})",
       "segments[0].blocks[0]: missing key \"state\""},
      {R"({"device_traces": [], "segments": [{"address": 0, "total_size": 8,
          "blocks": [{"size": 8, "state": "inactive",
                      "frames": [{"name": "f", "line": "12"}]}]}]})",
       "segments[0].blocks[0].frames[0].line: expected an integer, got string \"12\""},
      {R"({"device_traces": [], "segments": [{"address": 0, "total_size": 8, "frames": {}}]})",
       "segments[0].frames: expected an array of frames, got an object"},
      {R"({"segments": [], "device_traces": {}})", "device_traces: expected an array"},
      {R"({"segments": [], "device_traces": [{}]})",
       "device_traces[0]: expected the device's array of trace events"},
      {R"({"segments": [], "device_traces": [[{"action": "alloc", "addr": 1, "size": 2}, {"addr": 1, "size": 2}]]})",
       "device_traces[0][1]: missing key \"action\""},
      {R"({"segments": [], "device_traces": [[], [{"action": "alloc", "addr": 1, "size": null}]]})",
       "device_traces[1][0].size: expected a non-negative integer, got null"},
      {R"({"segments": [], "device_traces": [[{"action": "oom", "device_free": -1, "size": 2}]]})",
       "device_traces[0][0].device_free: expected a non-negative integer, got number -1"},
      {R"({"segments": [], "device_traces": [[{"action": "alloc", "addr": 1, "size": 2, "time_us": "now"}]]})",
       "device_traces[0][0].time_us: expected a number"},
      {R"({"segments": [], "device_traces": [], "allocator_settings": []})", "allocator_settings: expected an object, got an array"},
      {R"({"segments": [], "device_traces": [], "device_stats": {"num_ooms": "1"}})",
       "device_stats[\"num_ooms\"]: expected a number, got string \"1\""},
      {R"({"segments": [], "device_traces": [], "cudakit_version": 1})", "cudakit_version: expected a string, got number 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    try {
      (void)render_memviz_html(c.input);
      ADD_FAILURE() << "accepted";
    } catch (const cudakit::InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos)
          << "message: " << e.what() << "\nexpected to contain: " << c.expected;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The command

class MemvizCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(cudakit::testing::cudakit_cli_path()))
      GTEST_SKIP() << cudakit::testing::cudakit_cli_path() << " is not built (build the cudakit_cli target)";
  }
  // Runs `cudakit memviz ARGS` in `dir`; returns the exit code, stderr in `errors`.
  int memviz(const fs::path& dir, std::vector<std::string> args, std::string& errors) {
    args.insert(args.begin(), "memviz");
    const cudakit::testing::CliRun run = cudakit::testing::run_cudakit(args, dir);
    errors = run.err;
    return run.status;
  }
};

TEST_F(MemvizCli, WritesThePageToTheNamedFileOrMemoryHtml) {
  ScratchDir dir;
  std::string errors;
  EXPECT_EQ(memviz(dir.path(), {fixture_path("snapshot_small.json"), "-o", "small.html"}, errors), 0)
      << errors;
  EXPECT_EQ(read_file(dir.path() / "small.html"),
            render_memviz_html(read_file(fixture_path("snapshot_small.json"))));
  EXPECT_EQ(memviz(dir.path(), {fixture_path("snapshot_oom.json")}, errors), 0) << errors;
  EXPECT_TRUE(fs::exists(dir.path() / "memory.html"));
}

// A path that cannot be read or written is a bad command line (2); a malformed snapshot fails the
// run (1). tests/tools/cli_errors_test.cpp has the tool's other errors.
TEST_F(MemvizCli, UnreadableOrMalformedInputFailsAndSaysWhy) {
  ScratchDir dir;
  std::string errors;
  EXPECT_EQ(memviz(dir.path(), {"missing.json"}, errors), 2);
  EXPECT_NE(errors.find("SNAPSHOT 'missing.json' cannot be read: No such file or directory"),
            std::string::npos)
      << errors;

  write_file(dir.path() / "bad.json", "{\"segments\": [");
  EXPECT_EQ(memviz(dir.path(), {"bad.json"}, errors), 1);
  EXPECT_NE(errors.find("bad.json"), std::string::npos) << errors;
  EXPECT_NE(errors.find("not valid JSON"), std::string::npos) << errors;

  write_file(dir.path() / "wrong.json",
             R"({"segments": [{"address": 0, "total_size": "x"}], "device_traces": []})");
  EXPECT_EQ(memviz(dir.path(), {"wrong.json", "-o", "out.html"}, errors), 1);
  EXPECT_NE(errors.find("segments[0].total_size"), std::string::npos) << errors;
  EXPECT_FALSE(fs::exists(dir.path() / "out.html"));

  EXPECT_EQ(memviz(dir.path(), {fixture_path("snapshot_small.json"), "-o", "no/such/dir/x.html"},
                   errors),
            2);
  EXPECT_NE(errors.find("--output 'no/such/dir/x.html' cannot be written"), std::string::npos)
      << errors;
}

// ---------------------------------------------------------------------------------------------
// In a browser

struct Drawn {
  const char* fixture;
  int bands;   // allocations drawn in the timeline
  int blocks;  // blocks drawn in the segment map
  int segments;
  int ooms;
};

// snapshot_small: 16 allocs in the trace, plus 2 allocations made before recording began (one
// freed in the trace, one still active at the end); 5 + 4 blocks in 2 segments.
// snapshot_oom: 4 allocs, 1 oom event; 4 blocks in 1 segment.
const Drawn kSmallDrawn{"snapshot_small.json", 18, 9, 2, 0};
const Drawn kOomDrawn{"snapshot_oom.json", 4, 4, 1, 1};

class MemvizChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
      if (fs::exists(candidate)) browser_ = candidate;
    }
    if (browser_.empty()) {
      GTEST_SKIP() << "chromium is not installed (Debian package 'chromium'); the page was not "
                      "checked in a browser";
    }
  }
  // Runs headless Chromium on `page` with `args`; stdout to `out`. Each run gets its own profile
  // so that parallel test processes do not contend for one.
  int browse(const fs::path& dir, const fs::path& page, const std::string& args,
             const fs::path& out) {
    const fs::path log = dir / "chromium.log";
    const int code = run_shell("timeout 120 " + shell_quoted(browser_) +
                               " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
                               "--no-first-run --user-data-dir=" +
                               shell_quoted(dir / "profile") + " " + args + " " +
                               shell_quoted("file://" + page.string()) + " >" + shell_quoted(out) +
                               " 2>" + shell_quoted(log));
    if (code != 0) ADD_FAILURE() << "chromium exited with " << code << ":\n" << read_file(log);
    return code;
  }
  void check_drawn(const Drawn& expected);
  fs::path browser_;
};

int body_attribute(const std::string& dom, const std::string& name) {
  std::smatch match;
  if (!std::regex_search(dom, match, std::regex("<body[^>]*\\s" + name + "=\"(-?\\d+)\"")))
    return -1;
  return std::stoi(match[1]);
}

std::uint32_t big_endian_u32(const std::string& bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i)
    value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

// Renders the fixture, lets Chromium run the page's script and checks what it drew, then takes a
// screenshot and checks it is a real 1400x1000 picture.
void MemvizChromium::check_drawn(const Drawn& expected) {
  ScratchDir dir;
  const fs::path page = dir.path() / "memory.html";
  write_file(page, render_memviz_html(read_file(fixture_path(expected.fixture))));

  const fs::path dom_file = dir.path() / "dom.html";
  ASSERT_EQ(browse(dir.path(), page, "--dump-dom", dom_file), 0);
  const std::string dom = read_file(dom_file);
  std::smatch body;
  ASSERT_TRUE(std::regex_search(dom, body, std::regex("<body[^>]*>"))) << dom.substr(0, 2000);
  ASSERT_NE(body.str().find("data-rendered=\"ok\""), std::string::npos) << body.str();
  EXPECT_EQ(body_attribute(dom, "data-timeline-bands"), expected.bands);
  EXPECT_EQ(body_attribute(dom, "data-timeline-summarized"), 0);
  EXPECT_EQ(body_attribute(dom, "data-segment-blocks"), expected.blocks);
  EXPECT_EQ(body_attribute(dom, "data-segments"), expected.segments);
  EXPECT_EQ(body_attribute(dom, "data-oom-markers"), expected.ooms);
  // The counts are backed by marks actually in the document (before the scripts, whose source
  // spells the same tags).
  const std::string drawn = dom.substr(0, dom.find("<script"));
  EXPECT_EQ(count_of(drawn, "<path class=\"band\""), static_cast<std::size_t>(expected.bands));
  EXPECT_EQ(count_of(drawn, "<rect class=\"block "), static_cast<std::size_t>(expected.blocks));
  EXPECT_EQ(count_of(drawn, "<g class=\"oom-marker\""), static_cast<std::size_t>(expected.ooms));
  EXPECT_NE(drawn.find("id=\"cards\"><div class=\"card"), std::string::npos) << "no summary cards";

  const fs::path png = dir.path() / "memory.png";
  ASSERT_EQ(browse(dir.path(), page,
                   "--hide-scrollbars --window-size=1400,1000 --screenshot=" + shell_quoted(png),
                   dir.path() / "screenshot.txt"),
            0);
  ASSERT_TRUE(fs::exists(png));
  const std::string bytes = read_file(png);
  ASSERT_GE(bytes.size(), 24u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(bytes.substr(12, 4), "IHDR");
  EXPECT_EQ(big_endian_u32(bytes, 16), 1400u);
  EXPECT_EQ(big_endian_u32(bytes, 20), 1000u);
  // A blank or error page compresses to a few KiB; the drawn page is tens of KiB.
  EXPECT_GT(bytes.size(), 30000u);
}

TEST_F(MemvizChromium, DrawsTheSmallSnapshot) { check_drawn(kSmallDrawn); }

TEST_F(MemvizChromium, DrawsTheOutOfMemorySnapshot) { check_drawn(kOomDrawn); }

}  // namespace
