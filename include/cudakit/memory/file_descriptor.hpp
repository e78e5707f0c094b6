#pragma once
// @brief FileDescriptor: owns one POSIX file descriptor and closes it on destruction. The expandable
// kind of IPC memory travels as one descriptor per physical chunk (memory/ipc/ipc_memory_handle.hpp).

#include <utility>

namespace cudakit::memory {

class FileDescriptor {
 public:
  FileDescriptor() noexcept = default;
  // Takes ownership of `fd` (-1: none).
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  ~FileDescriptor() { reset(); }
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  // -1 when it owns none (default-constructed, moved from, released or reset).
  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] explicit operator bool() const noexcept { return fd_ >= 0; }
  // Gives the descriptor up without closing it.
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
  // Closes the descriptor it owns, if any.
  void reset() noexcept;

 private:
  int fd_ = -1;
};

}  // namespace cudakit::memory
