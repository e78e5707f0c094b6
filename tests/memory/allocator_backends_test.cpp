// Host tier: the device allocator's backends that need no GPU — the `backend` key and
// CUDAKIT_NO_CUDA_MEMORY_CACHING, and the pluggable backend over a shared library of host
// malloc (tests/memory/pluggable_test_library.cpp), both as a backend object and, in a child
// process, as the device-wide allocator behind memory::allocate.

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/memory/pluggable_allocator.hpp"
#include "cudakit/memory/snapshot.hpp"
#include "memory/detail/allocator_backend.hpp"
#include "support/child_process.hpp"
#include "support/expect_refused.hpp"
#include "support/paths.hpp"

namespace cudakit::memory {
namespace {

using cudakit::testing::expect_refused;
constexpr std::size_t MiB = std::size_t{1} << 20;

std::string library_path() { return cudakit::testing::bin_dir() + "/libcudakit_test_pluggable.so"; }

// The test library's counters, read through the same handle PluggableAllocator loaded.
struct TestLibrary {
  TestLibrary() : handle(dlopen(library_path().c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~TestLibrary() {
    if (handle) dlclose(handle);
  }
  template <class R>
  R call(const char* name) const {
    auto* fn = reinterpret_cast<R (*)()>(dlsym(handle, name));
    if (!fn) throw std::runtime_error(std::string("test library lacks ") + name);
    return fn();
  }
  long allocs() const { return call<long>("cudakit_test_alloc_calls"); }
  long frees() const { return call<long>("cudakit_test_free_calls"); }
  long live_bytes() const { return call<long>("cudakit_test_live_bytes"); }
  int last_device() const { return call<int>("cudakit_test_last_device"); }
  void* last_stream() const { return call<void*>("cudakit_test_last_stream"); }
  void fail_next() const { call<void>("cudakit_test_fail_next"); }
  void* handle;
};

PluggableAllocator from_library() { return PluggableAllocator(library_path(), "cudakit_test_alloc", "cudakit_test_free"); }

// A stream handle no CUDA call ever sees: the pluggable backend only passes it on.
StreamRef fake_stream(std::uintptr_t n, int device = 0) {
  return StreamRef(reinterpret_cast<cudaStream_t>(n), device);
}

TEST(AllocatorBackendConfig, BackendKeyTakesNativeOrCudaMallocAsync) {
  EXPECT_EQ(AllocatorConfig::parse("").backend, AllocatorConfig::Backend::native);
  EXPECT_EQ(AllocatorConfig::parse("backend:native").backend, AllocatorConfig::Backend::native);
  const auto async = AllocatorConfig::parse("expandable_segments:False, backend:cudaMallocAsync");
  EXPECT_EQ(async.backend, AllocatorConfig::Backend::cuda_malloc_async);
  EXPECT_FALSE(async.expandable_segments);
  EXPECT_NE(async.to_string().find("backend:cudaMallocAsync"), std::string::npos);
  EXPECT_EQ(AllocatorConfig::parse(async.to_string()).backend, AllocatorConfig::Backend::cuda_malloc_async);
  EXPECT_EQ(AllocatorConfig::parse("").to_string().find("backend"), std::string::npos);
  for (const char* bad : {"backend:cudamallocasync", "backend:", "backend:pluggable", "backend:native,backend:x"}) {
    expect_refused([&] { (void)AllocatorConfig::parse(bad); }, "unknown backend (accepted: native, cudaMallocAsync)");
  }
  expect_refused([] { (void)AllocatorConfig::parse("backend:bogus"); }, "'backend:bogus'");
}

TEST(AllocatorBackendConfig, NoCachingVariableTakesOneOrZero) {
  EXPECT_TRUE(detail::caching_disabled_by("1"));
  EXPECT_FALSE(detail::caching_disabled_by("0"));
  EXPECT_FALSE(detail::caching_disabled_by(""));
  for (const char* bad : {"yes", "true", "2"}) {
    try {
      (void)detail::caching_disabled_by(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("CUDAKIT_NO_CUDA_MEMORY_CACHING"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(PluggableAllocatorLoad, MissingLibraryIsNamed) {
  expect_refused([] { (void)PluggableAllocator("/no/such/dir/liballoc.so", "a", "f"); },
                 "no shared library at '/no/such/dir/liballoc.so'");
  // A bare name is looked up as dlopen does, and its failure says so with dlopen's reason.
  expect_refused([] { (void)PluggableAllocator("libcudakit_no_such_allocator.so", "a", "f"); },
                 "the shared library 'libcudakit_no_such_allocator.so' could not be loaded: ");
  // A file that is not a shared library.
  expect_refused([] { (void)PluggableAllocator("/proc/self/status", "a", "f"); }, "could not be loaded");
}

TEST(PluggableAllocatorLoad, MissingSymbolIsNamed) {
  expect_refused([] { (void)PluggableAllocator(library_path(), "cudakit_test_alloc", "no_such_free"); },
                 "has no symbol 'no_such_free' (the free function)");
  expect_refused([] { (void)PluggableAllocator(library_path(), "no_such_alloc", "cudakit_test_free"); },
                 "has no symbol 'no_such_alloc' (the allocation function)");
  const PluggableAllocator loaded = from_library();
  EXPECT_EQ(loaded.library_path(), library_path());
  EXPECT_TRUE(loaded.alloc_fn() && loaded.free_fn());
}

TEST(PluggableAllocatorLoad, EmptyFunctionsAreRefused) {
  expect_refused([] { (void)PluggableAllocator(nullptr, [](void*, ssize_t, int, cudaStream_t) {}); },
                 "both the allocation and the free function are required");
  expect_refused([] { (void)PluggableAllocator([](ssize_t, int, cudaStream_t) -> void* { return nullptr; }, nullptr); },
                 "both the allocation and the free function are required");
}

TEST(PluggableBackend, CallsTheLibraryAndKeepsExactStatistics) {
  const TestLibrary lib;
  ASSERT_NE(lib.handle, nullptr) << dlerror();
  const auto backend = detail::make_pluggable_backend(from_library());
  EXPECT_EQ(backend->name(), "pluggable");
  EXPECT_FALSE(backend->uses_cuda());
  const long allocs = lib.allocs(), frees = lib.frees();

  EXPECT_EQ(backend->allocate(0, fake_stream(0x10)), nullptr);
  EXPECT_EQ(lib.allocs(), allocs) << "0 bytes reach the allocator";

  void* small = backend->allocate(1000, fake_stream(0x10, 3));
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(lib.allocs(), allocs + 1);
  EXPECT_EQ(lib.last_device(), 3);
  EXPECT_EQ(lib.last_stream(), reinterpret_cast<void*>(0x10));
  void* large = backend->allocate(3 * MiB, fake_stream(0x20, 3));
  std::memset(small, 1, 1000);  // host memory from the library, really there
  std::memset(large, 2, 3 * MiB);

  MemoryStats m = backend->stats(3);
  const auto all = static_cast<std::size_t>(StatPool::all);
  const auto small_pool = static_cast<std::size_t>(StatPool::small_pool);
  const auto large_pool = static_cast<std::size_t>(StatPool::large_pool);
  EXPECT_EQ(m.allocation[all].current, 2);
  EXPECT_EQ(m.allocation[small_pool].current, 1);
  EXPECT_EQ(m.allocation[large_pool].current, 1);
  EXPECT_EQ(m.allocated_bytes[all].current, static_cast<std::int64_t>(1000 + 3 * MiB));
  EXPECT_EQ(m.requested_bytes[all].current, static_cast<std::int64_t>(1000 + 3 * MiB));
  EXPECT_EQ(m.reserved_bytes[all].current, static_cast<std::int64_t>(1000 + 3 * MiB));
  EXPECT_EQ(m.allocated_bytes[small_pool].current, 1000);
  EXPECT_EQ(m.num_device_alloc, 2);
  EXPECT_EQ(backend->stats(0).allocation[all].current, 0) << "statistics are per device";

  const auto found = backend->find(large);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->device, 3);
  EXPECT_EQ(found->bytes, 3 * MiB);
  int unrelated = 0;
  EXPECT_FALSE(backend->find(&unrelated).has_value());
  EXPECT_FALSE(backend->deallocate_if_owned(&unrelated));
  EXPECT_FALSE(backend->record_stream_if_owned(&unrelated, fake_stream(0x30)));

  const MemorySnapshot snap = backend->snapshot(3);
  ASSERT_EQ(snap.segments.size(), 2u);
  for (const SegmentSnapshot& s : snap.segments) {
    ASSERT_EQ(s.blocks.size(), 1u);
    EXPECT_EQ(s.blocks[0].state, BlockSnapshot::State::active_allocated);
    EXPECT_EQ(s.total_size, s.address == reinterpret_cast<std::uintptr_t>(small) ? 1000 : 3 * MiB);
  }
  EXPECT_NE(backend->summary(3).find("backend:pluggable"), std::string::npos);

  ASSERT_TRUE(backend->deallocate_if_owned(large));
  EXPECT_EQ(lib.frees(), frees + 1);
  EXPECT_EQ(lib.last_stream(), reinterpret_cast<void*>(0x20)) << "free_fn gets the allocating stream";
  EXPECT_FALSE(backend->deallocate_if_owned(large)) << "a double free is refused";
  m = backend->stats(3);
  EXPECT_EQ(m.allocated_bytes[all].current, 1000);
  EXPECT_EQ(m.allocated_bytes[all].peak, static_cast<std::int64_t>(1000 + 3 * MiB));
  EXPECT_EQ(m.reserved_bytes[all].current, 1000);
  EXPECT_EQ(m.num_device_free, 1);
  backend->reset_peak_stats(3);
  EXPECT_EQ(backend->stats(3).allocated_bytes[all].peak, 1000);
  backend->reset_accumulated_stats(3);
  EXPECT_EQ(backend->stats(3).allocated_bytes[all].allocated, 0);
  EXPECT_EQ(backend->stats(3).num_device_alloc, 0);
  EXPECT_EQ(backend->stats(3).allocation[all].current, 1) << "current values survive the reset";

  ASSERT_TRUE(backend->deallocate_if_owned(small));
  EXPECT_EQ(lib.frees(), frees + 2);
  EXPECT_EQ(backend->stats(3).allocated_bytes[all].current, 0);
}

TEST(PluggableBackend, OutOfMemoryIsAClearErrorAndTheBackendGoesOn) {
  const TestLibrary lib;
  ASSERT_NE(lib.handle, nullptr) << dlerror();
  const auto backend = detail::make_pluggable_backend(from_library());
  lib.fail_next();
  try {
    (void)backend->allocate(5 * MiB, fake_stream(0x10));
    FAIL() << "a null from alloc_fn was taken as memory";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(e.requested_bytes(), 5 * MiB);
    EXPECT_NE(std::string(e.what()).find("the pluggable allocator is out of memory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("5.00 MiB"), std::string::npos) << e.what();
  }
  EXPECT_EQ(backend->stats(0).num_ooms, 1);
  EXPECT_EQ(backend->stats(0).allocation[0].current, 0);
  void* p = backend->allocate(64, fake_stream(0x10));
  EXPECT_TRUE(backend->deallocate_if_owned(p));
}

TEST(PluggableBackend, HooksAreCalledAsTorchCallsThem) {
  struct Seen {
    std::vector<std::pair<void*, cudaStream_t>> recorded;
    std::vector<std::pair<double, int>> fractions;
    int resets = 0;
    int allocs = 0, frees = 0;
    cudaStream_t freed_on = nullptr;
  };
  static Seen seen;  // the functions below are plain function pointers, as from C
  seen = {};
  PluggableAllocator plug(
      [](ssize_t size, int, cudaStream_t) -> void* {
        ++seen.allocs;
        return std::malloc(static_cast<std::size_t>(size));
      },
      [](void* p, ssize_t, int, cudaStream_t s) {
        ++seen.frees;
        seen.freed_on = s;
        std::free(p);
      });
  plug.set_record_stream_fn([](void* p, cudaStream_t s) { seen.recorded.emplace_back(p, s); });
  plug.set_memory_fraction_fn([](double f, int d) { seen.fractions.emplace_back(f, d); });
  plug.set_reset_fn([] { ++seen.resets; });
  const auto backend = detail::make_pluggable_backend(plug);

  void* p = backend->allocate(256, fake_stream(0x10, 1));
  EXPECT_TRUE(backend->record_stream_if_owned(p, fake_stream(0x99, 1)));
  EXPECT_TRUE(backend->record_stream_if_owned(p, fake_stream(0x10, 1))) << "the allocating stream itself";
  ASSERT_EQ(seen.recorded.size(), 1u) << "the allocating stream is not passed on";
  EXPECT_EQ(seen.recorded[0].first, p);
  EXPECT_EQ(seen.recorded[0].second, reinterpret_cast<cudaStream_t>(0x99));
  // The hook took the usage stream: cudakit orders nothing itself (no CUDA call on a fake stream).
  EXPECT_TRUE(backend->deallocate_if_owned(p));
  EXPECT_EQ(seen.frees, 1);
  EXPECT_EQ(seen.freed_on, reinterpret_cast<cudaStream_t>(0x10));

  backend->set_memory_fraction(0.25, 1);
  ASSERT_EQ(seen.fractions.size(), 1u);
  EXPECT_EQ(seen.fractions[0], std::make_pair(0.25, 1));
  EXPECT_DOUBLE_EQ(backend->memory_fraction(1), 0.25);
  expect_refused([&] { backend->set_memory_fraction(1.5, 1); }, "fraction 1.5 must lie in (0, 1]");
  EXPECT_EQ(seen.fractions.size(), 1u) << "a refused fraction reaches no hook";
  backend->empty_cache();
  EXPECT_EQ(seen.resets, 1);
}

// ---- The device-wide allocator, in a child process (the backend is process-wide and final) ----

constexpr const char* kPluggableChild = "pluggable_host";
constexpr const char* kBadConfigChild = "bad_backend";

TEST(AllocatorBackendChild, PluggableServesTheDeviceWideFunctions) {
  if (cudakit::testing::child_mode() != kPluggableChild) {
    GTEST_SKIP() << "runs in a child process of PluggableBackend.ServesMemoryAllocateInAChildProcess";
  }
  const TestLibrary lib;
  ASSERT_NE(lib.handle, nullptr) << dlerror();
  // Before any allocation: the environment's choice, still open to a swap.
  EXPECT_EQ(get_allocator_backend(), "native");
  static int init_device_count = -1;
  PluggableAllocator plug = from_library();
  plug.set_init_fn([](int n) { init_device_count = n; });
  static int resets = 0;
  plug.set_reset_fn([] { ++resets; });
  static int recorded = 0;
  plug.set_record_stream_fn([](void*, cudaStream_t) { ++recorded; });
  change_current_allocator(from_library());
  change_current_allocator(plug);  // a second swap before the first allocation is allowed
  EXPECT_EQ(get_allocator_backend(), "pluggable");
  EXPECT_EQ(init_device_count, device_count());

  const long allocs = lib.allocs();
  void* p = allocate(4096, fake_stream(0x40));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(lib.allocs(), allocs + 1);
  EXPECT_EQ(lib.last_device(), 0);
  EXPECT_EQ(memory_allocated(0), 4096u);
  EXPECT_EQ(max_memory_allocated(0), 4096u);
  EXPECT_EQ(memory_reserved(0), 4096u);
  EXPECT_EQ(memory_stats(0).allocation[0].current, 1);
  record_stream(p, fake_stream(0x41));
  EXPECT_EQ(recorded, 1);
  EXPECT_NE(memory_summary(0).find("backend:pluggable"), std::string::npos);
  EXPECT_EQ(memory_snapshot(0).segments.size(), 1u);
  try {
    record_memory_history(true, 100, 0);
    ADD_FAILURE() << "history under the pluggable backend";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("backend:pluggable"), std::string::npos) << e.what();
  }
  try {
    change_current_allocator(from_library());
    ADD_FAILURE() << "swapped after an allocation";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("Can't swap an already initialized allocator"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the pluggable backend has served allocations"), std::string::npos) << e.what();
  }
  EXPECT_EQ(get_allocator_backend(), "pluggable") << "a refused swap changes nothing";

  const long frees = lib.frees();
  deallocate(p);
  EXPECT_EQ(lib.frees(), frees + 1);
  EXPECT_EQ(memory_allocated(0), 0u);
  EXPECT_EQ(max_memory_allocated(0), 4096u);
  reset_peak_memory_stats(0);
  EXPECT_EQ(max_memory_allocated(0), 0u);
  expect_refused([&] { deallocate(p); }, "was not allocated by cudakit's device allocator");
  empty_cache();
  EXPECT_EQ(resets, 1);
  expect_refused([] { (void)memory_stats(detail::kMaxDevices); }, "out of range");
}

TEST(AllocatorBackendChild, BadBackendIsRefusedAtFirstUse) {
  if (cudakit::testing::child_mode() != kBadConfigChild) {
    GTEST_SKIP() << "runs in a child process of PluggableBackend.BadBackendFailsInAChildProcess";
  }
  expect_refused([] { (void)get_allocator_backend(); }, "unknown backend (accepted: native, cudaMallocAsync)");
  // Nothing was chosen: a pluggable allocator may still be installed.
  change_current_allocator(from_library());
  EXPECT_EQ(get_allocator_backend(), "pluggable");
}

TEST(PluggableBackend, ServesMemoryAllocateInAChildProcess) {
  const auto child = cudakit::testing::run_this_binary(
      "AllocatorBackendChild.PluggableServesTheDeviceWideFunctions",
      {std::string(cudakit::testing::kChildVariable) + "=" + kPluggableChild});
  EXPECT_TRUE(child.passed()) << child.output;
}

TEST(PluggableBackend, BadBackendFailsInAChildProcess) {
  const auto child = cudakit::testing::run_this_binary(
      "AllocatorBackendChild.BadBackendIsRefusedAtFirstUse",
      {std::string(cudakit::testing::kChildVariable) + "=" + kBadConfigChild, "CUDAKIT_ALLOC_CONF=backend:bogus"});
  EXPECT_TRUE(child.passed()) << child.output;
}

}  // namespace
}  // namespace cudakit::memory
