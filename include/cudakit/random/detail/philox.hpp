#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a
// counter-based generator. One call maps a 128-bit counter and a 64-bit key to 128 random bits,
// with no state carried between calls; see Note [Counter layout].
//
// Compiled by g++ for the CPU reference path and by nvcc for the kernels: the arithmetic is
// integer-only, so the two agree bit for bit by construction.

#include <cstdint>

#include "cudakit/core/host_device.hpp"

namespace cudakit::random::detail {

// Note [Counter layout]
// A draw of n elements at generator state (seed, offset) uses the Philox counters
// offset, offset + 1, ..., offset + ceil(n / per_call) - 1, each a 64-bit value placed in the
// counter's low two words (the high two are 0); the key is the 64-bit seed. Element i, the i-th
// element in row-major logical order of the output, takes word(s) i % per_call of counter
// offset + i / per_call, where per_call (1, 2 or 4) depends only on the distribution and the
// dtype. The launch grid appears nowhere, so a value depends only on (seed, offset, i): the same
// on every GPU and on the CPU. The generator's offset advances by whole counters per draw, so
// consecutive draws never share a counter.

struct PhiloxWords {
  std::uint32_t x, y, z, w;
};

inline constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;  // golden ratio
inline constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;  // sqrt(3) - 1

// One round. The 32x32->64 products compile to one IMAD.WIDE.U32 each on the GPU.
CUDAKIT_HD_INLINE PhiloxWords philox_round(PhiloxWords c, std::uint32_t k0, std::uint32_t k1) {
  const std::uint64_t p0 = static_cast<std::uint64_t>(kPhiloxM0) * c.x;
  const std::uint64_t p1 = static_cast<std::uint64_t>(kPhiloxM1) * c.z;
  return PhiloxWords{static_cast<std::uint32_t>(p1 >> 32) ^ c.y ^ k0,
                     static_cast<std::uint32_t>(p1),
                     static_cast<std::uint32_t>(p0 >> 32) ^ c.w ^ k1,
                     static_cast<std::uint32_t>(p0)};
}

// The full 10-round Philox4x32 of `counter` under key (k0, k1).
CUDAKIT_HD_INLINE PhiloxWords philox4x32_10(PhiloxWords counter, std::uint32_t k0,
                                            std::uint32_t k1) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = 0; round < 9; ++round) {
    counter = philox_round(counter, k0, k1);
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return philox_round(counter, k0, k1);
}

// The ten round keys of a seed. A kernel takes them precomputed (kernel parameters live in the
// constant bank, which the XORs read directly): recomputing the key schedule per counter costs
// 18 of the ~60 integer instructions of a Philox call.
struct PhiloxKey {
  std::uint32_t k0[10];
  std::uint32_t k1[10];
};

CUDAKIT_HD_INLINE PhiloxKey philox_key(std::uint64_t seed) {
  PhiloxKey key;
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    key.k0[round] = k0;
    key.k1[round] = k1;
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return key;
}

// The 128 random bits of counter (block_hi, block_lo) of the stream with this key (Note [Counter
// layout]). Kernels whose counters share the high word pass it loop-invariant, so the first
// round's XOR with it leaves the loop (See Note [Warp tiles]).
CUDAKIT_HD_INLINE PhiloxWords philox_block(const PhiloxKey& key, std::uint32_t block_lo,
                                           std::uint32_t block_hi) {
  PhiloxWords c{block_lo, block_hi, 0u, 0u};
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = 0; round < 10; ++round) c = philox_round(c, key.k0[round], key.k1[round]);
  return c;
}

// The same for counter `block`.
CUDAKIT_HD_INLINE PhiloxWords philox_block(const PhiloxKey& key, std::uint64_t block) {
  return philox_block(key, static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32));
}

CUDAKIT_HD_INLINE PhiloxWords philox_block(std::uint64_t seed, std::uint64_t block) {
  return philox_block(philox_key(seed), block);
}

// Whether counters [offset, offset + count) all have offset's high word, so that a kernel may
// pass it loop-invariant (See Note [Warp tiles]).
CUDAKIT_HD_INLINE bool counters_share_high_word(std::uint64_t offset, std::uint64_t count) {
  return (offset & 0xffffffffu) + count <= (std::uint64_t{1} << 32);
}

}  // namespace cudakit::random::detail
