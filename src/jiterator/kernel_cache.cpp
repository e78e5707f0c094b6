#include "cudakit/jiterator/kernel_cache.hpp"

#include <cstdlib>
#include <string_view>
#include <system_error>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
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

// The folder's entries, through `visit`; nothing for a folder that does not exist yet.
// @throws InvalidArgumentError for a path that names a file, FileError for a folder that cannot
// be listed.
template <class Visit>
void for_each_entry(const fs::path& folder, const char* api, Visit&& visit) {
  std::error_code error;
  const fs::file_status status = fs::status(folder, error);
  if (status.type() == fs::file_type::not_found) return;
  if (!error && status.type() != fs::file_type::directory) {
    throw InvalidArgumentError(api, cudakit::detail::concat(
        "the kernel cache's path '", folder.string(),
        "' (CUDAKIT_KERNEL_CACHE_PATH, or the default under XDG_CACHE_HOME or HOME) is not a folder"));
  }
  fs::directory_iterator it(folder, error), end;
  for (; !error && it != end; it.increment(error)) visit(*it);
  if (error) {
    throw FileError(error.value(), api,
                    cudakit::detail::concat("cannot list ", folder.string(), ": ", error.message()));
  }
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
  for_each_entry(*path, "kernel_cache_info", [&](const fs::directory_entry& entry) {
    std::error_code error;
    if (!entry.is_regular_file(error)) return;
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".cubin")) {
      ++info.entries;
      const auto size = entry.file_size(error);
      info.bytes += error ? 0 : static_cast<std::int64_t>(size);
    } else if (is_cache_file(entry.path())) {
      ++info.other_files;
    }
  });
  return info;
}

std::int64_t clear_kernel_cache() {
  const std::optional<fs::path> path = kernel_cache_path();
  if (!path) return 0;
  std::int64_t removed = 0;
  std::vector<fs::path> files;
  for_each_entry(*path, "clear_kernel_cache", [&](const fs::directory_entry& entry) {
    std::error_code error;
    if (entry.is_regular_file(error) && is_cache_file(entry.path())) files.push_back(entry.path());
  });
  // Every file is tried; the first refusal is told with the count of those that stayed.
  std::error_code first_error;
  std::string first_refused;
  for (const fs::path& file : files) {
    std::error_code error;
    if (fs::remove(file, error)) {
      ++removed;
    } else if (error && first_refused.empty()) {
      first_error = error;
      first_refused = file.string();
    }
  }
  if (!first_refused.empty()) {
    throw FileError(first_error.value(), "clear_kernel_cache",
                    cudakit::detail::concat("cannot remove ", first_refused, ": ", first_error.message(), " (",
                                            files.size() - static_cast<std::size_t>(removed), " of ",
                                            files.size(), " files stay)"));
  }
  return removed;
}

KernelCacheStatistics kernel_cache_statistics() { return detail::global_kernel_store().statistics(); }

}  // namespace cudakit::jiterator
