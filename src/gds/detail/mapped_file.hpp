#pragma once
// MappedFile: a file's pages mapped copy-on-write into the process, so that host tensors of a
// file the page cache holds are those pages, as safetensors' own loader makes them (See Note
// [Host loads of cached files] in mapped_file.cpp).

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

namespace cudakit::gds::detail {

class MappedFile {
 public:
  // The whole file behind descriptor `fd` (a regular file of `size` bytes) mapped private and
  // writable (a write copies its page), when the page cache holds [begin, end) (256 pages spread
  // over it, its last one included, are asked); nullptr when not, or when the file cannot be
  // mapped (not a regular file, mmap refused).
  static std::shared_ptr<MappedFile> map_if_resident(int fd, std::uint64_t size, std::uint64_t begin,
                                                     std::uint64_t end);
  // Unmaps.
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // @return the address of the file's byte at `offset`.
  [[nodiscard]] std::byte* at(std::uint64_t offset) const noexcept { return base_ + offset; }

 private:
  MappedFile(std::byte* base, std::size_t length, dev_t device, ino_t inode) noexcept;
  std::byte* base_;
  std::size_t length_;
  dev_t device_;
  ino_t inode_;
};

// Whether `path` names a file some live MappedFile maps (false when it does not exist). A file
// truncated while mapped makes its former pages fault (SIGBUS) in whoever reads them.
[[nodiscard]] bool is_mapped(const std::filesystem::path& path);

}  // namespace cudakit::gds::detail
