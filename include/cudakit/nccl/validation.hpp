#pragma once
// @brief The checks every collective makes before anything is launched: bad input is refused with
// the values in the message (InvalidArgumentError), never handed to NCCL.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cudakit/nccl/buffer.hpp"
#include "cudakit/nccl/reduce_op.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::nccl {

// `buffer` is contiguous CUDA memory on `device`. `what` names it in the message ("input").
void check_buffer(const char* api, const char* what, const Buffer& buffer, int device);
// `output` has `input`'s dtype and `expected_count` elements (the op's size rule, named by
// `rule`, e.g. "world_size x input").
void check_output(const char* api, const Buffer& input, const Buffer& output, std::size_t expected_count,
                  const char* rule);
// `input`'s count is a multiple of `world_size` (reduce_scatter, all_to_all).
void check_divisible(const char* api, const Buffer& input, int world_size);
// `rank` (a root or a peer, named by `what`) lies in 0..world_size-1.
void check_rank(const char* api, const char* what, int rank, int world_size);

// What a communicator's operations must know of where they run to refuse what NCCL cannot do:
// the loaded NCCL's version code (ncclGetVersion: 22809 is 2.28.9), the compute capability of
// the communicator's device (major * 10 + minor: 90 for sm_90) and the world size.
struct NcclTarget {
  int nccl_version_code = 0;
  int compute_capability = 0;
  int world_size = 1;
};

// `dtype` is an NCCL type the loaded NCCL knows (float8_e4m3 and float8_e5m2 since NCCL 2.24).
// `op` names the operation in the message. See Note [What NCCL refuses] in validation.cpp.
// @throws InvalidArgumentError naming the operation, the dtype and the NCCL version.
void check_data_type(const char* api, const char* op, DataType dtype, const NcclTarget& target);
// The reduction to hand NCCL for `op` on `dtype` (all_reduce, reduce, reduce_scatter): `op`
// itself, or one that gives the same result where NCCL refuses `op` but not its equal (avg of
// float8 on one rank is the input itself: sum). Checks check_data_type's rule too.
// @throws InvalidArgumentError naming the operation, the reduction, the dtype, the NCCL version
// and the compute capability where NCCL cannot reduce `dtype` that way at all.
[[nodiscard]] ReduceOp reduction_for_nccl(const char* api, const char* op, DataType dtype, ReduceOp reduction,
                                          const NcclTarget& target);

// Why `buffers` cannot take part in one single-process collective (torch.cuda.nccl's
// is_available): each must be contiguous CUDA memory, on distinct devices, of one dtype and
// count; nullopt when they can.
[[nodiscard]] std::optional<std::string> tensor_list_problem(std::span<const Buffer> buffers);
// torch.cuda.nccl.is_available(tensors).
[[nodiscard]] bool is_available(std::span<const tensor::Tensor> tensors);

}  // namespace cudakit::nccl
