#pragma once
// Library tables: the one way cudakit reaches an optional library: core's own (CUPTI, NVML) and
// those of the layers above, each in its layer (NVRTC in jiterator, NCCL in nccl, cuFile in gds).
// See Note [Optional library tables].

#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cudakit/core/dynamic_library.hpp"

namespace cudakit::detail {

// Note [Optional library tables]
// An optional library is opened at run time, never linked, so that binaries start where it is
// absent and can say why a feature is missing (the driver has a table of the same shape, filled
// through the runtime instead: See Note [Driver entry points]). Each library has one table,
// written as an X-macro list that names every entry point once, in one of two forms:
//   X(name, required)                          typed by the library's header: decltype(&::name)
//   X(name, optional, result, (parameters))    typed here, where the toolkit has no header
// and either `required` or `optional` in both. `required` entries exist in every version
// cudakit supports: one missing means the library is not available. `optional` ones come with newer versions only: they stay null where the
// loaded version lacks them, and the code that uses one checks it first. decltype(&::name)
// takes each type from the real declaration, so a call with the wrong arguments does not
// compile, and naming the function in decltype does not make the binary depend on the library.
//
// The list becomes a struct (CUDAKIT_LIBRARY_TABLE): one pointer per entry, named as the
// function, plus the table's LibraryStatus. Its accessor (e.g. nvrtc_api()) fills it on first
// call as a function-local static: concurrent first callers wait for the one load, and the
// table is immutable and never reloaded afterwards, so reading it needs no lock. Loading never
// throws. When a required entry is missing every pointer is left null, so that no caller can
// use half a library.

enum class Symbol { required, optional };

// What loading a table found.
struct LibraryStatus {
  const char* library = "";  // "NVRTC": what messages call it
  bool loaded = false;       // opened, and every required entry resolved
  std::string file;          // the name the loader opened ("libnvrtc.so.13"); empty when none
  std::string version;       // as the library reports it ("13.0"); empty when it cannot say
  std::string reason;        // why not loaded: the names tried and the loader's error, or the
                             // file and the required entries it lacks; empty when loaded
  std::vector<std::string> missing_optional;  // optional entries the loaded version lacks
};

// The pointer member of one entry; see Note [Optional library tables] for the two forms.
#define CUDAKIT_LIBRARY_FUNCTION(name, symbol, ...) \
  CUDAKIT_LIBRARY_POINTER_TYPE(name __VA_OPT__(, ) __VA_ARGS__) name = nullptr;
#define CUDAKIT_LIBRARY_POINTER_TYPE(name, ...)                                           \
  CUDAKIT_LIBRARY_FIRST(__VA_OPT__(CUDAKIT_LIBRARY_DECLARED_POINTER(__VA_ARGS__), )       \
                            decltype(&::name))
#define CUDAKIT_LIBRARY_DECLARED_POINTER(result, parameters) std::type_identity_t<result(*) parameters>
#define CUDAKIT_LIBRARY_FIRST(first, ...) first
#define CUDAKIT_LIBRARY_VISIT_FUNCTION(name, symbol, ...) \
  visit(name, #name, ::cudakit::detail::Symbol::symbol);

// The body of a table struct: struct NvrtcApi { CUDAKIT_LIBRARY_TABLE(CUDAKIT_NVRTC_FUNCTIONS) };
#define CUDAKIT_LIBRARY_TABLE(FUNCTIONS)                        \
  FUNCTIONS(CUDAKIT_LIBRARY_FUNCTION)                           \
  ::cudakit::detail::LibraryStatus status;                      \
  /* visit(pointer, name, symbol) for every entry, in order. */ \
  template <class Visit>                                        \
  void for_each_function(Visit&& visit) {                       \
    FUNCTIONS(CUDAKIT_LIBRARY_VISIT_FUNCTION)                   \
  }

// Opens the first of `names` that loads; on failure, status.reason names all of them and gives
// the loader's error. Records status.library and status.file.
DynamicLibrary open_library(const char* library, std::span<const char* const> names,
                            LibraryStatus& status);
// "libz.so.1 lacks a, b": why a table whose required entries `missing` are absent is not loaded.
std::string missing_symbols_reason(const std::string& file, const std::vector<const char*>& missing);

// Loads a table: opens the library, resolves every entry, and when all required ones are
// there, marks it loaded and asks read_version(table) for its version string. Never throws.
template <class Table, class ReadVersion>
Table load_library_table(const char* library, std::span<const char* const> names,
                         ReadVersion read_version) noexcept {
  Table table;
  try {
    // The handle may go once the pointers are taken: See Note [Libraries stay loaded].
    const DynamicLibrary handle = open_library(library, names, table.status);
    if (!handle.is_loaded()) return table;
    std::vector<const char*> missing;
    table.for_each_function([&](auto& slot, const char* name, Symbol symbol) {
      slot = handle.function<std::remove_reference_t<decltype(slot)>>(name);
      if (slot != nullptr) return;
      if (symbol == Symbol::required) missing.push_back(name);
      else table.status.missing_optional.emplace_back(name);
    });
    if (!missing.empty()) {
      Table empty;
      empty.status = std::move(table.status);
      empty.status.missing_optional.clear();
      empty.status.reason = missing_symbols_reason(empty.status.file, missing);
      return empty;
    }
    table.status.loaded = true;
    table.status.version = read_version(std::as_const(table));
  } catch (...) {
    // Only the messages allocate: report the library as absent rather than throw.
    Table empty;
    empty.status.library = library;
    empty.status.reason = "out of memory";
    return empty;
  }
  return table;
}

}  // namespace cudakit::detail
