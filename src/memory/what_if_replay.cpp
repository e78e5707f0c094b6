#include "cudakit/memory/what_if_replay.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/async_pool_model.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/host_segment_provider.hpp"
#include "cudakit/memory/torch_caching_model.hpp"

namespace cudakit::memory {

// Note [What-if replays]
// Each allocator replays the snapshot's operations (Note [Replaying a snapshot's trace]) twice:
// once with as much memory as it takes, for its peaks, and once within the capacity asked for,
// stopping at the first request it cannot serve after doing what it does when memory runs out
// (torch: release the cache and retry; the pool: release its unused memory; cudakit: its own
// release and retry). "As much as it takes" is unlimited for the models, which only count; for
// cudakit's allocator, which runs on HostSegmentProvider's real (untouched) address space, it is
// a ceiling of four times the trace's peak of requested bytes (at least the device's memory).
// Deferred frees (record_stream) hold their block until their free_completed in the torch rows
// only: cudakit and the pool have their own rules for memory used across streams, and with work
// that completes at once in a replay, they reuse it at the free.
namespace {

constexpr std::size_t kUnlimited = ~std::size_t{0} >> 2;
constexpr std::size_t kLargestCeiling = std::size_t{1} << 50;

// One allocator behind the replay loop.
class Replayed {
 public:
  virtual ~Replayed() = default;
  virtual bool alloc(std::uint32_t slot, std::uint64_t size, std::uint32_t stream) = 0;
  virtual void free(std::uint32_t slot, bool deferred) = 0;
  virtual void complete(std::uint32_t slot) = 0;
  virtual void empty_cache() = 0;
  virtual std::uint64_t peak_reserved() const = 0;
  virtual std::uint64_t peak_allocated() const = 0;
  virtual std::size_t device_allocations() const = 0;
};

class TorchReplay final : public Replayed {
 public:
  TorchReplay(const AllocatorConfig& config, std::size_t device_memory, std::size_t capacity, std::uint32_t slots)
      : model_(config, device_memory, capacity), blocks_(slots, TorchCachingModel::kNoBlock), pending_(slots, 0) {}
  bool alloc(std::uint32_t slot, std::uint64_t size, std::uint32_t stream) override {
    blocks_[slot] = model_.allocate(size, stream);
    return blocks_[slot] != TorchCachingModel::kNoBlock;
  }
  void free(std::uint32_t slot, bool deferred) override {
    if (blocks_[slot] == TorchCachingModel::kNoBlock) return;
    pending_[slot] = model_.free(blocks_[slot], deferred);
    blocks_[slot] = TorchCachingModel::kNoBlock;
  }
  void complete(std::uint32_t slot) override {
    model_.complete_free(pending_[slot]);
    pending_[slot] = 0;
  }
  void empty_cache() override { model_.empty_cache(); }
  std::uint64_t peak_reserved() const override { return model_.peak_reserved(); }
  std::uint64_t peak_allocated() const override { return model_.peak_allocated(); }
  std::size_t device_allocations() const override { return model_.device_allocations(); }

 private:
  TorchCachingModel model_;
  std::vector<TorchCachingModel::BlockId> blocks_;
  std::vector<TorchCachingModel::PendingFree> pending_;
};

class PoolReplay final : public Replayed {
 public:
  PoolReplay(std::size_t capacity, std::uint32_t slots) : pool_(capacity), addresses_(slots, AsyncPoolModel::kFailed) {}
  bool alloc(std::uint32_t slot, std::uint64_t size, std::uint32_t) override {
    addresses_[slot] = pool_.allocate(size);
    return addresses_[slot] != AsyncPoolModel::kFailed;
  }
  void free(std::uint32_t slot, bool) override {
    if (addresses_[slot] != AsyncPoolModel::kFailed) pool_.free(addresses_[slot]);
    addresses_[slot] = AsyncPoolModel::kFailed;
  }
  void complete(std::uint32_t) override {}
  void empty_cache() override { pool_.trim(); }
  std::uint64_t peak_reserved() const override { return pool_.peak_reserved(); }
  std::uint64_t peak_allocated() const override { return pool_.peak_allocated(); }
  std::size_t device_allocations() const override { return 0; }

 private:
  AsyncPoolModel pool_;
  std::vector<std::uint64_t> addresses_;
};

class CudakitReplay final : public Replayed {
 public:
  CudakitReplay(const AllocatorConfig& config, std::size_t capacity, std::uint32_t slots)
      : allocator_(-1, std::make_shared<HostSegmentProvider>(capacity), std::make_shared<HostStreamEvents>(), config),
        pointers_(slots, nullptr) {}
  ~CudakitReplay() override {
    for (void* p : pointers_) {
      if (p) allocator_.deallocate(p);
    }
  }
  bool alloc(std::uint32_t slot, std::uint64_t size, std::uint32_t stream) override {
    try {
      // Stream keys from 1: key 0 is the legacy default stream, which orders with every other.
      pointers_[slot] = allocator_.allocate(size, StreamKey{stream} + 1);
    } catch (const OutOfMemoryError&) {
      return false;
    }
    return true;
  }
  void free(std::uint32_t slot, bool) override {
    if (pointers_[slot]) allocator_.deallocate(pointers_[slot]);
    pointers_[slot] = nullptr;
  }
  void complete(std::uint32_t) override {}
  void empty_cache() override { allocator_.empty_cache(); }
  std::uint64_t peak_reserved() const override {
    return static_cast<std::uint64_t>(allocator_.stats().reserved_bytes[0].peak);
  }
  std::uint64_t peak_allocated() const override {
    return static_cast<std::uint64_t>(allocator_.stats().allocated_bytes[0].peak);
  }
  std::size_t device_allocations() const override {
    return static_cast<std::size_t>(allocator_.stats().num_device_alloc);
  }

 private:
  CachingAllocator allocator_;
  std::vector<void*> pointers_;
};

// Runs the trace until its end or its first failure.
std::optional<WhatIfFailure> run(Replayed& r, const SnapshotDeviceTrace& trace) {
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const SnapshotOp& op = trace.ops[i];
    switch (op.kind) {
      case SnapshotOp::Kind::alloc:
        if (!r.alloc(op.slot, op.size, op.stream)) return WhatIfFailure{i, op};
        break;
      case SnapshotOp::Kind::free: r.free(op.slot, op.deferred); break;
      case SnapshotOp::Kind::free_completed: r.complete(op.slot); break;
      case SnapshotOp::Kind::empty_cache: r.empty_cache(); break;
    }
  }
  return std::nullopt;
}

std::unique_ptr<Replayed> make(WhatIfAllocator which, const WhatIfOptions& o, std::size_t capacity,
                               std::uint32_t slots) {
  switch (which) {
    case WhatIfAllocator::cudakit: return std::make_unique<CudakitReplay>(o.cudakit_config, capacity, slots);
    case WhatIfAllocator::torch_segments:
    case WhatIfAllocator::torch_expandable: {
      AllocatorConfig c = o.torch_config;
      c.expandable_segments = which == WhatIfAllocator::torch_expandable;
      return std::make_unique<TorchReplay>(c, o.device_memory, capacity, slots);
    }
    case WhatIfAllocator::async_pool: return std::make_unique<PoolReplay>(capacity, slots);
  }
  return nullptr;
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

namespace {
struct Names {
  const char* text;
  const char* key;
};
// In WhatIfAllocator's order.
constexpr Names kNames[] = {{"cudakit (default)", "cudakit"},
                            {"torch, expandable_segments:False", "torch_segments"},
                            {"torch, expandable_segments:True", "torch_expandable"},
                            {"cudaMallocAsync-like pool", "async_pool"}};
}  // namespace

const char* to_string(WhatIfAllocator allocator) noexcept { return kNames[static_cast<int>(allocator)].text; }
const char* key_of(WhatIfAllocator allocator) noexcept { return kNames[static_cast<int>(allocator)].key; }

std::vector<WhatIfRow> replay_what_if(const SnapshotDeviceTrace& trace, const WhatIfOptions& options) {
  // See Note [What-if replays] for the ceiling.
  const std::size_t ceiling = round_up(
      std::clamp<std::size_t>(4 * trace.peak_requested_bytes + (std::size_t{1} << 30), options.device_memory,
                              kLargestCeiling),
      std::size_t{2} << 20);
  std::vector<WhatIfRow> rows;
  for (WhatIfAllocator which : {WhatIfAllocator::cudakit, WhatIfAllocator::torch_segments,
                                WhatIfAllocator::torch_expandable, WhatIfAllocator::async_pool}) {
    WhatIfRow row;
    row.allocator = which;
    {
      const auto r = make(which, options, which == WhatIfAllocator::cudakit ? ceiling : kUnlimited, trace.num_slots);
      row.stopped = run(*r, trace);
      row.peak_reserved = r->peak_reserved();
      row.peak_allocated = r->peak_allocated();
      row.device_allocations = r->device_allocations();
    }
    if (options.capacity) {
      const auto r = make(which, options, *options.capacity, trace.num_slots);
      row.first_failure = run(*r, trace);
      row.peak_reserved_within_capacity = r->peak_reserved();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace cudakit::memory
