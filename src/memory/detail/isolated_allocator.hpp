#pragma once
// IsolatedAllocator: a standard allocator whose memory comes in whole 128-byte lines that hold
// nothing else, for data every thread reads (See Note [Arena table on lines of its own] in
// arena_table.hpp).

#include <cstddef>
#include <new>

namespace cudakit::memory::detail {

inline constexpr std::size_t kIsolation = 128;
constexpr std::size_t whole_lines(std::size_t bytes) {
  return (bytes + kIsolation - 1) / kIsolation * kIsolation;
}

template <class T>
struct [[gnu::visibility("hidden")]] IsolatedAllocator {
  using value_type = T;
  IsolatedAllocator() = default;
  template <class U>
  IsolatedAllocator(const IsolatedAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(whole_lines(n * sizeof(T)), std::align_val_t{kIsolation}));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    ::operator delete(p, whole_lines(n * sizeof(T)), std::align_val_t{kIsolation});
  }
  friend bool operator==(const IsolatedAllocator&, const IsolatedAllocator&) noexcept { return true; }
};

}  // namespace cudakit::memory::detail
