// The `cudakit` tool against hostile input and faults, as one table: each row is a command, the
// files it is given, the exit code it must end with (2: the command line; 1: the run failed), a
// fragment its message must hold (and ones it must not: source lines, "GPU -1", a full disk called
// an invalid argument), the files that must and must not exist afterwards, and the files that must
// be left as they were. Every row also checks that no temporary file (*.partial, *.tmp.*) is left
// and that stderr stays short (a message quotes at most ~200 bytes of the input). Signals during
// a write are the table's last column: the command is stopped while its temporary exists.
// See notes/hostile-input.md for the rules these rows hold the tool to.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/cudakit_cli.hpp"
#include "support/gzip.hpp"
#include "support/paths.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_files.hpp"

namespace {

namespace fs = std::filesystem;
using cudakit::testing::read_file;
using cudakit::testing::ScratchDir;
using cudakit::testing::write_file;

constexpr int kUsage = 2;
constexpr int kFailure = 1;
constexpr int kSuccess = 0;

std::string fixture(const std::string& area, const std::string& name) {
  return (fs::path(cudakit::testing::test_data_dir()) / area / name).string();
}

std::string nested(std::size_t depth, const std::string& inner = "0") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

// The memory fixture with `extra` as one more key (a key memviz does not check).
std::string snapshot_with(const std::string& extra) {
  std::string text = read_file(fixture("memory", "snapshot_small.json"));
  text.erase(text.find_last_of('}'));
  return text + ", \"hostile\": " + extra + "}";
}

std::string trace_with_args(const std::string& extra) {
  return R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": 2, "args": {"graph node id": 5, "x": )" +
         extra + "}}]}";
}

using cudakit::testing::Gzip;
using cudakit::testing::gzip;

std::string two_stream_trace() {
  std::string text = "op,id,size,stream\n";
  for (int i = 0; i < 64; ++i) text += "a," + std::to_string(i) + "," + std::to_string(4096 * (i + 1)) + ",s" + std::to_string(i % 2) + "\n";
  for (int i = 0; i < 64; ++i) text += "f," + std::to_string(i) + ",0,s" + std::to_string(i % 2) + "\n";
  return text;
}

struct Case {
  std::string name;
  std::vector<std::string> args;
  // Files made in the scratch folder before the run: name -> content.
  std::map<std::string, std::string> files;
  int status = kFailure;
  std::string message;                  // on stderr
  std::vector<std::string> never = {};  // never on stderr
  std::vector<std::string> exist = {};
  std::vector<std::string> absent = {};
  std::string stdout_has = {};
  // Faults and surroundings.
  std::vector<std::string> env = {};    // NAME=VALUE
  std::string stdout_to = {};           // a path for standard output (/dev/full)
  rlim_t file_size_limit = RLIM_INFINITY;
  rlim_t address_space_limit = RLIM_INFINITY;
  bool unprivileged = false;            // run as nobody when the test runs as root
  std::function<void(const fs::path&)> setup = {};
};

struct Outcome {
  int status = -1;
  int signal = 0;
  std::string out;
  std::string err;
};

// Starts `cudakit ARGS` in `dir` as the row says; stdout and stderr go to files in `io`.
pid_t start(const Case& c, const fs::path& dir, const fs::path& io) {
  const std::string program = cudakit::testing::cudakit_cli_path().string();
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (const std::string& e : c.env) env_strings.push_back(e);
  const pid_t pid = fork();
  if (pid != 0) return pid;
  // The child: only async-signal-safe work would be strictly right, but this process has one thread.
  if (::chdir(dir.c_str()) != 0) _exit(127);
  const std::string out = c.stdout_to.empty() ? (io / "out").string() : c.stdout_to;
  const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err_fd = ::open((io / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int in_fd = ::open("/dev/null", O_RDONLY);
  if (out_fd < 0 || err_fd < 0 || in_fd < 0) _exit(127);
  ::dup2(in_fd, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  if (c.file_size_limit != RLIM_INFINITY) {
    const rlimit limit{c.file_size_limit, c.file_size_limit};
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  if (c.address_space_limit != RLIM_INFINITY) {
    const rlimit limit{c.address_space_limit, c.address_space_limit};
    ::setrlimit(RLIMIT_AS, &limit);
  }
  if (c.unprivileged && ::geteuid() == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(127);
  }
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (const std::string& a : c.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  ::execve(program.c_str(), argv.data(), envp.data());
  _exit(127);
}

// Waits for `pid` at most `seconds`; a command that takes longer hangs, and is killed.
Outcome finish(pid_t pid, const fs::path& io, int seconds = 60) {
  Outcome o;
  int wait_status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (::waitpid(pid, &wait_status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &wait_status, 0);
      ADD_FAILURE() << "the command hung (killed after " << seconds << " s)";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(wait_status)) o.status = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) o.signal = WTERMSIG(wait_status);
  std::error_code ignored;
  if (fs::exists(io / "out", ignored)) o.out = read_file(io / "out");
  o.err = read_file(io / "err");
  return o;
}

// The temporaries the tool's writers make beside an output.
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".partial") || name.find(".tmp.") != std::string::npos) found.push_back(name);
  }
  return found;
}

std::string command_line(const std::vector<std::string>& args) {
  std::string text = "cudakit";
  for (const std::string& a : args) text += " " + a.substr(0, 60);
  return text;
}

class CudakitHostile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(cudakit::testing::cudakit_cli_path()))
      GTEST_SKIP() << cudakit::testing::cudakit_cli_path() << " is not built";
  }

  void run_row(const Case& c) {
    SCOPED_TRACE(c.name + ": " + command_line(c.args));
    const ScratchDir scratch;
    const fs::path dir = scratch.path() / "work";
    const fs::path io = scratch.path() / "io";
    fs::create_directories(dir);
    fs::create_directories(io);
    // `nobody` must be able to enter the folders (the files' own modes then decide).
    fs::permissions(scratch.path(), fs::perms::all);
    fs::permissions(dir, fs::perms::all);
    fs::permissions(io, fs::perms::all);
    for (const auto& [name, content] : c.files) write_file(dir / name, content);
    if (c.setup) c.setup(dir);
    // Every file there before the run, by content (links by their target).
    std::map<std::string, std::string> before;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_symlink()) before[entry.path().filename()] = "-> " + fs::read_symlink(entry.path()).string();
      else if (entry.is_regular_file()) before[entry.path().filename()] = read_file(entry.path());
    }
    const Outcome o = finish(start(c, dir, io), io);
    EXPECT_EQ(o.signal, 0) << "killed by signal " << o.signal << "; stderr:\n" << o.err;
    EXPECT_EQ(o.status, c.status) << "stderr:\n" << o.err;
    if (!c.message.empty()) EXPECT_NE(o.err.find(c.message), std::string::npos) << "stderr:\n" << o.err;
    for (const std::string& fragment : c.never) EXPECT_EQ(o.err.find(fragment), std::string::npos) << "stderr:\n" << o.err;
    for (const std::string& fragment : {std::string(".cpp:"), std::string(".hpp:")})
      EXPECT_EQ(o.err.find(fragment), std::string::npos) << "a source location in:\n" << o.err;
    EXPECT_LT(o.err.size(), 2000u) << "stderr is " << o.err.size() << " bytes; it starts:\n" << o.err.substr(0, 400);
    if (!c.stdout_has.empty()) EXPECT_NE(o.out.find(c.stdout_has), std::string::npos) << o.out.substr(0, 400);
    for (const std::string& name : c.exist) EXPECT_TRUE(fs::exists(dir / name)) << name;
    for (const std::string& name : c.absent) EXPECT_FALSE(fs::exists(dir / name)) << name;
    EXPECT_EQ(temporaries(scratch.path()), std::vector<std::string>());
    // Folders a row made read-only become removable again.
    for (const auto& entry : fs::recursive_directory_iterator(scratch.path())) {
      if (entry.is_directory() && !entry.is_symlink()) fs::permissions(entry.path(), fs::perms::owner_all, fs::perm_options::add);
    }
    // What was there is as it was, unless the command was asked to write it.
    for (const auto& [name, content] : before) {
      if (std::find(c.exist.begin(), c.exist.end(), name) != c.exist.end() && c.status == kSuccess) continue;
      const fs::path path = dir / name;
      if (content.starts_with("-> ")) {
        EXPECT_TRUE(fs::is_symlink(path)) << name << " is no longer a link";
      } else {
        EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path))) << name;
        if (fs::is_regular_file(fs::symlink_status(path))) EXPECT_EQ(read_file(path), content) << name << " changed";
      }
    }
  }
};

const std::string kReplay = "op,id,size,stream\na,1,1024,s0\na,2,4096,s1\nf,1,0,s0\nf,2,0,s1\n";

std::vector<Case> rows() {
  const std::string snapshot = read_file(fixture("memory", "snapshot_small.json"));
  const std::string trace = read_file(fixture("profiler", "replay_trace.json"));
  const std::string annotations = read_file(fixture("profiler", "replay_annotations.json"));
  const std::string gemm_results =
      "Validator,PT_VERSION,2.5.0\nGemmTunableOp_float_NN,nn_32_32_32_ld_32_32_32,Default,0.01\n";
  std::vector<Case> r;
  // --- nesting: refused before parsing, so neither the parser nor the writer recurses deep.
  r.push_back({.name = "trace merge: a trace nesting 100,000 deep in args",
               .args = {"trace", "merge", "deep.json", "ann.json", "-o", "o.json"},
               .files = {{"deep.json", trace_with_args(nested(100000))}, {"ann.json", annotations}},
               .message = "deep.json:1: JSON nests deeper than 256 levels",
               .absent = {"o.json"}});
  r.push_back({.name = "trace merge: annotations nesting deep",
               .args = {"trace", "merge", "t.json", "deep.json", "-o", "o.json"},
               .files = {{"t.json", trace}, {"deep.json", "{\"5\": [{\"a\": " + nested(5000) + "}]}"}},
               .message = "deep.json:1: JSON nests deeper than 256 levels",
               .absent = {"o.json"}});
  r.push_back({.name = "trace merge: nesting within the limit is merged",
               .args = {"trace", "merge", "t.json", "ann.json", "-o", "o.json"},
               .files = {{"t.json", trace_with_args(nested(200))}, {"ann.json", "{\"5\": [{\"name\": \"mlp\"}]}"}},
               .status = kSuccess, .exist = {"o.json"}});
  r.push_back({.name = "memviz: a snapshot key nesting 100,000 deep",
               .args = {"memviz", "deep.json", "-o", "o.html"},
               .files = {{"deep.json", snapshot_with(nested(100000))}},
               .message = "JSON nests deeper than 256 levels", .absent = {"o.html"}});
  r.push_back({.name = "memviz: brackets inside strings are no nesting",
               .args = {"memviz", "s.json", "-o", "o.html"},
               .files = {{"s.json", snapshot_with("\"" + std::string(100000, '[') + "\"")}},
               .status = kSuccess, .exist = {"o.html"}});
  // --- endless, huge and binary input.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"memviz", "/dev/zero", "-o", "o.html"},
        std::vector<std::string>{"trace", "merge", "/dev/zero", "ann.json", "-o", "o.html"},
        std::vector<std::string>{"trace", "merge", "t.json", "/dev/zero", "-o", "o.html"},
        std::vector<std::string>{"tune", "/dev/zero", "-o", "o.html"}}) {
    r.push_back({.name = args[0] + ": /dev/zero", .args = args,
                 .files = {{"ann.json", annotations}, {"t.json", trace}},
                 .message = "/dev/zero: line 1: a NUL byte at byte 0", .absent = {"o.html"}});
  }
  r.push_back({.name = "alloc-replay: /dev/zero",
               .args = {"alloc-replay", "/dev/zero", "--backend", "host"},
               .message = "/dev/zero:1: the line is longer than 4096 bytes"});
  r.push_back({.name = "memviz: an input over the size limit",
               .args = {"memviz", "s.json", "-o", "o.html"}, .files = {{"s.json", snapshot}},
               .message = "s.json: holds " + std::to_string(snapshot.size()) + " bytes, more than the 1000",
               .absent = {"o.html"}, .env = {"CUDAKIT_INPUT_MAX_BYTES=1000"}});
  r.push_back({.name = "alloc-replay: a 300 KB line is quoted in 200 bytes",
               .args = {"alloc-replay", "t.csv", "--backend", "host"},
               .files = {{"t.csv", "a,1,1024," + std::string(300000, 's') + "\n"}},
               .message = "t.csv:1: the line is longer than 4096 bytes"});
  r.push_back({.name = "memviz: a 300 KB string that is not JSON is quoted briefly",
               .args = {"memviz", "s.json", "-o", "o.html"},
               .files = {{"s.json", "{\"segments\": \"" + std::string(300000, 'x') + "\\q\"}"}},
               .message = "s.json: ", .absent = {"o.html"}});
  r.push_back({.name = "alloc-replay: a NUL byte in a line is escaped, not a cut message",
               .args = {"alloc-replay", "t.csv", "--backend", "host"},
               .files = {{"t.csv", std::string("op,id,size,stream\na,1,10\0" "24,s0\n", 30)}},
               .message = "t.csv:2: the line holds a NUL byte (not a text trace) (line: 'a,1,10\\x0024,s0')"});
  r.push_back({.name = "memviz: a NUL byte in JSON", .args = {"memviz", "s.json", "-o", "o.html"},
               .files = {{"s.json", std::string("{\"a\": \"\0\"}", 10)}},
               .message = "s.json: line 1: a NUL byte at byte 7", .absent = {"o.html"}});
  // --- compressed input checked to its end.
  r.push_back({.name = "alloc-replay: a gzip file of its header alone",
               .args = {"alloc-replay", "t.csv.gz", "--backend", "host"},
               .files = {{"t.csv.gz", gzip(two_stream_trace(), Gzip::header_only)}},
               .message = "t.csv.gz: the compressed data ends early (a truncated gzip file"});
  r.push_back({.name = "alloc-replay: a gzip file cut after a flush",
               .args = {"alloc-replay", "t.csv.gz", "--backend", "host"},
               .files = {{"t.csv.gz", gzip(two_stream_trace(), Gzip::cut_after_flush)}},
               .message = "t.csv.gz: the compressed data ends early (a truncated gzip file",
               .never = {"expected 4"}});
  r.push_back({.name = "alloc-replay: bytes appended to a gzip file",
               .args = {"alloc-replay", "t.csv.gz", "--backend", "host"},
               .files = {{"t.csv.gz", gzip(two_stream_trace(), Gzip::whole) + "appended"}},
               .message = "t.csv.gz: 8+ bytes follow the compressed data"});
  r.push_back({.name = "alloc-replay: a whole gzip file replays",
               .args = {"alloc-replay", "t.csv.gz", "--backend", "host"},
               .files = {{"t.csv.gz", gzip(two_stream_trace(), Gzip::whole)}},
               .status = kSuccess, .stdout_has = "128 ops, 2 stream(s)"});
  // --- exact field counts, from the header.
  r.push_back({.name = "alloc-replay: a fifth field without a header naming it",
               .args = {"alloc-replay", "t.csv", "--backend", "host"},
               .files = {{"t.csv", "a,1,1024,s0,7\nf,1,0,s0,7\n"}},
               .message = "t.csv:1: expected 4 comma-separated fields (op,id,size,stream), found 5"});
  r.push_back({.name = "alloc-replay: the thread column",
               .args = {"alloc-replay", "t.csv", "--backend", "host"},
               .files = {{"t.csv", "op,id,size,stream,thread\na,1,1024,s0,17\na,2,64,s1,18\nf,1,0,s0,17\nf,2,0,s1,18\n"}},
               .status = kSuccess, .stdout_has = "4 ops, 2 stream(s)"});
  r.push_back({.name = "alloc-replay: four fields under a five-column header",
               .args = {"alloc-replay", "t.csv", "--backend", "host"},
               .files = {{"t.csv", "op,id,size,stream,thread\na,1,1024,s0\n"}},
               .message = "t.csv:2: expected 5 comma-separated fields (op,id,size,stream,thread), found 4"});
  r.push_back({.name = "alloc-replay: an unknown header",
               .args = {"alloc-replay", "t.csv", "--backend", "host"},
               .files = {{"t.csv", "op,id,bytes,stream\na,1,1024,s0\n"}},
               .message = "t.csv:1: a header names the columns op,id,size,stream or op,id,size,stream,thread"});
  r.push_back({.name = "alloc-replay: an empty trace", .args = {"alloc-replay", "t.csv", "--backend", "host"},
               .files = {{"t.csv", ""}}, .message = "t.csv holds no allocation or free", .never = {"ns/op"}});
  r.push_back({.name = "alloc-replay: a header alone", .args = {"alloc-replay", "t.csv", "--backend", "host"},
               .files = {{"t.csv", "op,id,size,stream\n"}}, .message = "t.csv holds no allocation or free"});
  // --- the simulated memory's limits.
  r.push_back({.name = "alloc-replay: the most --host-capacity-gib works",
               .args = {"alloc-replay", "t.csv", "--backend", "host", "--host-capacity-gib", "16384"},
               .files = {{"t.csv", two_stream_trace()}}, .status = kSuccess, .stdout_has = "128 ops"});
  r.push_back({.name = "alloc-replay: above the most --host-capacity-gib",
               .args = {"alloc-replay", "t.csv", "--backend", "host", "--host-capacity-gib", "1048576"},
               .files = {{"t.csv", kReplay}}, .status = kUsage,
               .message = "--host-capacity-gib takes a size in GiB from 0.01 to 16384, not '1048576'"});
  r.push_back({.name = "alloc-replay: a request larger than the simulated memory",
               .args = {"alloc-replay", "t.csv", "--backend", "host", "--host-capacity-gib", "1"},
               .files = {{"t.csv", "a,1,64,s0\na,2,1000000000000,s0\n"}},
               .message = "t.csv:2: allocating 1000000000000 bytes (931 GiB) does not fit in the simulated "
                          "device memory of 1 GiB (--host-capacity-gib)",
               .never = {"GPU -1", "allocator destroyed", "live allocation"}});
  r.push_back({.name = "alloc-replay: address space refused (ulimit -v)",
               .args = {"alloc-replay", "t.csv", "--backend", "host"},
               .files = {{"t.csv", "a,1,8589934592,s0\nf,1,0,s0\n"}},
               .message = "t.csv:1: allocating 8589934592 bytes (8 GiB) failed: the system refused address space",
               .never = {"GPU -1", "is free"},
               .address_space_limit = rlim_t{4} << 30});
  r.push_back({.name = "alloc-replay: --conf backend: conflicts with the replay",
               .args = {"alloc-replay", "t.csv", "--backend", "host", "--conf", "backend:cudaMallocAsync"},
               .files = {{"t.csv", kReplay}}, .status = kUsage,
               .message = "--conf 'backend:cudaMallocAsync' selects another allocator backend"});
  // --- outputs: never replace what is no regular file; -o - is standard output.
  r.push_back({.name = "memviz -o /dev/stdout is refused", .args = {"memviz", "s.json", "-o", "/dev/stdout"},
               .files = {{"s.json", snapshot}}, .status = kUsage,
               .message = "'/dev/stdout' is a symbolic link"});
  r.push_back({.name = "memviz -o LINK is refused and the link kept",
               .args = {"memviz", "s.json", "-o", "link.html"}, .files = {{"s.json", snapshot}, {"target.html", "mine"}},
               .status = kUsage, .message = "or write to standard output with -o -",
               .setup = [](const fs::path& dir) { fs::create_symlink("target.html", dir / "link.html"); }});
  r.push_back({.name = "memviz -o /dev/null (a device) is refused", .args = {"memviz", "s.json", "-o", "/dev/null"},
               .files = {{"s.json", snapshot}}, .status = kUsage, .message = "'/dev/null' is a character device"});
  r.push_back({.name = "memviz -o READ-ONLY is refused and the file kept",
               .args = {"memviz", "s.json", "-o", "ro.html"}, .files = {{"s.json", snapshot}, {"ro.html", "mine"}},
               .status = kUsage, .message = "'ro.html' is read-only (mode 0444)",
               .setup = [](const fs::path& dir) { fs::permissions(dir / "ro.html", fs::perms(0444)); }});
  r.push_back({.name = "trace merge -o FIFO is refused",
               .args = {"trace", "merge", "t.json", "a.json", "-o", "fifo"},
               .files = {{"t.json", trace}, {"a.json", annotations}}, .status = kUsage, .message = "'fifo' is a pipe",
               .setup = [](const fs::path& dir) { ::mkfifo((dir / "fifo").c_str(), 0644); }});
  r.push_back({.name = "memviz -o - writes standard output", .args = {"memviz", "s.json", "-o", "-"},
               .files = {{"s.json", snapshot}}, .status = kSuccess, .absent = {"-"}, .stdout_has = "<!DOCTYPE html>"});
  r.push_back({.name = "trace merge -o - writes standard output", .args = {"trace", "merge", "t.json", "a.json", "-o", "-"},
               .files = {{"t.json", trace}, {"a.json", annotations}}, .status = kSuccess, .absent = {"-"},
               .stdout_has = "traceEvents"});
  r.push_back({.name = "memviz: a full disk (file size limit) is a write error",
               .args = {"memviz", "s.json", "-o", "o.html"}, .files = {{"s.json", snapshot}, {"o.html", "earlier"}},
               .message = "cannot write 'o.html': File too large", .never = {"invalid argument"},
               .file_size_limit = 4096});
  // --- standard output that cannot be written.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"info"}, std::vector<std::string>{"rng", "--device", "cpu", "--n", "1000"},
        std::vector<std::string>{"alloc-replay", "t.csv", "--backend", "host"},
        std::vector<std::string>{"jit", "cache", "info"}, std::vector<std::string>{"memviz", "s.json", "-o", "-"}}) {
    r.push_back({.name = args[0] + " > /dev/full", .args = args, .files = {{"t.csv", kReplay}, {"s.json", snapshot}},
                 .message = "No space left on device", .env = {"CUDAKIT_KERNEL_CACHE_PATH=cache"},
                 .stdout_to = "/dev/full"});
  }
  r.push_back({.name = "rng > a file over its size limit", .args = {"rng", "--device", "cpu", "--n", "100000"},
               .message = "cannot write to standard output: File too large", .stdout_to = "big.txt",
               .file_size_limit = 65536});
  // --- the kernel cache.
  r.push_back({.name = "jit cache clear on a folder it cannot write", .args = {"jit", "cache", "clear"},
               .message = "cannot remove", .exist = {"cache/0123456789abcdef.cubin"},
               .env = {"CUDAKIT_KERNEL_CACHE_PATH=cache"}, .unprivileged = true,
               .setup = [](const fs::path& dir) {
                 fs::create_directories(dir / "cache");
                 write_file(dir / "cache" / "0123456789abcdef.cubin", "entry");
                 fs::permissions(dir / "cache", fs::perms(0555));
               }});
  for (const char* sub : {"info", "clear"}) {
    r.push_back({.name = std::string("jit cache ") + sub + " with CUDAKIT_KERNEL_CACHE_PATH naming a file",
                 .args = {"jit", "cache", sub}, .files = {{"afile", "the user's"}},
                 .message = "the kernel cache's path 'afile'", .env = {"CUDAKIT_KERNEL_CACHE_PATH=afile"}});
  }
  // --- messages.
  r.push_back({.name = "a CUDAKIT_LOG_LEVEL that is no level is reported",
               .args = {"rng", "--device", "cpu", "--n", "1"}, .status = kSuccess,
               .message = "CUDAKIT_LOG_LEVEL='loud' is not one of debug, info, warning, error, off",
               .env = {"CUDAKIT_LOG_LEVEL=loud"}});
  r.push_back({.name = "tune: a results file where an untuned one is expected",
               .args = {"tune", "r.csv", "-o", "o.csv"}, .files = {{"r.csv", gemm_results}},
               .message = "this is a results file (CUDAKIT_TUNABLEOP_FILENAME), not an untuned file",
               .absent = {"o.csv"}});
  r.push_back({.name = "tune: bad keys are told without source locations",
               .args = {"tune", "u.csv", "-o", "o.csv"}, .files = {{"u.csv", "GemmTunableOp_float_NN,nn_x\n"}},
               .message = "u.csv names no GEMM to tune", .absent = {"o.csv"}});
  // --- usage errors exit 2 in every command.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"memviz", "--bogus"}, std::vector<std::string>{"trace", "merge", "--bogus"},
        std::vector<std::string>{"alloc-replay", "--bogus"}, std::vector<std::string>{"jit", "cache", "--bogus"},
        std::vector<std::string>{"rng", "--bogus"}, std::vector<std::string>{"tune", "--bogus"},
        std::vector<std::string>{"top", "--bogus"}, std::vector<std::string>{"demo", "--bogus"},
        std::vector<std::string>{"info", "--bogus"}, std::vector<std::string>{"jit"},
        std::vector<std::string>{"tune", "u.csv"}}) {
    r.push_back({.name = "usage: " + command_line(args), .args = args, .files = {{"u.csv", "x"}}, .status = kUsage,
                 .message = "Run 'cudakit"});
  }
  return r;
}

TEST_F(CudakitHostile, EveryRowOfTheTable) {
  for (const Case& c : rows()) run_row(c);
}

// SIGINT and SIGTERM while a command writes: the temporary beside the output goes, the earlier
// output stays, and the signal ends the command as it would have. The input is a pipe that the
// test holds open, so the command waits on it with its temporary made.
TEST_F(CudakitHostile, SignalsWhileWritingRemoveTheTemporary) {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"memviz", "in", "-o", "o.html"},
          std::vector<std::string>{"trace", "merge", "in", "a.json", "-o", "o.html"}}) {
      SCOPED_TRACE(command_line(args) + " and signal " + std::to_string(signal_number));
      const ScratchDir scratch;
      const fs::path dir = scratch.path() / "work";
      const fs::path io = scratch.path() / "io";
      fs::create_directories(dir);
      fs::create_directories(io);
      write_file(dir / "o.html", "earlier output");
      write_file(dir / "a.json", read_file(fixture("profiler", "replay_annotations.json")));
      ASSERT_EQ(::mkfifo((dir / "in").c_str(), 0644), 0);
      const int writer = ::open((dir / "in").c_str(), O_RDWR);  // a writer that never writes
      ASSERT_GE(writer, 0);
      Case c;
      c.args = args;
      const pid_t pid = start(c, dir, io);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (temporaries(dir).empty() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      EXPECT_EQ(temporaries(dir).size(), 1u) << "the command made no temporary";
      ::kill(pid, signal_number);
      const Outcome o = finish(pid, io);
      ::close(writer);
      EXPECT_EQ(o.signal, signal_number) << "stderr:\n" << o.err;
      EXPECT_EQ(temporaries(dir), std::vector<std::string>());
      EXPECT_EQ(read_file(dir / "o.html"), "earlier output");
    }
  }
}

}  // namespace
