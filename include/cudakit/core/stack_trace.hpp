#pragma once
// @brief The calling thread's C++ stack, for reports that say where a call came from: return
// addresses (by the frame-pointer chain or by the unwinder), and their frames named from the
// modules' symbol tables (dladdr, then the module's .symtab), demangled.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cudakit/core/stack_frame.hpp"

namespace cudakit {

// How capture_return_addresses walks the stack (See Note [Frame-pointer stacks]).
enum class StackWalk : std::uint8_t {
  // The chain of saved frame pointers, each step checked against the thread's stack: a few
  // nanoseconds a frame, no allocation. Ends at the first frame whose caller keeps no frame
  // pointer (code built with -fomit-frame-pointer, the default of -O2): cudakit's frames and the
  // call site in the program are always there, the program's outer frames where it is built
  // with -fno-omit-frame-pointer.
  frame_pointers,
  // The unwinder (glibc's backtrace, from the modules' unwind tables): every frame, whatever the
  // build, at tens of nanoseconds a frame (notes/figures.md, "Stacks").
  unwinder,
};

// The calling thread's stack, innermost first, without capture_stack itself and the `skip`
// frames above it; at most 64 frames (the unwinder), symbolized. Allocates; never throws for
// an unnamed frame (its address stands in for the name).
// @param skip frames to leave out above capture_stack's caller (0: the caller's own frame first).
// @return the frames, innermost first.
[[nodiscard]] StackFrames capture_stack(int skip = 0);
// The two halves of capture_stack, for callers that capture often and symbolize rarely (the
// stream sanitizer). capture_return_addresses writes the return addresses of its caller's stack,
// innermost first, skipping `skip` frames above the caller, into `out` (at most out.size()), and
// returns how many it wrote; it allocates nothing (the unwinder: on its first call only).
// @param out where the addresses go; its size is the most written.
// @param skip frames to leave out above the caller.
// @param walk how to walk the stack.
// @return the count of addresses written to the front of `out`.
[[nodiscard]] std::size_t capture_return_addresses(std::span<void*> out, int skip = 0,
                                                   StackWalk walk = StackWalk::frame_pointers);
// The frames of `addresses` (return addresses, as capture_return_addresses gives them), without
// those whose name starts with one of `hidden_prefixes`, up to the first address that no loaded
// module holds.
// @param addresses return addresses, innermost first.
// @param hidden_prefixes name prefixes of frames to leave out (e.g. a library's namespace).
// @return the named frames, innermost first.
[[nodiscard]] StackFrames symbolize_stack(std::span<void* const> addresses,
                                          std::span<const std::string_view> hidden_prefixes = {});
// The demangled form of a C++ symbol; the text itself when it is not one; "<unnamed>" for null.
// @param mangled a symbol name, or null.
// @return the readable name.
[[nodiscard]] std::string demangle(const char* mangled);
// "  #0 name (filename)\n" per frame.
// @param frames the frames, innermost first.
// @return the text, one line per frame; empty for no frames.
[[nodiscard]] std::string format_stack(const StackFrames& frames);

}  // namespace cudakit
