// Loads libcudakit the way Python's ctypes or a plugin host would: dlopen() after start-up, with
// every relocation resolved at once. The allocator's per-thread shard cache uses the
// initial-exec TLS model (src/memory/caching_allocator.cpp), which a library loaded this way
// must fit into the static TLS that glibc keeps spare; this fails loudly if it stops fitting.
// Usage: cudakit_dlopen_check PATH_TO_LIBCUDAKIT

#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PATH_TO_LIBCUDAKIT\n", argv[0]);
    return 2;
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::fprintf(stderr, "dlopen(%s) failed: %s\n", argv[1], dlerror());
    return 1;
  }
  std::printf("dlopen(%s): loaded\n", argv[1]);
  return dlclose(library) == 0 ? 0 : 1;
}
