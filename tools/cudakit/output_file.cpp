#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "cudakit/core/detail/concat.hpp"

// Note [Writing outputs]
// Every file the tool writes is written to a temporary file beside it, PATH.<pid>.partial (the
// process id keeps two commands writing one output apart), and renamed over PATH when complete.
// A rename replaces whatever PATH names, so it is done only onto a regular file its owner may
// write or onto a new path: a symbolic link (/dev/stdout is one), a device, a pipe or a read-only
// file is refused before any work, with a word on `-o -`, which writes to standard output. The
// temporary is created before the command reads its input, so a write that cannot happen fails
// first; it is removed by the destructor on every error and by a handler on SIGINT, SIGTERM and
// SIGHUP, which then lets the signal end the process as it would have. SIGXFSZ (a file-size limit,
// `ulimit -f`) is ignored so that such a write fails as a write error, like a full disk. Write
// errors are errors: the command exits 1 naming the file and the reason, and nothing is renamed.

namespace cudakit::cli {
namespace {

namespace fs = std::filesystem;
using cudakit::detail::concat;

// The temporaries alive now, for the signal handler, which may only read them: a slot holds a
// pointer to an OutputFile's temp_ string, which outlives its slot.
std::array<std::atomic<const char*>, 8> g_temporaries{};

void remove_temporaries_and_reraise(int signal_number) {
  for (auto& slot : g_temporaries) {
    if (const char* path = slot.load()) ::unlink(path);
  }
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  ::sigaction(signal_number, &action, nullptr);
  ::raise(signal_number);  // delivered when the handler returns, now with its default action
}

void install_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      ::sigaction(signal_number, nullptr, &old);
      if (old.sa_handler == SIG_IGN) continue;  // nohup, a background job: keep ignoring it
      struct sigaction action {};
      action.sa_handler = remove_temporaries_and_reraise;
      sigemptyset(&action.sa_mask);
      ::sigaction(signal_number, &action, nullptr);
    }
    ::signal(SIGXFSZ, SIG_IGN);
  });
}

int register_temporary(const char* path) {
  for (std::size_t i = 0; i < g_temporaries.size(); ++i) {
    const char* empty = nullptr;
    if (g_temporaries[i].compare_exchange_strong(empty, path)) return static_cast<int>(i);
  }
  throw std::runtime_error("too many output files at once");
}

std::string folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

[[noreturn]] void cannot_write(const std::string& path, int error) {
  throw std::runtime_error(concat("cannot write '", path, "': ", std::strerror(error),
                                  error == ENOSPC || error == EDQUOT || error == EFBIG
                                      ? " (the disk is full or the file is over its size limit)"
                                      : ""));
}

}  // namespace

std::string refuse_output(const std::string& path) {
  if (path == kStandardOutput) return {};
  if (path.empty()) return "takes a file to write, not ''";
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return concat("'", path, "' cannot be written: ", std::strerror(errno));
    const std::string folder = folder_of(path);
    if (::access(folder.c_str(), W_OK) != 0)
      return concat("'", path, "' cannot be written: folder '", folder, "': ", std::strerror(errno));
    return {};
  }
  if (S_ISDIR(st.st_mode)) return concat("'", path, "' is a folder, not a file");
  if (!S_ISREG(st.st_mode)) {
    return concat("'", path, "' is ", kind_of(st.st_mode),
                  "; cudakit writes a file beside it and renames it over it, which would replace "
                  "it, so it replaces only regular files: name a regular or new file, or write to "
                  "standard output with -o -");
  }
  // Root may write any file; a file its owner made read-only is still not to be replaced.
  if ((st.st_mode & S_IWUSR) == 0 || ::access(path.c_str(), W_OK) != 0) {
    return concat("'", path, "' is read-only (mode 0", std::oct, (st.st_mode & 07777),
                  "); cudakit does not replace it: make it writable or name another file");
  }
  const std::string folder = folder_of(path);
  if (::access(folder.c_str(), W_OK) != 0)
    return concat("'", path, "' cannot be replaced: folder '", folder, "': ", std::strerror(errno));
  return {};
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  if (is_standard_output()) return;
  if (std::string refused = refuse_output(path_); !refused.empty()) throw std::runtime_error(refused);
  install_signal_handlers();
  temp_ = concat(path_, ".", ::getpid(), ".partial");
  // The output keeps the permissions of the file it replaces.
  struct stat st {};
  const mode_t mode = ::stat(path_.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0666;
  slot_ = register_temporary(temp_.c_str());
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd_ < 0) {
    const int error = errno;
    g_temporaries[static_cast<std::size_t>(slot_)].store(nullptr);
    throw std::runtime_error(concat("cannot write '", path_, "': cannot create '", temp_, "': ",
                                    std::strerror(error)));
  }
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
  if (slot_ >= 0) g_temporaries[static_cast<std::size_t>(slot_)].store(nullptr);
}

void OutputFile::write(std::string_view text) {
  if (is_standard_output()) {
    std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!std::cout) cannot_write("standard output", errno);
    return;
  }
  while (!text.empty()) {
    const ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) cannot_write(path_, n < 0 ? errno : ENOSPC);
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void OutputFile::commit() {
  if (is_standard_output()) {
    errno = 0;
    if (!std::cout.flush() || std::fflush(stdout) != 0) cannot_write("standard output", errno ? errno : EIO);
    committed_ = true;
    return;
  }
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) cannot_write(path_, errno);
  // The target is checked again: it may have changed while the command ran.
  if (std::string refused = refuse_output(path_); !refused.empty()) throw std::runtime_error(refused);
  if (::rename(temp_.c_str(), path_.c_str()) != 0) cannot_write(path_, errno);
  committed_ = true;
}

}  // namespace cudakit::cli
