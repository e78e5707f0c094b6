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
// @param api the calling API's name, for the message
// @param what the buffer's role ("input", "output")
// @param buffer the buffer to check
// @param device the communicator's CUDA ordinal
// @throws InvalidArgumentError for host memory, another device, a strided buffer, or a null
//   pointer with a nonzero count.
void check_buffer(const char* api, const char* what, const Buffer& buffer, int device);
// `output` has `input`'s dtype and `expected_count` elements (the op's size rule, named by
// `rule`, e.g. "world_size x input").
// @param api the calling API's name, for the message
// @param input the operation's input
// @param output the operation's output
// @param expected_count the elements the output must have
// @param rule how expected_count follows from the input, for the message
// @throws InvalidArgumentError when the dtypes differ or the output's count is not
//   expected_count.
void check_output(const char* api, const Buffer& input, const Buffer& output, std::size_t expected_count,
                  const char* rule);
// `input`'s count is a multiple of `world_size` (reduce_scatter, all_to_all).
// @param api the calling API's name, for the message
// @param input the operation's input
// @param world_size the communicator's number of ranks
// @throws InvalidArgumentError when the count does not split evenly (or world_size <= 0).
void check_divisible(const char* api, const Buffer& input, int world_size);
// `rank` (a root or a peer, named by `what`) lies in 0..world_size-1.
// @param api the calling API's name, for the message
// @param what the rank's role ("root", "peer", "rank")
// @param rank the rank to check
// @param world_size the communicator's number of ranks
// @throws InvalidArgumentError when `rank` is outside 0..world_size-1.
void check_rank(const char* api, const char* what, int rank, int world_size);

// What a communicator's operations must know of where they run to refuse what NCCL cannot do:
// the loaded NCCL's version code (ncclGetVersion: 22809 is 2.28.9), the compute capability of
// the communicator's device (major * 10 + minor: 90 for sm_90) and the world size.
struct NcclTarget {
  int nccl_version_code = 0;   // ncclGetVersion's code (0: unknown)
  int compute_capability = 0;  // major * 10 + minor of the communicator's device (0: unknown)
  int world_size = 1;          // ranks in the communicator
};

// `dtype` is an NCCL type the loaded NCCL knows (float8_e4m3 and float8_e5m2 since NCCL 2.24).
// `op` names the operation in the message. See Note [What NCCL refuses] in validation.cpp.
// @param api the calling API's name, for the message
// @param op the operation ("all_gather", "send", ...)
// @param dtype the operation's element type
// @param target the loaded NCCL and the communicator's device
// @throws InvalidArgumentError naming the operation, the dtype and the NCCL version.
void check_data_type(const char* api, const char* op, DataType dtype, const NcclTarget& target);
// The reduction to hand NCCL for `op` on `dtype` (all_reduce, reduce, reduce_scatter): `op`
// itself, or one that gives the same result where NCCL refuses `op` but not its equal (avg of
// float8 on one rank is the input itself: sum). Checks check_data_type's rule too.
// @param api the calling API's name, for the message
// @param op the operation ("all_reduce", "reduce", "reduce_scatter")
// @param dtype the operation's element type
// @param reduction the reduction the caller asked for
// @param target the loaded NCCL and the communicator's device
// @return the reduction to pass to NCCL: `reduction`, or sum for avg of a float8 on one rank
// @throws InvalidArgumentError naming the operation, the reduction, the dtype, the NCCL version
// and the compute capability where NCCL cannot reduce `dtype` that way at all.
[[nodiscard]] ReduceOp reduction_for_nccl(const char* api, const char* op, DataType dtype, ReduceOp reduction,
                                          const NcclTarget& target);

// Why `buffers` cannot take part in one single-process collective (torch.cuda.nccl's
// is_available): each must be contiguous CUDA memory, on distinct devices, of one dtype and
// count.
// @param buffers one buffer per device
// @return what is wrong, naming the first offending buffer by its index ("the list is empty" for
//   none), or nullopt when they can.
[[nodiscard]] std::optional<std::string> tensor_list_problem(std::span<const Buffer> buffers);
// torch.cuda.nccl.is_available(tensors): whether the tensors can take part in one
// single-process collective (tensor_list_problem() finds nothing).
// @param tensors one tensor per device
// @return false for an undefined tensor, a dtype NCCL has no type for (data_type_of()), or any
//   problem tensor_list_problem() names
[[nodiscard]] bool is_available(std::span<const tensor::Tensor> tensors);

}  // namespace cudakit::nccl
