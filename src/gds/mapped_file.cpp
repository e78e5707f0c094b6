#include "gds/detail/mapped_file.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

namespace cudakit::gds::detail {
namespace {

// Note [Host loads of cached files]
// safetensors' loader maps the file and hands out tensors that are its page-cache pages: a host
// load of a file already in the page cache copies nothing, and a later read faults each page in
// without reading the disk. cudakit's engine copied every byte, two orders of magnitude slower on
// a warm file (notes/gds.md). A host load of a file whose data the page cache holds now maps it
// the same way, private and writable (a write copies its page and never reaches the file); one
// that is not resident is still read by the engine (O_DIRECT where it can), as faulting a cold
// file in page by page is slower than reading it in large parallel requests. Residency is asked of
// sampled pages, not all: mincore costs a page-cache lookup per page asked, which over a whole
// checkpoint took most of the load's time. The pages are not entered in the page tables at load
// (MADV_POPULATE_READ cost more than the faults it saved).
// The hazard of any mapping: a file truncated while mapped makes the lost pages fault (SIGBUS) on
// the next read. cudakit's own writes therefore never truncate a mapped file: save_file and
// save_safetensors replace it atomically (a new file renamed over it; the mapping keeps the old
// one), and GdsFile refuses O_TRUNC on it. Other programs are the user's to keep off it, as with
// safetensors.

constexpr std::uint64_t kSamplePages = 256;  // pages whose residency decides whether to map

// The mapped files by (device, inode), with how many mappings of each are alive.
struct Registry {
  std::mutex mutex;
  std::map<std::pair<dev_t, ino_t>, int> live;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: mappings may outlive static destruction
  return *r;
}

}  // namespace

std::shared_ptr<MappedFile> MappedFile::map_if_resident(int fd, std::uint64_t size, std::uint64_t begin,
                                                        std::uint64_t end) {
  struct stat st {};
  if (size == 0 || begin >= end || end > size || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uint64_t>(st.st_size) != size) {
    return nullptr;
  }
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) return nullptr;
  // Residency is asked of kSamplePages pages spread evenly over the range, its last one included
  // (See Note [Host loads of cached files]); a page the samples miss faults in from the disk when read.
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t first = begin / page, last = (end - 1) / page;  // page indexes, inclusive
  const std::uint64_t pages = last - first + 1;
  bool cached = true;
  for (std::uint64_t i = 0; cached && i < std::min<std::uint64_t>(pages, kSamplePages); ++i) {
    const std::uint64_t index = first + (pages <= kSamplePages ? i : i * (pages - 1) / (kSamplePages - 1));
    unsigned char resident = 0;
    cached = ::mincore(static_cast<char*>(base) + index * page, page, &resident) == 0 && (resident & 1) != 0;
  }
  if (!cached) {
    ::munmap(base, size);
    return nullptr;
  }
  return std::shared_ptr<MappedFile>(new MappedFile(static_cast<std::byte*>(base), size, st.st_dev, st.st_ino));
}

MappedFile::MappedFile(std::byte* base, std::size_t length, dev_t device, ino_t inode) noexcept
    : base_(base), length_(length), device_(device), inode_(inode) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  ++r.live[{device_, inode_}];
}

MappedFile::~MappedFile() {
  ::munmap(base_, length_);
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const auto it = r.live.find({device_, inode_});
  if (it != r.live.end() && --it->second == 0) r.live.erase(it);
}

bool is_mapped(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.live.count({st.st_dev, st.st_ino}) != 0;
}

}  // namespace cudakit::gds::detail
