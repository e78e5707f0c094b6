#include "cudakit/nccl/store/file_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/nccl/nccl_error.hpp"
#include "cudakit/nccl/store/detail/store_message.hpp"
#include "nccl/store/detail/socket.hpp"

namespace cudakit::nccl {

using cudakit::detail::concat;
namespace fs = std::filesystem;


FileStore::FileStore(fs::path directory, int rank, std::chrono::milliseconds timeout)
    : Store(rank, timeout), directory_(std::move(directory)) {
  std::error_code error;
  fs::create_directories(directory_, error);
  if (error)
    throw NcclError(0, "FileStore", rank, "store",
                    concat("cannot create the store's directory ", directory_, ": ", error.message()));
}

std::string FileStore::address() const { return concat("file://", directory_.string()); }

fs::path FileStore::path_of(const std::string& key) const {
  // Keys are hex-encoded: any bytes make a valid file name.
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = "k";
  for (const unsigned char c : key) {
    name.push_back(kHex[c >> 4]);
    name.push_back(kHex[c & 15]);
  }
  return directory_ / name;
}

void FileStore::set(const std::string& key, const std::string& value) {
  // Written beside the key and renamed over it: readers see the old value or the new, whole.
  if (const std::string error = cudakit::detail::try_write_text_file_atomically(path_of(key).string(), value);
      !error.empty()) {
    throw NcclError(0, "FileStore", rank(), concat("store set '", key, "'"), concat(error, " (", address(), ")"));
  }
}

std::string FileStore::get(const std::string& key) {
  const std::string keys[] = {key};
  wait(keys, timeout());
  auto value = cudakit::detail::try_read_text_file(path_of(key).string());
  if (!value)
    throw NcclError(0, "FileStore", rank(), concat("store get '", key, "'"),
                    concat("the key's file vanished from ", address()));
  return *value;
}

std::int64_t FileStore::add(const std::string& key, std::int64_t delta) {
  const std::string what = concat("store add '", key, "'");
  const fs::path lock_path = concat(path_of(key).string(), ".lock");
  const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0)
    throw NcclError(0, "FileStore", rank(), what,
                    concat("cannot open ", lock_path, ": ", detail::errno_text(errno)));
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }  // closing releases the flock
  } unlock{lock};
  while (::flock(lock, LOCK_EX) != 0) {
    if (errno != EINTR)
      throw NcclError(0, "FileStore", rank(), what, concat("cannot lock ", lock_path, ": ", detail::errno_text(errno)));
  }
  const auto current = cudakit::detail::try_read_text_file(path_of(key).string());
  const std::int64_t next = (current ? detail::parse_store_number(*current, "the stored value") : 0) + delta;
  set(key, std::to_string(next));
  return next;
}

bool FileStore::check(std::span<const std::string> keys) {
  for (const std::string& k : keys)
    if (!fs::exists(path_of(k))) return false;
  return true;
}

void FileStore::wait(std::span<const std::string> keys, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  while (!check(keys)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string missing;
      for (const std::string& k : keys)
        if (!fs::exists(path_of(k))) missing += concat(missing.empty() ? "'" : ", '", k, "'");
      throw NcclError(0, "FileStore", rank(), "store wait",
                      concat("timed out after ", timeout.count(), " ms waiting for ", missing, " in ", address()));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

}  // namespace cudakit::nccl
