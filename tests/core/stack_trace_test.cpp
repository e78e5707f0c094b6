// Host tier: captured C++ stacks (both walks), demangling, naming frames from .symtab, and their
// printed form.

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cudakit/core/detail/elf_symbol_table.hpp"
#include "cudakit/core/stack_trace.hpp"

namespace cudakit {
namespace {

bool names(const StackFrames& frames, const std::string& part) {
  for (const StackFrame& f : frames) {
    if (f.name.find(part) != std::string::npos) return true;
  }
  return false;
}

// Local symbols (an anonymous namespace's): the dynamic symbol table does not hold them, so
// naming them takes the binary's .symtab.
[[gnu::noinline]] std::vector<void*> captured_in_a_local_function(StackWalk walk) {
  std::vector<void*> frames(32);
  frames.resize(capture_return_addresses(frames, 0, walk));
  asm volatile("" ::: "memory");  // no tail call: this frame stays on the stack
  return frames;
}
[[gnu::noinline]] std::vector<void*> called_from_a_second_local_function(StackWalk walk) {
  std::vector<void*> frames = captured_in_a_local_function(walk);
  asm volatile("" ::: "memory");
  return frames;
}

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

TEST(StackTrace, BothWalksNameTheCallersLocalFunctionsInOrder) {
  for (const StackWalk walk : {StackWalk::frame_pointers, StackWalk::unwinder}) {
    const std::vector<void*> addresses = called_from_a_second_local_function(walk);
    const StackFrames frames = symbolize_stack(addresses);
    ASSERT_GE(frames.size(), 3u) << format_stack(frames);
    // The first frame is the caller's: capture_return_addresses leaves itself out.
    EXPECT_NE(frames[0].name.find("captured_in_a_local_function"), std::string::npos) << format_stack(frames);
    EXPECT_NE(frames[1].name.find("called_from_a_second_local_function"), std::string::npos) << format_stack(frames);
    EXPECT_TRUE(names(frames, "BothWalksNameTheCallersLocalFunctionsInOrder")) << format_stack(frames);
  }
}

TEST(StackTrace, FramePointerWalkStopsWhereTheOutputEndsAndSkips) {
  void* two[2];
  ASSERT_EQ(capture_return_addresses(two, 0, StackWalk::frame_pointers), 2u);
  void* all[64];
  const std::size_t n = capture_return_addresses(all, 0, StackWalk::frame_pointers);
  void* skipped[64];
  const std::size_t m = capture_return_addresses(skipped, 1, StackWalk::frame_pointers);
  ASSERT_GE(n, 2u);  // this function and its caller (gtest's, which may keep no frame pointer)
  EXPECT_EQ(m, n - 1);
  // The same path less this function's frame (all[0] is the call site here).
  EXPECT_EQ(std::memcmp(all + 1, skipped, m * sizeof(void*)), 0);
  EXPECT_EQ(capture_return_addresses(std::span<void*>(), 0, StackWalk::frame_pointers), 0u);
}

TEST(StackTrace, FramePointerWalkWorksOnOtherThreads) {
  StackFrames frames;
  std::thread([&] {
    void* addresses[16];
    frames = symbolize_stack(std::span(addresses, capture_return_addresses(addresses)));
  }).join();
  EXPECT_TRUE(names(frames, "FramePointerWalkWorksOnOtherThreads")) << format_stack(frames);
}

TEST(ElfSymbolTable, ReadsTheFunctionsOfThisProgram) {
  const auto table = detail::ElfSymbolTable::read_file("/proc/self/exe");
  ASSERT_GT(table.size(), 100u);
  // A local function of this file, by the address of its code less the program's load bias.
  const auto code = reinterpret_cast<std::uintptr_t>(&captured_in_a_local_function);
  Dl_info info{};
  link_map* module = nullptr;
  ASSERT_NE(dladdr1(reinterpret_cast<void*>(code), &info, reinterpret_cast<void**>(&module), RTLD_DL_LINKMAP), 0);
  ASSERT_NE(module, nullptr);
  const auto* symbol = table.find(code - module->l_addr);
  ASSERT_NE(symbol, nullptr);
  EXPECT_NE(symbol->name.find("captured_in_a_local_function"), std::string::npos) << symbol->name;
  EXPECT_EQ(table.find(code - module->l_addr + symbol->size)  // past its end: the next function's, or none
                == symbol,
            false);
  EXPECT_EQ(table.find(0), nullptr);
}

TEST(ElfSymbolTable, AnythingButAnElfFileIsAnEmptyTable) {
  EXPECT_EQ(detail::ElfSymbolTable::parse({}).size(), 0u);
  const std::string text = "not an ELF file at all, just text that is long enough for a header......";
  EXPECT_EQ(detail::ElfSymbolTable::parse(std::as_bytes(std::span(text))).size(), 0u);
  EXPECT_EQ(detail::ElfSymbolTable::read_file("/nonexistent/binary").size(), 0u);
}

TEST(ElfSymbolTable, ATruncatedFileKeepsNothingItCannotRead) {
  std::FILE* self = std::fopen("/proc/self/exe", "rb");
  ASSERT_NE(self, nullptr);
  std::vector<std::byte> image(1 << 16);
  image.resize(std::fread(image.data(), 1, image.size(), self));
  std::fclose(self);
  ASSERT_GT(image.size(), 64u);
  // The header, with the section headers (at the end of the file) cut off.
  EXPECT_EQ(detail::ElfSymbolTable::parse(std::span(image).first(64)).size(), 0u);
  EXPECT_EQ(detail::ElfSymbolTable::parse(image).size(), 0u);
}

}  // namespace
}  // namespace cudakit
