#include "cudakit/memory/memory_history_options.hpp"

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory {
namespace {

[[noreturn]] void refuse(std::string_view argument, std::string_view value, std::string_view expected) {
  throw InvalidArgumentError("record_memory_history",
                             detail::concat(argument, " '", value, "' is not one of ", expected));
}

}  // namespace

MemoryHistoryOptions::Enabled MemoryHistoryOptions::parse_enabled(std::optional<std::string_view> enabled) {
  if (!enabled) return Enabled::none;
  if (*enabled == "state") return Enabled::state;
  if (*enabled == "all") return Enabled::all;
  refuse("enabled", *enabled, "'state', 'all' or none");
}

MemoryHistoryOptions::Context MemoryHistoryOptions::parse_context(std::optional<std::string_view> context) {
  if (!context) return Context::none;
  if (*context == "state") return Context::state;
  if (*context == "alloc") return Context::alloc;
  if (*context == "all") return Context::all;
  refuse("context", *context, "'state', 'alloc', 'all' or none");
}

MemoryHistoryOptions::Stacks MemoryHistoryOptions::parse_stacks(std::string_view stacks) {
  // torch's "python" and "all" (Python with C++ frames): C++ frames are all there is here.
  if (stacks == "cpp" || stacks == "all" || stacks == "python") return Stacks::cpp;
  if (stacks == "none") return Stacks::none;
  refuse("stacks", stacks, "'cpp' (or torch's 'python', 'all') or 'none'");
}

}  // namespace cudakit::memory
