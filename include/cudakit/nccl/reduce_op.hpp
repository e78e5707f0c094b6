#pragma once
// @brief ReduceOp: the reductions of all_reduce, reduce and reduce_scatter (torch's ReduceOp).

#include <cstdint>
#include <string_view>

namespace cudakit::nccl {

enum class ReduceOp : std::uint8_t { sum, prod, min, max, avg };
[[nodiscard]] std::string_view reduce_op_name(ReduceOp op) noexcept;

}  // namespace cudakit::nccl
