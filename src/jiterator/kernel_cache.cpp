#include "cudakit/jiterator/kernel_cache.hpp"

#include <cstdlib>
#include <string_view>
#include <system_error>

#include "jiterator/detail/kernel_store.hpp"

namespace cudakit::jiterator {
namespace {

namespace fs = std::filesystem;

const char* nonempty_env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// A file the cache writes: <hash>.cubin, <hash>.lock, or a temporary <hash>.cubin.tmp.<pid>.<n>.
bool is_cache_file(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.ends_with(".cubin") || name.ends_with(".lock") || name.find(".cubin.tmp.") != std::string::npos;
}

}  // namespace

std::optional<fs::path> kernel_cache_path() {
  if (const char* off = nonempty_env("CUDAKIT_KERNEL_CACHE_DISABLE"); off && std::string_view(off) != "0") {
    return std::nullopt;
  }
  if (const char* path = nonempty_env("CUDAKIT_KERNEL_CACHE_PATH")) return fs::path(path);
  if (const char* xdg = nonempty_env("XDG_CACHE_HOME")) return fs::path(xdg) / "cudakit" / "kernels";
  if (const char* home = nonempty_env("HOME")) return fs::path(home) / ".cache" / "cudakit" / "kernels";
  return std::nullopt;
}

KernelCacheInfo kernel_cache_info() {
  KernelCacheInfo info;
  const std::optional<fs::path> path = kernel_cache_path();
  if (!path) return info;
  info.path = *path;
  std::error_code error;
  for (fs::directory_iterator it(*path, error), end; !error && it != end; it.increment(error)) {
    if (!it->is_regular_file(error)) continue;
    const std::string name = it->path().filename().string();
    if (name.ends_with(".cubin")) {
      ++info.entries;
      info.bytes += static_cast<std::int64_t>(it->file_size(error));
    } else if (is_cache_file(it->path())) {
      ++info.other_files;
    }
  }
  return info;
}

std::int64_t clear_kernel_cache() {
  const std::optional<fs::path> path = kernel_cache_path();
  if (!path) return 0;
  std::int64_t removed = 0;
  std::error_code error;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(*path, error), end; !error && it != end; it.increment(error)) {
    if (it->is_regular_file(error) && is_cache_file(it->path())) files.push_back(it->path());
  }
  for (const fs::path& file : files) removed += fs::remove(file, error) ? 1 : 0;
  return removed;
}

KernelCacheStatistics kernel_cache_statistics() { return detail::global_kernel_store().statistics(); }

}  // namespace cudakit::jiterator
