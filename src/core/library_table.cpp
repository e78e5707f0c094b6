#include "cudakit/core/detail/library_table.hpp"

#include "cudakit/core/detail/concat.hpp"

namespace cudakit::detail {
namespace {

std::string join(const auto& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

}  // namespace

DynamicLibrary open_library(const char* library, std::span<const char* const> names,
                            LibraryStatus& status) {
  status.library = library;
  DynamicLibrary handle(names);
  if (handle.is_loaded()) {
    status.file = handle.description();
  } else {
    // The loader's message names only the last file tried; say which others were.
    status.reason = concat(library, " could not be loaded (tried ", join(names), "): ",
                           handle.description());
  }
  return handle;
}

std::string missing_symbols_reason(const std::string& file, const std::vector<const char*>& missing) {
  return concat(file, " lacks ", join(missing));
}

}  // namespace cudakit::detail
