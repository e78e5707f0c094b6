#pragma once
// @brief StackFrame: one frame of a captured C++ stack (capture_stack), as memory history contexts,
// sync-debug warnings and sanitizer reports show it.
#include <string>
#include <vector>

namespace cudakit {

// One named frame of a C++ stack.
struct StackFrame {
  std::string name;      // the demangled function, or its address in hex when unknown
  std::string filename;  // the binary or library holding it
  int line = 0;          // 0: not known (no line tables are read)
};
// A stack, innermost frame first.
using StackFrames = std::vector<StackFrame>;

}  // namespace cudakit
