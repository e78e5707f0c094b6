// Host tier: captured C++ stacks, demangling and their printed form.

#include <gtest/gtest.h>

#include <string>

#include "cudakit/core/stack_trace.hpp"

namespace cudakit {
namespace {

TEST(StackTrace, DemanglesCxxNamesAndLeavesOthers) {
  EXPECT_EQ(demangle("_ZN7cudakit12format_stackERKSt6vectorINS_10StackFrameESaIS1_EE"),
            "cudakit::format_stack(std::vector<cudakit::StackFrame, std::allocator<cudakit::StackFrame> > const&)");
  EXPECT_EQ(demangle("_ZN3foo3barEi"), "foo::bar(int)");
  EXPECT_EQ(demangle("main"), "main");
  EXPECT_EQ(demangle(nullptr), "<unnamed>");
}

TEST(StackTrace, CapturesTheCallersFramesAndPrintsThemNumbered) {
  const StackFrames frames = capture_stack();
  ASSERT_GE(frames.size(), 2u);
  bool libc_frame = false;
  for (const StackFrame& f : frames) {
    EXPECT_FALSE(f.name.empty());
    EXPECT_FALSE(f.filename.empty());
    libc_frame |= f.filename.find("libc.so") != std::string::npos;
  }
  EXPECT_TRUE(libc_frame) << "the C library's start of the program is on the stack";
  EXPECT_LT(capture_stack(1).size(), frames.size()) << "skip drops frames";
  const std::string text = format_stack({{"f()", "libx.so", 0}, {"g()", "liby.so", 0}});
  EXPECT_EQ(text, "  #0 f() (libx.so)\n  #1 g() (liby.so)\n");
}

}  // namespace
}  // namespace cudakit
