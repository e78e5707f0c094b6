#pragma once
// The calling thread's C++ stack (backtrace + dladdr, symbol names demangled), for reports that
// say where a call came from. Names are those the dynamic symbol table has: functions of a binary
// linked without -rdynamic show as addresses.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cudakit/core/stack_frame.hpp"

namespace cudakit {

// The calling thread's stack, innermost first, without capture_stack itself and the `skip`
// frames above it; at most 64 frames.
[[nodiscard]] StackFrames capture_stack(int skip = 0);
// The two halves of capture_stack, for callers that capture often and symbolize rarely (the
// stream sanitizer): the return addresses of the caller's stack, innermost first, at most
// `max_frames` of them after skipping `skip` frames above the caller; and their frames, without
// those whose name starts with one of `hidden_prefixes`.
[[nodiscard]] std::vector<void*> capture_return_addresses(int skip = 0, int max_frames = 32);
[[nodiscard]] StackFrames symbolize_stack(std::span<void* const> addresses,
                                          std::span<const std::string_view> hidden_prefixes = {});
// The demangled form of a C++ symbol; the text itself when it is not one; "<unnamed>" for null.
[[nodiscard]] std::string demangle(const char* mangled);
// "  #0 name (filename)\n" per frame.
[[nodiscard]] std::string format_stack(const StackFrames& frames);

}  // namespace cudakit
