#include "jiterator/detail/nvrtc_prefetch.hpp"

#include <cuda_runtime_api.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace cudakit::jiterator::detail {
namespace {

// Note [Reading NVRTC ahead]
// A process's first compile opens libnvrtc (109 MB) and, inside the compile, NVRTC opens its
// builtins (4 MB). On a machine whose page cache does not hold them yet (the first program to
// compile after a boot) the loader and the compiler fault their pages in a few at a time, each
// fault a small read the next one waits for: the machine's first cold call was 151 ms against
// 17 ms for the next processes (notes/jiterator.md). Asking the kernel to read both files ahead
// (POSIX_FADV_WILLNEED) turns that into a few large sequential reads that the faults then find in
// flight or done. It is asked only where a compile is about to happen (a disk-cache hit never
// opens NVRTC), and only for files mostly absent from the page cache (mincore over a mapping of
// the file, a few microseconds), so a process whose machine has compiled before pays nothing.
//
// Which file the loader will open: NVRTC is opened by its soname, found through
// LD_LIBRARY_PATH first, then the loader's cache. The files read ahead are the first
// libnvrtc.so.13 in LD_LIBRARY_PATH's folders, else the one beside the libcudart this process
// runs on (the toolkit's lib folder, where the loader's cache finds it on a toolkit install).
// A wrong guess costs a read and is otherwise harmless.

constexpr const char* kLibrary = "libnvrtc.so.13";
constexpr const char* kBuiltinsPrefix = "libnvrtc-builtins.so.13";

using Clock = std::chrono::steady_clock;

bool exists(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

// The folder of the shared object that holds `symbol`, or "".
std::string folder_of(const void* symbol) {
  Dl_info info{};
  if (::dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return {};
  const std::string file = info.dli_fname;
  const auto slash = file.rfind('/');
  return slash == std::string::npos ? std::string() : file.substr(0, slash);
}

std::string nvrtc_folder() {
  if (const char* paths = std::getenv("LD_LIBRARY_PATH"); paths != nullptr) {
    std::string list = paths;
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t end = std::min(list.find(':', start), list.size());
      const std::string folder = list.substr(start, end - start);
      if (!folder.empty() && exists(folder + "/" + kLibrary)) return folder;
      start = end + 1;
    }
  }
  const std::string beside_cudart = folder_of(reinterpret_cast<const void*>(&cudaRuntimeGetVersion));
  if (!beside_cudart.empty() && exists(beside_cudart + "/" + kLibrary)) return beside_cudart;
  return {};
}

// The builtins' files in `folder` (libnvrtc-builtins.so.13.N; not the ".alt" variant).
std::vector<std::string> builtins_in(const std::string& folder) {
  std::vector<std::string> files;
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) return files;
  while (const dirent* entry = ::readdir(dir)) {
    // A link to the same file (libnvrtc-builtins.so.13 -> .13.0 on some installs) is read once.
    if (entry->d_type != DT_LNK && std::strncmp(entry->d_name, kBuiltinsPrefix, std::strlen(kBuiltinsPrefix)) == 0) {
      files.push_back(folder + "/" + entry->d_name);
    }
  }
  ::closedir(dir);
  return files;
}

// Asks the kernel to read `path` whole when less than half of it is in the page cache; returns
// the bytes asked for.
std::size_t read_ahead_if_absent(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::size_t asked = 0;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    const auto size = static_cast<std::size_t>(st.st_size);
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t pages = (size + page - 1) / page;
    std::size_t resident = pages;  // where residency cannot be read, assume cached: no read ahead
    if (void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0); map != MAP_FAILED) {
      std::vector<unsigned char> in_core(pages);
      if (::mincore(map, size, in_core.data()) == 0) {
        resident = 0;
        for (const unsigned char c : in_core) resident += c & 1U;
      }
      ::munmap(map, size);
    }
    if (resident * 2 < pages && ::posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED) == 0) asked = size;
  }
  ::close(fd);
  return asked;
}

}  // namespace

NvrtcPrefetch prefetch_nvrtc() noexcept {
  static std::once_flag once;
  NvrtcPrefetch out;
  try {
    std::call_once(once, [&] {
      if (const char* off = std::getenv("CUDAKIT_JITERATOR_PREFETCH"); off != nullptr && std::strcmp(off, "0") == 0) {
        return;
      }
      const auto start = Clock::now();
      // Already open (another part of the process compiled, or linked it): nothing to read.
      if (void* open = ::dlopen(kLibrary, RTLD_LAZY | RTLD_NOLOAD); open != nullptr) {
        ::dlclose(open);
      } else if (const std::string folder = nvrtc_folder(); !folder.empty()) {
        out.bytes += read_ahead_if_absent(folder + "/" + kLibrary);
        for (const std::string& builtins : builtins_in(folder)) out.bytes += read_ahead_if_absent(builtins);
      }
      out.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    });
  } catch (...) {
    // A read-ahead is a hint: whatever failed, the compile goes on without it.
  }
  return out;
}

}  // namespace cudakit::jiterator::detail
