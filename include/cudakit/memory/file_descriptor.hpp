#pragma once
// @brief FileDescriptor: owns one POSIX file descriptor and closes it on destruction. The expandable
// kind of IPC memory travels as one descriptor per physical chunk (memory/ipc/ipc_memory_handle.hpp).

#include <utility>

namespace cudakit::memory {

// A move-only owner of one file descriptor.
class FileDescriptor {
 public:
  // Owns none.
  FileDescriptor() noexcept = default;
  // Takes ownership of `fd` (-1: none).
  // @param fd an open descriptor, or -1.
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  // Closes the descriptor it owns, if any.
  ~FileDescriptor() { reset(); }
  // Takes over `other`'s descriptor; `other` owns none afterwards.
  // @param other the owner to move from.
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  // Closes this descriptor, then takes over `other`'s; `other` owns none afterwards.
  // @param other the owner to move from.
  // @return this owner.
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  // Not copyable: a descriptor is closed once.
  FileDescriptor(const FileDescriptor&) = delete;
  // Not copyable: a descriptor is closed once.
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  // -1 when it owns none (default-constructed, moved from, released or reset).
  // @return the descriptor, still owned.
  [[nodiscard]] int get() const noexcept { return fd_; }
  // @return whether it owns a descriptor.
  [[nodiscard]] explicit operator bool() const noexcept { return fd_ >= 0; }
  // Gives the descriptor up without closing it.
  // @return the descriptor (-1 when none), now the caller's to close.
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
  // Closes the descriptor it owns, if any (errors of close() are ignored).
  void reset() noexcept;

 private:
  int fd_ = -1;
};

}  // namespace cudakit::memory
