#include "cudakit/nccl/validation.hpp"

#include <set>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

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
    buffers.push_back(Buffer::of(t, "nccl::is_available"));
  }
  return !tensor_list_problem(buffers).has_value();
}

}  // namespace cudakit::nccl
