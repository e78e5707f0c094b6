// Maps the library's machine code into the process when the library loads (Note [Prefaulting
// the library's code]).

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string_view>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14; older kernels answer EINVAL, and nothing changes
#endif

namespace cudakit::detail {
namespace {

// Note [Prefaulting the library's code]
// A first call into code the process has not run yet pays a page fault for each stretch of the
// library it touches: the kernel maps the page-cache pages in 64 KiB windows, and on a VM a
// fault costs microseconds. The jiterator's first call in a new process (disk cache warm)
// touches dozens of such windows spread over libcudakit's code: source generation, the cache
// entry's read and check, the store and the launch; their faults were about half of that call's
// time (notes/figures.md, "Prefaulting the library's code"). So when the library loads, one
// madvise(MADV_POPULATE_READ) maps its whole executable segment (no copy: the pages are the page
// cache's, shared with every process that maps the file). It costs a small fraction of the
// library's load (cuBLAS's libraries the bulk of it) and lowers the first call of everything in
// the library, not one path. The cost is the segment counted in the process's resident set;
// CUDAKIT_PREFAULT_CODE=0 leaves it out. Data and read-only data (most of it the kernels'
// fatbins, read by the driver when it loads a module) are left to fault as usual.

// `data`: the load base of the object whose executable segment to map.
int populate_code_of(dl_phdr_info* info, std::size_t, void* data) {
  if (info->dlpi_addr != *static_cast<const std::uintptr_t*>(data)) return 0;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || (segment.p_flags & PF_X) == 0) continue;
    const std::uintptr_t begin = (info->dlpi_addr + segment.p_vaddr) & ~(page - 1);
    const std::uintptr_t end = (info->dlpi_addr + segment.p_vaddr + segment.p_memsz + page - 1) & ~(page - 1);
    (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);  // advice only
  }
  return 1;
}

bool prefault_enabled() {
  const char* value = std::getenv("CUDAKIT_PREFAULT_CODE");
  return value == nullptr || std::string_view(value) != "0";
}

__attribute__((constructor)) void prefault_library_code() {
  if (!prefault_enabled()) return;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&prefault_library_code), &info) == 0 || info.dli_fbase == nullptr) return;
  // dlpi_addr is the load bias; for a shared object linked at address 0 (PIC) it is the base
  // dladdr reports. An executable linked at a fixed address has a bias of 0 and is left alone.
  std::uintptr_t base = reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  (void)::dl_iterate_phdr(populate_code_of, &base);
}

}  // namespace
}  // namespace cudakit::detail
