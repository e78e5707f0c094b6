#include "cudakit/core/stack_trace.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/elf_symbol_table.hpp"

namespace cudakit {

// Note [Frame-pointer stacks]
// The stream sanitizer captures a stack for every operation it checks (several per tensor op:
// the allocation, the launch, the free), so capture must cost far less than the operation.
// glibc's backtrace() runs the unwinder, which finds each frame's unwind table entry and
// interprets it: microseconds for two dozen frames (notes/figures.md, "Stacks"). Code built with
// frame pointers keeps a linked list on the stack instead: each frame's record holds the caller's
// frame pointer and the return address ([fp] and [fp + 8] on x86-64; aarch64's frame record is
// the same pair), so a walk is two loads a frame. cudakit is built with -fno-omit-frame-pointer
// (CMakeLists.txt), so its own frames always chain; the walk then reaches the program's call
// site, the return address in cudakit's outermost frame. Past a function built without frame
// pointers the saved value is whatever that function kept in the register, so every step is
// checked before it is taken, as sanitizers' fast unwinders do: the frame lies inside the
// thread's stack (its bounds cached per thread), is aligned, and lies above the previous one
// (stacks grow down); the walk stops at the first frame that fails, at a null return address, or
// at the outermost frame (whose saved frame pointer is 0). A step that passes these checks
// through a foreign frame can yield a wrong outer frame, never a bad read. The trace hooks make
// the function they expand in keep a frame pointer (CUDAKIT_TRACE), so a program's function into
// which cudakit's header templates (launch_kernel) are inlined still chains to its caller.
// symbolize_stack ends a stack at the first address that no loaded module holds: past a foreign
// frame, what passed the checks may still be data rather than a return address.
// StackWalk::unwinder stays for programs that want every frame whatever their build.

namespace {

// The calling thread's stack, [low, high); empty where the thread's attributes are not known.
struct StackBounds {
  std::uintptr_t low = 0;
  std::uintptr_t high = 0;
};

StackBounds query_stack_bounds() {
  StackBounds bounds;
  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) != 0) return bounds;
  void* base = nullptr;
  std::size_t size = 0;
  if (pthread_attr_getstack(&attributes, &base, &size) == 0) {
    bounds.low = reinterpret_cast<std::uintptr_t>(base);
    bounds.high = bounds.low + size;
  }
  pthread_attr_destroy(&attributes);
  return bounds;
}

// Cached per thread behind a pthread key, not a thread_local: libcudakit's TLS must fit the
// static TLS that glibc keeps spare for libraries loaded by dlopen (tests/dlopen_library.cpp),
// and it is close to full.
// Unknown bounds (empty) make the walk fall back to the unwinder.
const StackBounds& thread_stack_bounds() {
  static const StackBounds unknown;
  static const std::optional<pthread_key_t> key = []() -> std::optional<pthread_key_t> {
    pthread_key_t k{};
    if (pthread_key_create(&k, [](void* bounds) { delete static_cast<StackBounds*>(bounds); }) != 0) {
      return std::nullopt;
    }
    return k;
  }();
  if (!key) return unknown;
  if (const void* known = pthread_getspecific(*key)) return *static_cast<const StackBounds*>(known);
  auto* bounds = new StackBounds(query_stack_bounds());
  if (pthread_setspecific(*key, bounds) != 0) {
    delete bounds;
    return unknown;
  }
  return *bounds;
}

// No code lies in the first page: a "return address" below it is a record that is not one.
constexpr std::uintptr_t kLowestCode = 4096;

#if defined(__x86_64__) || defined(__aarch64__)
constexpr bool kFramePointerRecords = true;
#else
constexpr bool kFramePointerRecords = false;
#endif

std::uintptr_t strip_return_address(std::uintptr_t address) {
#if defined(__aarch64__)
  // Pointer authentication (-mbranch-protection) signs saved return addresses in the top bits.
  return address & ((std::uintptr_t{1} << 48) - 1);
#else
  return address;
#endif
}

}  // namespace

// Not inlined (the frame it starts from is its own) and not instrumented (it reads other
// functions' frame records, which AddressSanitizer may take for parts of another frame).
[[gnu::noinline]] __attribute__((no_sanitize("address", "thread"))) std::size_t
capture_return_addresses(std::span<void*> out, int skip, StackWalk walk) {
  skip = std::max(0, skip);
  const StackBounds& bounds = thread_stack_bounds();
  auto frame = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  if (walk == StackWalk::unwinder || !kFramePointerRecords || frame < bounds.low || frame >= bounds.high) {
    // Asked for, or a stack whose bounds are not known (a coroutine's, a signal stack). The
    // caller's frame is the one returning where this function returns: before it, this
    // function's and whatever wraps backtrace (AddressSanitizer intercepts it).
    void* buffer[256];
    constexpr std::size_t kOwnFrames = 4;
    const auto wanted = static_cast<int>(std::min<std::size_t>(out.size() + kOwnFrames + skip, std::size(buffer)));
    const int n = backtrace(buffer, wanted);
    const void* const return_address = __builtin_return_address(0);
    int caller = std::min(n, 1);
    for (int i = 0; i < n; ++i) {
      if (buffer[i] == return_address) {
        caller = i;
        break;
      }
    }
    const int first = std::min(n, caller + skip);
    const int last = std::min(n, first + static_cast<int>(out.size()));
    std::copy(buffer + first, buffer + last, out.begin());
    return static_cast<std::size_t>(last - first);
  }
  std::size_t n = 0;
  while (n < out.size()) {
    // The record (two words) lies inside the stack: frame >= low and frame + 16 <= high, written
    // so that a frame above the stack cannot wrap the subtraction around.
    if (frame % alignof(std::uintptr_t) != 0 || frame < bounds.low || frame >= bounds.high ||
        bounds.high - frame < 2 * sizeof(void*)) {
      break;
    }
    const auto* record = reinterpret_cast<const std::uintptr_t*>(frame);
    const std::uintptr_t caller_frame = record[0];
    const std::uintptr_t return_address = strip_return_address(record[1]);
    if (return_address < kLowestCode) break;
    if (skip > 0) {
      --skip;
    } else {
      out[n++] = reinterpret_cast<void*>(return_address);
    }
    if (caller_frame <= frame) break;  // the outermost frame (0), or not a frame record
    frame = caller_frame;
  }
  return n;
}

// Note [Naming stack frames]
// dladdr names an address from the dynamic symbol table of the module holding it, which lists
// what the module exports: not an executable's functions (unless it is linked with -rdynamic),
// nor any module's local ones (static functions, anonymous namespaces, lambdas' bodies). For
// those the module's own file is read, once, for its .symtab (detail::ElfSymbolTable), which a
// binary that is not stripped keeps for every function; symbol addresses there are before the
// module's load bias (dladdr1's link map gives it). A frame that neither names shows as
// "module+0xoffset", what addr2line -e module 0xoffset takes. Lookups use the address before the
// return address, which lies in the call itself: the return address of a call that ends a
// function (one that does not return) is already the next function's.

namespace {

const detail::ElfSymbolTable& module_symbols(const std::string& path) {
  static std::mutex mutex;
  static auto* tables = new std::map<std::string, std::unique_ptr<const detail::ElfSymbolTable>>;  // never freed
  std::lock_guard lock(mutex);
  auto& table = (*tables)[path];
  if (!table) table = std::make_unique<const detail::ElfSymbolTable>(detail::ElfSymbolTable::read_file(path));
  return *table;
}

// The frame of `address`; nullopt where no loaded module holds it.
std::optional<StackFrame> name_frame(void* address) {
  const auto call = reinterpret_cast<std::uintptr_t>(address) - 1;
  Dl_info info{};
  link_map* module = nullptr;
  StackFrame f;
  if (dladdr1(reinterpret_cast<void*>(call), &info, reinterpret_cast<void**>(&module), RTLD_DL_LINKMAP) == 0) {
    return std::nullopt;
  }
  f.filename = info.dli_fname && *info.dli_fname ? info.dli_fname : "??";
  if (info.dli_sname) {
    f.name = demangle(info.dli_sname);
    return f;
  }
  const std::uintptr_t bias = module ? module->l_addr : reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  // The main program's link map has no name; its file is /proc/self/exe wherever it was started.
  const std::string path = module && module->l_name && *module->l_name ? module->l_name : "/proc/self/exe";
  if (const auto* symbol = module_symbols(path).find(call - bias)) {
    f.name = demangle(symbol->name.c_str());
  } else {
    const std::string_view file = f.filename;
    f.name = detail::concat(file.substr(file.rfind('/') + 1), "+0x", std::hex,
                            reinterpret_cast<std::uintptr_t>(address) - bias);
  }
  return f;
}

}  // namespace

StackFrames symbolize_stack(std::span<void* const> addresses, std::span<const std::string_view> hidden_prefixes) {
  StackFrames frames;
  for (void* address : addresses) {
    std::optional<StackFrame> named = name_frame(address);
    if (!named) break;  // not code: See Note [Frame-pointer stacks]
    StackFrame& f = *named;
    if (std::any_of(hidden_prefixes.begin(), hidden_prefixes.end(),
                    [&](std::string_view p) { return f.name.starts_with(p); })) {
      continue;
    }
    frames.push_back(std::move(f));
  }
  return frames;
}

StackFrames capture_stack(int skip) {
  void* addresses[64];
  const std::size_t n = capture_return_addresses(addresses, skip + 1, StackWalk::unwinder);
  return symbolize_stack(std::span(addresses, n));
}

std::string demangle(const char* mangled) {
  if (mangled == nullptr) return "<unnamed>";
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> text(abi::__cxa_demangle(mangled, nullptr, nullptr, &status),
                                                         &std::free);
  return status == 0 && text ? std::string(text.get()) : std::string(mangled);
}

std::string format_stack(const StackFrames& frames) {
  std::string out;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    out += detail::concat("  #", i, " ", frames[i].name, " (", frames[i].filename, ")\n");
  }
  return out;
}

}  // namespace cudakit
