// Storage::wrap: memory another library owns (DLPack's from_dlpack), released through its owner's
// callback exactly once, when the last view lets go.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/storage.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace {

namespace ten = cudakit::tensor;

TEST(StorageWrap, ViewsReadTheOwnersMemoryAndReleaseItOnce) {
  std::vector<float> owned = {1, 2, 3, 4, 5, 6};
  int releases = 0;
  {
    auto storage = ten::Storage::wrap(owned.data(), owned.size() * sizeof(float), ten::Device::cpu(),
                                      [&] { ++releases; });
    EXPECT_TRUE(storage->is_external());
    EXPECT_EQ(storage->data(), owned.data());
    ten::Tensor t(storage, ten::DType::float32, {2, 3}, {3, 1});
    storage.reset();
    const ten::Tensor column = t.slice(1, 1, 2);
    EXPECT_EQ(column.to_vector<float>(), (std::vector<float>{2, 5}));
    t.fill_(7);
    EXPECT_EQ(owned[0], 7);
    t = ten::Tensor();
    EXPECT_EQ(releases, 0);  // the slice still holds the storage
  }
  EXPECT_EQ(releases, 1);
  EXPECT_EQ(owned, std::vector<float>(6, 7));  // cudakit never freed the owner's memory
}

TEST(StorageWrap, NegativeStridesReachFromAnOffset) {
  std::vector<std::int32_t> owned = {0, 1, 2, 3};
  auto storage = ten::Storage::wrap(owned.data(), owned.size() * 4, ten::Device::cpu(), {});
  const ten::Tensor reversed(storage, ten::DType::int32, {4}, {-1}, 3);
  EXPECT_EQ(reversed.to_vector<std::int32_t>(), (std::vector<std::int32_t>{3, 2, 1, 0}));
}

TEST(StorageWrap, ARefusedViewStillReleases) {
  std::vector<float> owned(4);
  int releases = 0;
  EXPECT_THROW(ten::Tensor(ten::Storage::wrap(owned.data(), 16, ten::Device::cpu(), [&] { ++releases; }),
                           ten::DType::float32, {5}, {1}),
               cudakit::InvalidArgumentError);
  EXPECT_EQ(releases, 1);
}

TEST(StorageWrap, RecordStreamIsANoOpOnForeignMemory) {
  std::vector<float> owned(4);
  auto storage = ten::Storage::wrap(owned.data(), 16, ten::Device::cpu(), {});
  EXPECT_NO_THROW(storage->record_stream(cudakit::StreamRef(nullptr, 0)));
}

TEST(StorageWrapThreads, TheLastOwnerOnAnyThreadReleasesOnce) {
  std::vector<float> owned(16);
  std::atomic<int> releases = 0;
  auto storage = ten::Storage::wrap(owned.data(), 64, ten::Device::cpu(), [&] { ++releases; });
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([copy = storage]() mutable {
      for (int j = 0; j < 1000; ++j) {
        auto again = copy;
        again.reset();
      }
    });
  }
  storage.reset();
  for (auto& t : threads) t.join();
  EXPECT_EQ(releases.load(), 1);
}

}  // namespace
