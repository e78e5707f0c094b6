#pragma once
// @brief ReduceOp: the reductions of all_reduce, reduce and reduce_scatter (torch's ReduceOp).

#include <cstdint>
#include <string_view>

namespace cudakit::nccl {

// How the ranks' elements are combined: NCCL's ncclSum, ncclProd, ncclMin, ncclMax and ncclAvg
// (avg is the sum divided by the world size). For bool tensors sum is "or" and prod "and";
// avg of bool is refused (See Note [Bool reductions] in communicator.cpp).
enum class ReduceOp : std::uint8_t { sum, prod, min, max, avg };
// @param op a reduction
// @return its name ("sum", "prod", "min", "max", "avg"), or "unknown" for a value outside the
//   enum.
[[nodiscard]] std::string_view reduce_op_name(ReduceOp op) noexcept;

}  // namespace cudakit::nccl
