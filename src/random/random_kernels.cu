// The random kernels: one grid-stride kernel template over the distribution functors (one Philox
// call -> kPerCall values, stored as one 16-byte (8, 4) vector when the output is contiguous and
// aligned, in warp tiles: Note [Warp tiles]), randperm's radix sort, and the graph slot writer.
// See Note [Counter layout] and Note [Graph-safe Philox state].

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <limits>

#include <array>

#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/grid_stride.cuh"
#include "cudakit/core/launch.cuh"
#include "cudakit/core/launch_config.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/tensor/detail/operand_access.hpp"
#include "random/detail/draw.hpp"

namespace cudakit::random::detail {
namespace {

constexpr int kThreads = kBlockThreads;

template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// Note [Warp tiles]
// The contiguous path hands each warp tiles of 256 consecutive counters: lane l computes counters
// tile * 256 + l + 32 q, q = 0..7. Each of the warp's eight vector stores then covers 32
// consecutive packs (coalesced), a thread's counters and addresses differ by immediates, and
// eight independent Philox chains keep the scheduler busy. Counters past the last whole tile go
// one per thread. Where all the tiles' counters share their high word (offset_lo + count <=
// 2^32: every draw but those that cross a multiple of 2^32 counters), a copy of the loop with
// 32-bit counters runs, their high word loop-invariant.
// An eager draw's whole tiles with a shared high word -- nearly every large draw -- run in a
// kernel holding nothing but that loop (draw_whole_tiles_kernel); the rest, if any, in the
// general kernel. With any other code beside it (the tail loop, the 64-bit copy) the loop's
// body ran randn a few percent slower (an effect of code layout, the instruction counts being
// equal). Against one counter per thread and iteration the tiles made randn and rand a fifth
// faster, and eight counters per lane beat four and two (notes/figures.md, "Random numbers";
// notes/tensor_random.md). The grid still decides only who computes a value, never
// which value (See Note [Counter layout]).
constexpr unsigned kLanes = 32, kCallsPerLane = 8, kTile = kLanes * kCallsPerLane;

// Counters [0, tiled) of the draw, tiled a multiple of kTile.
template <bool kSameHigh, class Dist, class T = typename Dist::value_type>
__device__ __forceinline__ void tile_loop(const Dist& dist, const PhiloxKey& key,
                                          std::uint64_t offset, T* out, std::uint64_t tiled) {
  using P = Pack<T, Dist::kPerCall>;
  P* const packs = reinterpret_cast<P*>(out);
  const auto thread = grid_thread_index<std::uint64_t>();
  const auto threads = grid_thread_count<std::uint64_t>();
  for (std::uint64_t first = thread / kLanes * kTile + threadIdx.x % kLanes; first < tiled;
       first += threads / kLanes * kTile) {
    P v[kCallsPerLane];
#pragma unroll
    for (unsigned q = 0; q < kCallsPerLane; ++q) {
      const std::uint64_t index = first + q * kLanes;
      if constexpr (kSameHigh) {
        dist(philox_block(key, static_cast<std::uint32_t>(offset) + static_cast<std::uint32_t>(index),
                          static_cast<std::uint32_t>(offset >> 32)),
             v[q].v);
      } else {
        dist(philox_block(key, offset + index), v[q].v);
      }
    }
#pragma unroll
    for (unsigned q = 0; q < kCallsPerLane; ++q) packs[first + q * kLanes] = v[q];
  }
}

// Counters [0, counters): whole tiles, then one counter per thread.
template <class Dist, class T = typename Dist::value_type>
__device__ __forceinline__ void draw_tiles(const Dist& dist, const PhiloxKey& key,
                                           std::uint64_t offset, T* out, std::uint64_t counters) {
  const std::uint64_t tiled = counters / kTile * kTile;
  if (counters_share_high_word(offset, tiled)) {
    tile_loop<true>(dist, key, offset, out, tiled);
  } else {
    tile_loop<false>(dist, key, offset, out, tiled);
  }
  const auto thread = grid_thread_index<std::uint64_t>();
  const auto threads = grid_thread_count<std::uint64_t>();
  for (std::uint64_t j = tiled + thread; j < counters; j += threads) {
    Pack<T, Dist::kPerCall> v;
    dist(philox_block(key, offset + j), v.v);
    reinterpret_cast<Pack<T, Dist::kPerCall>*>(out)[j] = v;
  }
}

// Contiguous outputs: whole counters in warp tiles (one vector store each), then the partial last
// counter by one thread. Strided outputs: thread t handles counters t, t + stride, ...
template <bool kVector, class Dist, class T = typename Dist::value_type>
__device__ __forceinline__ void draw_loop(const Dist& dist, const PhiloxKey& key,
                                          std::uint64_t offset, T* out, std::int64_t n,
                                          const tensor::detail::StridedIndexer& index,
                                          bool contiguous) {
  constexpr int K = Dist::kPerCall;
  const auto first = grid_thread_index<std::uint64_t>();
  const auto stride = grid_thread_count<std::uint64_t>();
  if constexpr (kVector) {
    const std::uint64_t whole = static_cast<std::uint64_t>(n) / K;
    draw_tiles(dist, key, offset, out, whole);
    if (first == 0 && whole * K < static_cast<std::uint64_t>(n)) {
      Pack<T, K> v;
      dist(philox_block(key, offset + whole), v.v);
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const auto i = static_cast<std::int64_t>(whole * K + k);
        if (i < n) out[i] = v.v[k];
      }
    }
  } else {
    const std::uint64_t blocks = (static_cast<std::uint64_t>(n) + K - 1) / K;
    for (std::uint64_t j = first; j < blocks; j += stride) {
      Pack<T, K> v;
      dist(philox_block(key, offset + j), v.v);
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const auto i = static_cast<std::int64_t>(j * K + k);
        if (i < n) out[contiguous ? i : index.offset(i)] = v.v[k];
      }
    }
  }
}

// An eager draw: `key` is the key schedule, computed on the host (kernel parameters live in the
// constant bank, which the XORs read directly).
template <class Dist, bool kVector>
__global__ void __launch_bounds__(kThreads) draw_kernel(Dist dist, PhiloxKey key, std::uint64_t offset,
                                                        typename Dist::value_type* out,
                                                        std::int64_t n,
                                                        tensor::detail::StridedIndexer index,
                                                        bool contiguous) {
  draw_loop<kVector>(dist, key, offset, out, n, index, contiguous);
}

// An eager draw's whole tiles whose counters share their high word (Note [Warp tiles]).
template <class Dist>
__global__ void __launch_bounds__(kThreads) draw_whole_tiles_kernel(Dist dist, PhiloxKey key,
                                                                    std::uint64_t offset,
                                                                    typename Dist::value_type* out,
                                                                    std::uint64_t tiled) {
  tile_loop<true>(dist, key, offset, out, tiled);
}

// A captured draw reads its seed and offset from the generator's device slot when it runs and
// computes the key schedule here (See Note [Graph-safe Philox state]). A kernel of its own: the
// schedule held in registers would otherwise raise the register count, and so lower the
// occupancy, of every eager draw too (42 against 32 registers for randn).
template <class Dist, bool kVector>
__global__ void __launch_bounds__(kThreads) draw_captured_kernel(Dist dist, PhiloxState state,
                                                                 typename Dist::value_type* out,
                                                                 std::int64_t n,
                                                                 tensor::detail::StridedIndexer index,
                                                                 bool contiguous) {
  const PhiloxState::Values s = state.unpack();
  draw_loop<kVector>(dist, philox_key(s.seed), s.offset, out, n, index, contiguous);
}

// Resident blocks per SM for a kernel, asked once per kernel.
template <auto kKernel>
int blocks_per_sm() {
  static const int blocks = [] {
    int b = 0;
    CUDAKIT_CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kKernel, kThreads, 0));
    return std::max(b, 1);
  }();
  return blocks;
}

// Launches kKernel on a persistent grid for `work_items` independent items: every SM full (or
// fewer blocks for less work), each thread looping over items.
template <auto kKernel, class Accesses, class... Args>
void launch_persistent(const char* name, std::int64_t work_items, StreamRef stream,
                       const Accesses& accesses, const Args&... args) {
  const unsigned grid = grid_for(work_items, stream.device(), blocks_per_sm<kKernel>());
  launch_kernel(name, kKernel, {grid, kThreads}, stream, accesses, args...);
}

// What a draw writes: the target's elements.
template <class T>
auto target_writes(const T* out, std::int64_t numel, const DrawTarget& target) {
  return with_accesses([=, &target] {
    return std::array{tensor::detail::operand_access(out, target.index, target.contiguous, numel,
                                                     sizeof(T), MemoryAccess::Mode::write)};
  });
}

template <class Dist, bool kVector>
void launch_draw(const Dist& dist, const DrawTarget& target, PhiloxState state, StreamRef stream) {
  using T = typename Dist::value_type;
  constexpr int K = Dist::kPerCall;
  auto* const out = static_cast<T*>(target.data);
  if (state.device_slot != nullptr) {
    launch_persistent<draw_captured_kernel<Dist, kVector>>(
        "random.draw_captured", (target.numel + K - 1) / K, stream,
        target_writes(out, target.numel, target), dist, state, out, target.numel, target.index,
        target.contiguous);
    return;
  }
  const PhiloxKey key = philox_key(state.seed);
  std::uint64_t offset = state.offset;
  std::int64_t numel = target.numel;
  T* rest = out;
  if constexpr (kVector) {
    const std::uint64_t tiled = static_cast<std::uint64_t>(numel) / K / kTile * kTile;
    if (tiled > 0 && counters_share_high_word(offset, tiled)) {
      launch_persistent<draw_whole_tiles_kernel<Dist>>(
          "random.draw_tiles", static_cast<std::int64_t>(tiled / kCallsPerLane), stream,
          target_writes(out, static_cast<std::int64_t>(tiled * K), target), dist, key, offset,
          out, tiled);
      offset += tiled;
      numel -= static_cast<std::int64_t>(tiled * K);
      rest += tiled * K;
      if (numel == 0) return;
    }
  }
  launch_persistent<draw_kernel<Dist, kVector>>(
      "random.draw", (numel + K - 1) / K, stream, target_writes(rest, numel, target), dist, key,
      offset, rest, numel, target.index, target.contiguous);
}

__global__ void write_slot_kernel(std::uint64_t* slot, std::uint64_t seed, std::uint64_t offset) {
  slot[0] = seed;
  slot[1] = offset;
}

__global__ void advance_slot_kernel(std::uint64_t* slot, std::uint64_t increment) { slot[1] += increment; }

template <class Index>
__global__ void iota_kernel(Index* out, std::int64_t n) {
  for (std::int64_t i = grid_thread_index(); i < n; i += grid_thread_count()) {
    out[i] = static_cast<Index>(i);
  }
}

// Frees stream-ordered memory from memory::allocate at scope exit.
struct DeviceBuffer {
  void* ptr;
  explicit DeviceBuffer(std::size_t bytes, StreamRef stream) : ptr(memory::allocate(bytes, stream)) {}
  ~DeviceBuffer() {
    try {
      memory::deallocate(ptr);
    } catch (...) {
    }
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr);
  }
};

template <class Index>
void randperm_sorted(Index* out, std::int64_t n, PhiloxState state, StreamRef stream) {
  const auto count = static_cast<int>(n);
  DeviceBuffer keys_in(sizeof(std::uint64_t) * n, stream), keys_out(sizeof(std::uint64_t) * n, stream);
  DeviceBuffer values_in(sizeof(Index) * n, stream);
  DrawTarget keys{keys_in.ptr, n, {}, true};
  launch_draw<PermutationKey, true>(PermutationKey{}, keys, state, stream);
  launch_kernel("random.iota", iota_kernel<Index>, {grid_for(n, stream.device()), kThreads},
                stream, with_accesses([&] {
                  return std::array{MemoryAccess{values_in.ptr, sizeof(Index) * n,
                                                 MemoryAccess::Mode::write}};
                }),
                values_in.as<Index>(), n);
  std::size_t temp_bytes = 0;
  CUDAKIT_CHECK_CUDA(cub::DeviceRadixSort::SortPairs(
      nullptr, temp_bytes, keys_in.as<std::uint64_t>(), keys_out.as<std::uint64_t>(),
      values_in.as<Index>(), out, count, 0, 64, stream.handle()));
  DeviceBuffer temp(std::max<std::size_t>(temp_bytes, 1), stream);
  CUDAKIT_CHECK_CUDA(cub::DeviceRadixSort::SortPairs(
      temp.ptr, temp_bytes, keys_in.as<std::uint64_t>(), keys_out.as<std::uint64_t>(),
      values_in.as<Index>(), out, count, 0, 64, stream.handle()));
}

bool aligned(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

}  // namespace

void cuda_draw(const DrawRequest& request, const DrawTarget& target, PhiloxState state,
               StreamRef stream) {
  if (target.numel == 0) return;
  DeviceGuard guard(stream.device());
  with_distribution(request, [&](auto dist) {
    using Dist = decltype(dist);
    constexpr std::size_t pack = sizeof(typename Dist::value_type) * Dist::kPerCall;
    if (target.contiguous && aligned(target.data, pack)) {
      launch_draw<Dist, true>(dist, target, state, stream);
    } else {
      launch_draw<Dist, false>(dist, target, state, stream);
    }
  });
}

void cuda_randperm(void* out, tensor::DType dtype, std::int64_t n, PhiloxState state,
                   StreamRef stream) {
  if (n == 0) return;
  DeviceGuard guard(stream.device());
  if (dtype == tensor::DType::int32) {
    randperm_sorted(static_cast<std::int32_t*>(out), n, state, stream);
  } else {
    randperm_sorted(static_cast<std::int64_t*>(out), n, state, stream);
  }
}

void cuda_write_slot(std::uint64_t* slot, std::uint64_t seed, std::uint64_t offset,
                     StreamRef stream) {
  DeviceGuard guard(stream.device());
  launch_kernel("random.write_slot", write_slot_kernel, {1, 1}, stream, with_accesses([&] {
                  return std::array{MemoryAccess{slot, 2 * sizeof *slot, MemoryAccess::Mode::write}};
                }),
                slot, seed, offset);
}

void cuda_advance_slot(std::uint64_t* slot, std::uint64_t increment, StreamRef stream) {
  DeviceGuard guard(stream.device());
  launch_kernel("random.advance_slot", advance_slot_kernel, {1, 1}, stream, with_accesses([&] {
                  return std::array{
                      MemoryAccess{slot, 2 * sizeof *slot, MemoryAccess::Mode::read_write}};
                }),
                slot, increment);
}

}  // namespace cudakit::random::detail
