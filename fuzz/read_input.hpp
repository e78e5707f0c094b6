#pragma once
// The one rule every fuzz target checks: a reader of outside input either returns or throws
// cudakit::Error, the clear error that names what is malformed. Anything else it throws is a bug
// that would reach the user as an unexplained exception (or std::terminate), so it aborts here,
// and libFuzzer keeps the input. Sanitizer findings, hangs (-timeout) and huge allocations
// (-malloc_limit_mb) are caught by libFuzzer itself.

#include <cxxabi.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <typeinfo>

#include "cudakit/core/error.hpp"

namespace cudakit::fuzz {

[[noreturn]] inline void unexpected_exception(const std::type_info* type, const char* what) {
  int status = 0;
  char* name = type ? abi::__cxa_demangle(type->name(), nullptr, nullptr, &status) : nullptr;
  std::fprintf(stderr, "fuzz: the reader threw %s, not a cudakit::Error: %s\n",
               name ? name : type ? type->name() : "an exception of unknown type", what);
  std::free(name);
  std::abort();
}

// Calls read(input) on libFuzzer's bytes; returns LLVMFuzzerTestOneInput's 0.
template <class Read>
int read_input(const std::uint8_t* data, std::size_t size, Read&& read) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    read(input);
  } catch (const cudakit::Error&) {
    // The documented rejection of bad input.
  } catch (const std::exception& e) {
    unexpected_exception(&typeid(e), e.what());
  } catch (...) {
    unexpected_exception(abi::__cxa_current_exception_type(), "(not a std::exception)");
  }
  return 0;
}

}  // namespace cudakit::fuzz
