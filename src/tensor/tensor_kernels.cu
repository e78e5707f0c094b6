// CUDA back end of the tensor operations: one grid-stride kernel per arity, templated on the
// functor, with a contiguous vectorized path (16-byte loads and stores where every pointer is
// aligned) and a strided path; a segmented sum; a mismatch count.

#include <algorithm>
#include <array>

#include "cudakit/core/copy.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/grid_stride.cuh"
#include "cudakit/core/launch.cuh"
#include "cudakit/core/launch_config.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/tensor/detail/operand_access.hpp"
#include "tensor/detail/elementwise_ops.hpp"
#include "tensor/detail/kernel_args.hpp"

namespace cudakit::tensor::detail {
namespace {

template <class T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

// Elements per vector access: 16 bytes of the wider operand type.
template <class Out, class In>
inline constexpr int kVecWidth = static_cast<int>(16 / std::max(sizeof(Out), sizeof(In)));

template <class Out, class F>
__global__ void nullary_kernel(ElementwiseArgs a, F f) {
  Out* out = static_cast<Out*>(a.out);
  for (std::int64_t i = grid_thread_index(); i < a.numel; i += grid_thread_count()) {
    out[a.contiguous ? i : a.out_index.offset(i)] = f(i);
  }
}

template <class Out, class In, int kArity, class F>
__global__ void map_kernel(ElementwiseArgs a, F f, bool vectorized) {
  Out* out = static_cast<Out*>(a.out);
  const In* x = static_cast<const In*>(a.in[0]);
  const In* y = static_cast<const In*>(a.in[1]);
  std::int64_t start = 0;
  if (vectorized) {
    constexpr int N = kVecWidth<Out, In>;
    const std::int64_t vectors = a.numel / N;
    for (std::int64_t v = grid_thread_index(); v < vectors; v += grid_thread_count()) {
      const Vec<In, N> xv = reinterpret_cast<const Vec<In, N>*>(x)[v];
      Vec<In, N> yv;
      if constexpr (kArity == 2) yv = reinterpret_cast<const Vec<In, N>*>(y)[v];
      Vec<Out, N> ov;
#pragma unroll
      for (int k = 0; k < N; ++k) {
        if constexpr (kArity == 2) ov.v[k] = f(xv.v[k], yv.v[k]);
        else ov.v[k] = f(xv.v[k]);
      }
      reinterpret_cast<Vec<Out, N>*>(out)[v] = ov;
    }
    start = vectors * N;
  }
  for (std::int64_t i = start + grid_thread_index(); i < a.numel; i += grid_thread_count()) {
    const std::int64_t xo = a.contiguous ? i : a.in_index[0].offset(i);
    const std::int64_t oo = a.contiguous ? i : a.out_index.offset(i);
    if constexpr (kArity == 2) out[oo] = f(x[xo], y[a.contiguous ? i : a.in_index[1].offset(i)]);
    else out[oo] = f(x[xo]);
  }
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

MemoryAccess operand_access(const void* base, const StridedIndexer& index, bool contiguous,
                            std::int64_t numel, DType dtype, MemoryAccess::Mode mode) {
  return tensor::detail::operand_access(base, index, contiguous, numel, element_size(dtype), mode);
}

auto elementwise_accesses(const ElementwiseArgs& a) {
  return with_accesses([&a] {
    std::array<MemoryAccess, 3> out{};
    static constexpr const char* kInputNames[] = {"input", "other"};
    out[0] = operand_access(a.out, a.out_index, a.contiguous, a.numel, a.out_dtype,
                            MemoryAccess::Mode::write);
    out[0].argument = "out";
    for (int i = 0; i < a.arity; ++i) {
      out[1 + i] = operand_access(a.in[i], a.in_index[i], a.contiguous, a.numel, a.in_dtype,
                                  MemoryAccess::Mode::read);
      out[1 + i].argument = kInputNames[i];
    }
    return std::vector<MemoryAccess>(out.begin(), out.begin() + 1 + a.arity);
  });
}

struct CudaBackend {
  StreamRef stream;
  unsigned grid;

  template <class Out, class F>
  void nullary(const ElementwiseArgs& a, F f) {
    launch_kernel("tensor.nullary", nullary_kernel<Out, F>, {grid, kBlockThreads}, stream,
                  elementwise_accesses(a), a, f);
  }
  template <class Out, class In, int kArity, class F>
  void map(const ElementwiseArgs& a, F f) {
    const bool vectorized = a.contiguous && aligned16(a.out) && aligned16(a.in[0]) &&
                            (kArity == 1 || aligned16(a.in[1]));
    launch_kernel("tensor.map", map_kernel<Out, In, kArity, F>, {grid, kBlockThreads}, stream,
                  elementwise_accesses(a), a, f, vectorized);
  }
  template <class Out, class In, class F>
  void unary(const ElementwiseArgs& a, F f) {
    map<Out, In, 1>(a, f);
  }
  template <class Out, class In, class F>
  void binary(const ElementwiseArgs& a, F f) {
    map<Out, In, 2>(a, f);
  }
};

// Sum over the block; the result is valid in thread 0.
template <class Acc>
__device__ Acc block_sum(Acc value) {
  __shared__ Acc warp_sums[kBlockThreads / 32];
#pragma unroll
  for (int delta = 16; delta > 0; delta /= 2) value += __shfl_down_sync(0xffffffffu, value, delta);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  value = threadIdx.x < kBlockThreads / 32 ? warp_sums[threadIdx.x] : Acc(0);
  if (warp == 0) {
#pragma unroll
    for (int delta = 16; delta > 0; delta /= 2) value += __shfl_down_sync(0xffffffffu, value, delta);
  }
  __syncthreads();  // warp_sums is reused by the next segment
  return value;
}

// Segment (o, s), s < splits, sums logical indices o * length + [s * chunk, (s + 1) * chunk).
template <class In, class Acc, class Out>
__global__ void reduce_kernel(const In* in, StridedIndexer index, bool contiguous,
                              std::int64_t outputs, std::int64_t length, std::int64_t splits,
                              Out* out, bool finish, bool mean, std::int64_t count) {
  const std::int64_t chunk = (length + splits - 1) / splits;
  for (std::int64_t seg = blockIdx.x; seg < outputs * splits; seg += gridDim.x) {
    const std::int64_t o = seg / splits;
    const std::int64_t begin = (seg % splits) * chunk;
    const std::int64_t end = begin + chunk < length ? begin + chunk : length;
    Acc acc = 0;
    for (std::int64_t k = begin + threadIdx.x; k < end; k += blockDim.x) {
      const std::int64_t i = o * length + k;
      acc += convert<Acc>(in[contiguous ? i : index.offset(i)]);
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0) {
      if constexpr (is_floating_v<Out>) {
        if (finish && mean) acc = acc / static_cast<Acc>(count);
      }
      out[seg] = convert<Out>(acc);
    }
  }
}

template <class T>
__global__ void mismatch_kernel(CompareArgs p, unsigned long long* count) {
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  unsigned long long local = 0;
  for (std::int64_t i = grid_thread_index(); i < p.numel; i += grid_thread_count()) {
    local += elements_differ(a[p.a_index.offset(i)], b[p.b_index.offset(i)], p) ? 1 : 0;
  }
  local = block_sum(local);
  if (threadIdx.x == 0 && local != 0) atomicAdd(count, local);
}

}  // namespace

void cuda_elementwise(const ElementwiseArgs& args, StreamRef stream) {
  if (args.numel == 0) return;
  DeviceGuard guard(stream.device());
  dispatch_elementwise(args, CudaBackend{stream, grid_for(args.numel, stream.device())});
}

void cuda_reduce(const ReduceArgs& args, StreamRef stream) {
  DeviceGuard guard(stream.device());
  const int device = stream.device();
  visit_dtype(args.in_dtype, [&]<class In>() {
    using Acc = sum_acc_t<In>;
    using Out = sum_out_t<In>;
    const bool contiguous = args.in_index.ndim <= 1 && args.in_index.strides[0] == 1;
    // Few long segments are split across blocks, then the partial sums are summed.
    const std::int64_t target = static_cast<std::int64_t>(multiprocessor_count(device)) * 8;
    std::int64_t splits = 1;
    if (args.outputs < target && args.length > 16384) {
      splits = std::min((target + args.outputs - 1) / args.outputs, (args.length + 4095) / 4096);
    }
    const auto blocks = [&](std::int64_t segments) {
      return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(segments, 65535)));
    };
    const std::int64_t inputs = args.outputs * args.length;
    const auto input = operand_access(args.in, args.in_index, contiguous, inputs, args.in_dtype,
                                      MemoryAccess::Mode::read);
    const auto output = [&](const void* out, std::int64_t count, DType dtype) {
      return MemoryAccess{out, static_cast<std::size_t>(count) * element_size(dtype),
                          MemoryAccess::Mode::write};
    };
    if (splits == 1) {
      launch_kernel("tensor.reduce", reduce_kernel<In, Acc, Out>,
                    {blocks(args.outputs), kBlockThreads}, stream,
                    with_accesses([&] {
                      return std::array{input, output(args.out, args.outputs, args.out_dtype)};
                    }),
                    static_cast<const In*>(args.in), args.in_index, contiguous, args.outputs,
                    args.length, std::int64_t{1}, static_cast<Out*>(args.out), true, args.mean,
                    args.length);
      return;
    }
    const std::size_t partial_bytes = sizeof(Acc) * static_cast<std::size_t>(args.outputs * splits);
    auto* partial = static_cast<Acc*>(memory::allocate(partial_bytes, stream));
    const MemoryAccess partial_write{partial, partial_bytes, MemoryAccess::Mode::write};
    const MemoryAccess partial_read{partial, partial_bytes, MemoryAccess::Mode::read};
    launch_kernel("tensor.reduce_partial", reduce_kernel<In, Acc, Acc>,
                  {blocks(args.outputs * splits), kBlockThreads}, stream,
                  with_accesses([&] { return std::array{input, partial_write}; }),
                  static_cast<const In*>(args.in), args.in_index, contiguous, args.outputs,
                  args.length, splits, partial, false, false, args.length);
    launch_kernel("tensor.reduce_finish", reduce_kernel<Acc, Acc, Out>,
                  {blocks(args.outputs), kBlockThreads}, stream,
                  with_accesses([&] {
                    return std::array{partial_read, output(args.out, args.outputs, args.out_dtype)};
                  }),
                  static_cast<const Acc*>(partial), StridedIndexer{}, true, args.outputs, splits,
                  std::int64_t{1}, static_cast<Out*>(args.out), true, args.mean, args.length);
    memory::deallocate(partial);  // stream-ordered: reused only after the kernels above
  });
}

std::int64_t cuda_count_mismatches(const CompareArgs& args, StreamRef stream) {
  if (args.numel == 0) return 0;
  DeviceGuard guard(stream.device());
  auto* count = static_cast<unsigned long long*>(memory::allocate(sizeof(unsigned long long), stream));
  memset_async(count, 0, sizeof *count, stream);
  visit_dtype(args.dtype, [&]<class T>() {
    launch_kernel("tensor.count_mismatches", mismatch_kernel<T>,
                  {grid_for(args.numel, stream.device()), kBlockThreads}, stream,
                  with_accesses([&] {
                    return std::array{
                        operand_access(args.a, args.a_index, false, args.numel, args.dtype,
                                       MemoryAccess::Mode::read),
                        operand_access(args.b, args.b_index, false, args.numel, args.dtype,
                                       MemoryAccess::Mode::read),
                        MemoryAccess{count, sizeof *count, MemoryAccess::Mode::read_write}};
                  }),
                  args, count);
  });
  unsigned long long host = 0;
  memcpy_async(&host, count, sizeof host, cudaMemcpyDeviceToHost, stream);
  stream.synchronize();
  memory::deallocate(count);
  return static_cast<std::int64_t>(host);
}

}  // namespace cudakit::tensor::detail
