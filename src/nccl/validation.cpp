#include "cudakit/nccl/validation.hpp"

#include <set>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/nccl/version.hpp"

namespace cudakit::nccl {

using cudakit::detail::concat;

namespace {
std::string describe(const Buffer& b) {
  return concat(data_type_name(b.dtype), " x ", b.count, b.device < 0 ? std::string(" on the host") : concat(" on cuda:", b.device));
}
}  // namespace

Buffer Buffer::of(const tensor::Tensor& t, const char* api) {
  t.check_defined(api);
  const tensor::Device d = t.device();
  return Buffer{t.data_ptr(), static_cast<std::size_t>(t.numel()), data_type_of(t.dtype()), d.is_cuda() ? d.index : -1,
                t.is_contiguous()};
}

void check_buffer(const char* api, const char* what, const Buffer& buffer, int device) {
  if (buffer.device < 0)
    throw InvalidArgumentError(api, concat("the ", what, " (", describe(buffer), ") is host memory; collectives take CUDA memory"));
  if (buffer.device != device)
    throw InvalidArgumentError(api, concat("the ", what, " (", describe(buffer), ") is on cuda:", buffer.device,
                                           " but the communicator is on cuda:", device));
  if (!buffer.contiguous)
    throw InvalidArgumentError(api, concat("the ", what, " (", describe(buffer), ") is not contiguous"));
  if (buffer.data == nullptr && buffer.count != 0)
    throw InvalidArgumentError(api, concat("the ", what, " (", describe(buffer), ") has no data pointer"));
}

void check_output(const char* api, const Buffer& input, const Buffer& output, std::size_t expected_count,
                  const char* rule) {
  if (input.dtype != output.dtype)
    throw InvalidArgumentError(api, concat("the output's dtype ", data_type_name(output.dtype), " differs from the input's ",
                                           data_type_name(input.dtype)));
  if (output.count != expected_count)
    throw InvalidArgumentError(api, concat("the output has ", output.count, " elements; it must have ", expected_count, " (",
                                           rule, ", the input has ", input.count, ")"));
}

void check_divisible(const char* api, const Buffer& input, int world_size) {
  if (world_size <= 0 || input.count % static_cast<std::size_t>(world_size) != 0)
    throw InvalidArgumentError(api, concat("the input's ", input.count, " elements do not split evenly over ", world_size,
                                           " ranks"));
}

void check_rank(const char* api, const char* what, int rank, int world_size) {
  if (rank < 0 || rank >= world_size)
    throw InvalidArgumentError(api, concat("the ", what, " ", rank, " is outside 0..", world_size - 1, " (world size ",
                                           world_size, ")"));
}

// Note [What NCCL refuses]
// Every operation NCCL refuses on a non-blocking communicator also poisons it: ncclEnqueueCheck
// records the error as the communicator's asynchronous error, so every later call fails and
// ncclCommDestroy refuses it (See Note [Destroying a failed communicator] in
// communicator_state.cpp). What NCCL is known to refuse is therefore refused here first, read
// from NCCL 2.28's source (src/enqueue.cc: taskAppend, hostToDevRedOp; src/device/onerank.cu):
//  - float8_e4m3 / float8_e5m2 exist from NCCL 2.24 on; an older NCCL does not know types 10
//    and 11 at all.
//  - Reductions (all_reduce, reduce, reduce_scatter) of a float8 need every rank's device to be
//    sm_90 or later ("FP8 reduction support begins with sm90 capable devices"); copies
//    (broadcast, all_gather, all_to_all, send/recv) take float8 on any device. This side sees
//    its own device only: a peer on an older device is NCCL's to refuse.
//  - avg is a pre-multiplied sum for floating types (each input times 1/world_size), a sum then
//    a division for integers. On a one-rank communicator NCCL runs reductions as one kernel or a
//    copy, and that kernel has no float8 variant: avg of a float8 on one rank is refused with a
//    bare "invalid argument" (no WARN line) in every NCCL up to 2.28. Its result is the input
//    (times 1/1, exact), which is what sum gives on one rank (a copy), so cudakit hands NCCL sum
//    there. On two or more ranks NCCL does float8 avg itself. (Doing avg as our own sum then
//    scale would be neither cheap nor exact elsewhere: e4m3's largest value is 448, so a sum of
//    ranks overflows where their pre-scaled sum does not.)
//  - Bool has no NCCL type: the tensor overloads send it as uint8, with sum as max, prod as min
//    and avg refused (See Note [Bool reductions] in communicator.cpp).
// Any other type (an out-of-range DataType) is refused for every operation.

namespace {

constexpr int kFirstFloat8Nccl = 22400;  // 2.24.0
constexpr int kFirstFloat8ReductionCapability = 90;

bool is_float8(DataType dtype) { return dtype == DataType::float8_e4m3 || dtype == DataType::float8_e5m2; }

std::string nccl_version_text(int code) { return code > 0 ? version_from_code(code).str() : "(version unknown)"; }

std::string capability_text(int capability) { return concat("sm_", capability); }

}  // namespace

void check_data_type(const char* api, const char* op, DataType dtype, const NcclTarget& target) {
  const int index = static_cast<int>(dtype);
  if (index < 0 || index >= kDataTypeCount)
    throw InvalidArgumentError(api, concat(op, ": data type ", index, " is no NCCL type (0..", kDataTypeCount - 1, ")"));
  if (is_float8(dtype) && target.nccl_version_code < kFirstFloat8Nccl)
    throw InvalidArgumentError(api, concat(op, " of ", data_type_name(dtype), ": the loaded NCCL ",
                                           nccl_version_text(target.nccl_version_code),
                                           " has no float8 types (NCCL 2.24 or later has them)"));
}

ReduceOp reduction_for_nccl(const char* api, const char* op, DataType dtype, ReduceOp reduction, const NcclTarget& target) {
  check_data_type(api, op, dtype, target);
  const int index = static_cast<int>(reduction);
  if (index < 0 || index > static_cast<int>(ReduceOp::avg))
    throw InvalidArgumentError(api, concat(op, ": reduction ", index, " is none of sum, prod, min, max, avg"));
  if (!is_float8(dtype)) return reduction;
  if (target.compute_capability < kFirstFloat8ReductionCapability)
    throw InvalidArgumentError(api, concat(op, " ", reduce_op_name(reduction), " of ", data_type_name(dtype), ": NCCL ",
                                           nccl_version_text(target.nccl_version_code),
                                           " reduces float8 on sm_90 or later only, and this device is ",
                                           capability_text(target.compute_capability),
                                           " (broadcast, all_gather, all_to_all and send/recv take float8 anywhere)"));
  if (reduction == ReduceOp::avg && target.world_size == 1) return ReduceOp::sum;
  return reduction;
}

std::optional<std::string> tensor_list_problem(std::span<const Buffer> buffers) {
  if (buffers.empty()) return "the list is empty";
  std::set<int> devices;
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    if (b.device < 0) return concat("tensor ", i, " (", describe(b), ") is not on a CUDA device");
    if (!b.contiguous) return concat("tensor ", i, " (", describe(b), ") is not contiguous");
    if (!devices.insert(b.device).second) return concat("tensor ", i, " is on cuda:", b.device, ", as an earlier one");
    if (b.dtype != buffers[0].dtype)
      return concat("tensor ", i, " is ", data_type_name(b.dtype), ", tensor 0 ", data_type_name(buffers[0].dtype));
    if (b.count != buffers[0].count)
      return concat("tensor ", i, " has ", b.count, " elements, tensor 0 has ", buffers[0].count);
  }
  return std::nullopt;
}

bool is_available(std::span<const tensor::Tensor> tensors) {
  std::vector<Buffer> buffers;
  for (const tensor::Tensor& t : tensors) {
    if (!t.defined()) return false;
    // A dtype NCCL has no type for cannot take part: a question, answered false, not refused.
    try {
      buffers.push_back(Buffer::of(t, "nccl::is_available"));
    } catch (const InvalidArgumentError&) {
      return false;
    }
  }
  return !tensor_list_problem(buffers).has_value();
}

}  // namespace cudakit::nccl
