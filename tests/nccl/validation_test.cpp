#include "cudakit/nccl/validation.hpp"

#include <gtest/gtest.h>

#include "cudakit/tensor/factories.hpp"
#include "support/expect_refused.hpp"

namespace {

using cudakit::nccl::Buffer;
using cudakit::nccl::check_buffer;
using cudakit::nccl::check_divisible;
using cudakit::nccl::check_output;
using cudakit::nccl::check_rank;
using cudakit::nccl::check_data_type;
using cudakit::nccl::DataType;
using cudakit::nccl::NcclTarget;
using cudakit::nccl::reduction_for_nccl;
using cudakit::nccl::ReduceOp;
using cudakit::nccl::tensor_list_problem;
using cudakit::testing::expect_refused;

// Buffers are descriptions: validation never touches the memory, so any address will do.
void* const kSomewhere = reinterpret_cast<void*>(0x1000);

Buffer cuda(int device, std::size_t count, DataType dtype = DataType::float32) {
  return Buffer{kSomewhere, count, dtype, device, true};
}

TEST(NcclValidation, BuffersMustBeContiguousCudaMemoryOnTheCommunicatorsDevice) {
  check_buffer("op", "input", cuda(1, 8), 1);
  expect_refused([] { check_buffer("op", "input", cuda(-1, 8), 0); }, "the input (float32 x 8 on the host) is host memory");
  expect_refused([] { check_buffer("op", "output", cuda(2, 8), 0); }, "is on cuda:2 but the communicator is on cuda:0");
  Buffer strided = cuda(0, 8);
  strided.contiguous = false;
  expect_refused([&] { check_buffer("op", "input", strided, 0); }, "is not contiguous");
  expect_refused([] { check_buffer("op", "input", Buffer{nullptr, 4, DataType::int8, 0, true}, 0); }, "has no data pointer");
}

TEST(NcclValidation, OutputsFollowTheOperationsSizeRule) {
  check_output("all_gather", cuda(0, 8), cuda(0, 32), 32, "world_size x the input");
  expect_refused([] { check_output("all_gather", cuda(0, 8), cuda(0, 24), 32, "world_size x the input"); },
                 "the output has 24 elements; it must have 32 (world_size x the input, the input has 8)");
  expect_refused([] { check_output("all_reduce", cuda(0, 8), cuda(0, 8, DataType::float16), 8, "as many"); },
                 "the output's dtype float16 differs from the input's float32");
  expect_refused([] { check_divisible("reduce_scatter", cuda(0, 10), 4); }, "10 elements do not split evenly over 4 ranks");
}

TEST(NcclValidation, RootsAndPeersMustBeRanks) {
  check_rank("broadcast", "root", 3, 4);
  expect_refused([] { check_rank("broadcast", "root", 4, 4); }, "the root 4 is outside 0..3 (world size 4)");
  expect_refused([] { check_rank("send", "peer", -1, 2); }, "the peer -1 is outside 0..1");
}

TEST(NcclValidation, TensorListsNeedOneTensorPerDeviceOfOneDtypeAndSize) {
  EXPECT_FALSE(tensor_list_problem(std::vector<Buffer>{cuda(0, 4), cuda(1, 4)}));
  EXPECT_EQ(*tensor_list_problem(std::vector<Buffer>{}), "the list is empty");
  EXPECT_EQ(*tensor_list_problem(std::vector<Buffer>{cuda(0, 4), cuda(0, 4)}), "tensor 1 is on cuda:0, as an earlier one");
  EXPECT_EQ(*tensor_list_problem(std::vector<Buffer>{cuda(0, 4), cuda(1, 4, DataType::int64)}),
            "tensor 1 is int64, tensor 0 float32");
  EXPECT_EQ(*tensor_list_problem(std::vector<Buffer>{cuda(0, 4), cuda(1, 5)}), "tensor 1 has 5 elements, tensor 0 has 4");
  EXPECT_NE(tensor_list_problem(std::vector<Buffer>{cuda(-1, 4)})->find("not on a CUDA device"), std::string::npos);
}

TEST(NcclValidation, HostTensorsAreNotAvailableForNccl) {
  const auto t = cudakit::tensor::from_host(std::vector<float>{1, 2, 3}, {3});
  const cudakit::tensor::Tensor list[] = {t};
  EXPECT_FALSE(cudakit::nccl::is_available(list));
  // A dtype NCCL cannot carry is an answer too, as torch.cuda.nccl.is_available gives one.
  const cudakit::tensor::Tensor int16_list[] = {cudakit::tensor::from_host(std::vector<std::int16_t>{1, 2}, {2})};
  EXPECT_FALSE(cudakit::nccl::is_available(int16_list));
  const Buffer b = Buffer::of(t, "test");
  EXPECT_EQ(b.device, -1);
  EXPECT_EQ(b.count, 3u);
  EXPECT_EQ(b.bytes(), 12u);
}

// ---- what NCCL refuses (See Note [What NCCL refuses]) ----

constexpr NcclTarget kH200OneRank{22809, 90, 1};   // NCCL 2.28.9, sm_90, one rank
constexpr NcclTarget kH200TwoRanks{22809, 90, 2};
constexpr NcclTarget kA100TwoRanks{22809, 80, 2};  // sm_80
constexpr NcclTarget kOldNccl{22304, 90, 2};       // 2.23.4, before float8

constexpr ReduceOp kReductions[] = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg};

bool is_float8(DataType t) { return t == DataType::float8_e4m3 || t == DataType::float8_e5m2; }

TEST(NcclRefusals, EveryTypeButFloat8IsReducedAsAskedEverywhere) {
  for (int i = 0; i < cudakit::nccl::kDataTypeCount; ++i) {
    const auto dtype = static_cast<DataType>(i);
    if (is_float8(dtype)) continue;
    for (const NcclTarget& target : {kH200OneRank, kH200TwoRanks, kA100TwoRanks, kOldNccl}) {
      for (const ReduceOp op : kReductions) {
        EXPECT_EQ(reduction_for_nccl("api", "all_reduce", dtype, op, target), op)
            << cudakit::nccl::data_type_name(dtype) << " " << cudakit::nccl::reduce_op_name(op);
      }
      check_data_type("api", "broadcast", dtype, target);
    }
  }
}

TEST(NcclRefusals, Float8AvgOnOneRankIsHandedToNcclAsSumAndElsewhereAsAvg) {
  for (const DataType dtype : {DataType::float8_e4m3, DataType::float8_e5m2}) {
    EXPECT_EQ(reduction_for_nccl("api", "all_reduce", dtype, ReduceOp::avg, kH200OneRank), ReduceOp::sum);
    EXPECT_EQ(reduction_for_nccl("api", "reduce_scatter", dtype, ReduceOp::avg, kH200TwoRanks), ReduceOp::avg);
    for (const ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max}) {
      EXPECT_EQ(reduction_for_nccl("api", "all_reduce", dtype, op, kH200OneRank), op);
      EXPECT_EQ(reduction_for_nccl("api", "reduce", dtype, op, kH200TwoRanks), op);
    }
  }
}

TEST(NcclRefusals, Float8ReductionsBeforeSm90AreRefusedNamingOpDtypeVersionAndDevice) {
  for (const ReduceOp op : kReductions) {
    expect_refused([&] { (void)reduction_for_nccl("nccl::Communicator::all_reduce", "all_reduce", DataType::float8_e4m3, op, kA100TwoRanks); },
                   std::string("all_reduce ") + std::string(cudakit::nccl::reduce_op_name(op)) +
                       " of float8_e4m3: NCCL 2.28.9 reduces float8 on sm_90 or later only, and this device is sm_80");
  }
  expect_refused([] { (void)reduction_for_nccl("api", "reduce", DataType::float8_e5m2, ReduceOp::avg, NcclTarget{22809, 89, 1}); },
                 "reduce avg of float8_e5m2: NCCL 2.28.9 reduces float8 on sm_90 or later only, and this device is sm_89");
  // Copies take float8 on any device.
  check_data_type("api", "all_gather", DataType::float8_e4m3, kA100TwoRanks);
  check_data_type("api", "broadcast", DataType::float8_e5m2, kA100TwoRanks);
}

TEST(NcclRefusals, Float8BeforeNccl224AndUnknownTypesAreRefusedForEveryOperation) {
  expect_refused([] { check_data_type("api", "all_gather", DataType::float8_e5m2, kOldNccl); },
                 "all_gather of float8_e5m2: the loaded NCCL 2.23.4 has no float8 types (NCCL 2.24 or later has them)");
  expect_refused([] { (void)reduction_for_nccl("api", "all_reduce", DataType::float8_e4m3, ReduceOp::max, kOldNccl); },
                 "the loaded NCCL 2.23.4 has no float8 types");
  expect_refused([] { check_data_type("api", "send", static_cast<DataType>(12), kH200TwoRanks); },
                 "send: data type 12 is no NCCL type (0..11)");
  expect_refused([] { (void)reduction_for_nccl("api", "all_reduce", DataType::float32, static_cast<ReduceOp>(9), kH200TwoRanks); },
                 "all_reduce: reduction 9 is none of sum, prod, min, max, avg");
}

}  // namespace
