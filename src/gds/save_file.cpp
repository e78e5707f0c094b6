#include "cudakit/gds/save_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/gds/io_error.hpp"
#include "cudakit/memory/file_descriptor.hpp"
#include "gds/detail/mapped_file.hpp"

namespace cudakit::gds {
namespace {

using cudakit::detail::concat;

std::filesystem::path temporary_beside(const std::filesystem::path& path) {
  static std::atomic<unsigned> counter{0};
  return path.parent_path() / concat(".", path.filename().string(), ".cudakit-tmp-", ::getpid(), "-",
                                     counter.fetch_add(1));
}

// The rename is durable only once the folder's entry is on the storage as well.
void sync_folder(const std::filesystem::path& folder) {
  const memory::FileDescriptor fd(::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd || ::fsync(fd.get()) != 0) {
    const int error = errno;
    throw IoError(error, "fsync", concat("cannot sync the folder ", folder.string(), ": ", std::strerror(error)));
  }
}

template <class Items>
IoReport save_whole_file(const std::filesystem::path& path, Items items, SaveOptions save,
                         GdsOptions options, OptionalStream stream) {
  // A file whose pages host tensors map is replaced, never truncated under them (See Note [Host
  // loads of cached files]).
  const bool replacing_mapped = !save.atomic && detail::is_mapped(path);
  if (!save.atomic && !replacing_mapped) {
    options.fsync = options.fsync || save.fsync;
    GdsFile file(path, O_RDWR | O_CREAT | O_TRUNC, options);
    return file.save_batch(items, stream);
  }
  const std::filesystem::path temporary = temporary_beside(path);
  try {
    IoReport report;
    {
      GdsFile file(temporary, O_RDWR | O_CREAT | O_EXCL, options);
      report = file.save_batch(items, stream);
      file.sync();
    }
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
      const int error = errno;
      throw IoError(error, "rename", concat("cannot rename ", temporary.string(), " to ", path.string(), ": ",
                                            std::strerror(error)));
    }
    sync_folder(path.parent_path());
    return report;
  } catch (const IoError& error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    if (!replacing_mapped) throw;
    // The caller asked for no temporary file: say why one was needed.
    throw IoError(error.status(), error.api(),
                  concat("host tensors of a load still map ", path.string(),
                         ", so the save replaces it (a new file renamed over it) instead of truncating it "
                         "under them, and the replacement failed: ", error.what()));
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
}

}  // namespace

IoReport save_file(const std::filesystem::path& path, std::span<const IoRequest> requests,
                   SaveOptions save, GdsOptions options, OptionalStream stream) {
  return save_whole_file(path, requests, save, options, stream);
}

IoReport save_file(const std::filesystem::path& path, std::span<const TensorAt> tensors,
                   SaveOptions save, GdsOptions options, OptionalStream stream) {
  return save_whole_file(path, tensors, save, options, stream);
}

}  // namespace cudakit::gds
