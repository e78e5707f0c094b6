// `cudakit jit cache info|clear`: what the jiterator's disk cache of compiled kernels holds, and
// emptying it (Note [The kernel cache] in src/jiterator/kernel_store.cpp).

#include <iostream>

#include "command.hpp"
#include "cudakit/jiterator/kernel_cache.hpp"

namespace cudakit::cli {
namespace {

int run_info() {
  const jiterator::KernelCacheInfo info = jiterator::kernel_cache_info();
  if (info.path.empty()) {
    std::cout << "disk cache: off (CUDAKIT_KERNEL_CACHE_DISABLE, or no HOME to put it under)\n";
    return 0;
  }
  std::cout << "path: " << info.path.string() << "\n"
            << "entries: " << info.entries << "\n"
            << "bytes: " << info.bytes << "\n"
            << "other files: " << info.other_files << " (locks, unfinished writes)\n";
  return 0;
}

int run_clear() {
  const auto path = jiterator::kernel_cache_path();
  const std::int64_t removed = jiterator::clear_kernel_cache();
  std::cout << "removed " << removed << " file" << (removed == 1 ? "" : "s");
  if (path) std::cout << " from " << path->string();
  std::cout << "\n";
  return 0;
}

const RegisterCommand kRegistration{
    "jit", "the jiterator's disk cache of runtime-compiled kernels", [](CLI::App& command) {
      command.require_subcommand(1);
      CLI::App* cache = command.add_subcommand("cache", "the disk cache (CUDAKIT_KERNEL_CACHE_PATH)");
      cache->require_subcommand(1);
      auto choice = std::make_shared<int>(0);
      cache->add_subcommand("info", "where the cache is, its entries and their size")->callback([choice] { *choice = 1; });
      cache->add_subcommand("clear", "remove every entry and lock file")->callback([choice] { *choice = 2; });
      return std::function<int()>([choice] { return *choice == 2 ? run_clear() : run_info(); });
    }};

}  // namespace
}  // namespace cudakit::cli
