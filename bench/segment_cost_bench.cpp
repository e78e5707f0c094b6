// What it costs to get device memory from the driver, by size and by mechanism: the figures
// the caching allocator's segment policy is designed around (See Note [Expandable arenas] in
// src/memory/caching_allocator.cpp).
// Plain program: a few repetitions of large operations, median reported.

#include <chrono>
#include <cstdio>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"
#include "support/timing.hpp"

using cudakit::bench::median;
using cudakit::bench::median_us;
using Clock = std::chrono::steady_clock;

int main() {
  if (!cudakit::is_available()) {
    std::printf("no CUDA device: segment cost benchmark skipped\n");
    return 0;
  }
  cudakit::set_device(0);
  CUDAKIT_CHECK_CUDA(cudaFree(nullptr));
  const auto& drv = cudakit::detail::driver();
  CUdevice dev;
  CUDAKIT_DRIVER_CALL(cuDeviceGet, &dev, 0);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  std::size_t granularity = 0;
  CUDAKIT_DRIVER_CALL(cuMemGetAllocationGranularity, &granularity, &prop,
                      CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  std::printf("VMM granularity %zu KiB\n", granularity >> 10);
  std::printf("%10s %14s %14s %16s %16s %16s %14s\n", "MiB", "cudaMalloc us", "cudaFree us",
              "cuMemCreate us", "reserve+map us", "setAccess us", "unmap+rel us");
  for (std::size_t mib : {2, 8, 20, 64, 256, 1024, 4096}) {
    const std::size_t bytes = mib << 20;
    std::vector<void*> ptrs;
    const int reps = mib >= 1024 ? 3 : 7;
    double malloc_us = median_us(reps, [&] {
      void* p;
      CUDAKIT_CHECK_CUDA(cudaMalloc(&p, bytes));
      ptrs.push_back(p);
    });
    std::size_t i = 0;
    double free_us = median_us(reps, [&] { CUDAKIT_CHECK_CUDA(cudaFree(ptrs[i++])); });
    std::vector<CUmemGenericAllocationHandle> handles;
    std::vector<CUdeviceptr> vas;
    double create_us = median_us(reps, [&] {
      CUmemGenericAllocationHandle h;
      CUDAKIT_DRIVER_CALL(cuMemCreate, &h, bytes, &prop, 0);
      handles.push_back(h);
    });
    i = 0;
    double map_us = median_us(reps, [&] {
      CUdeviceptr va;
      CUDAKIT_DRIVER_CALL(cuMemAddressReserve, &va, bytes, 0, 0, 0);
      CUDAKIT_DRIVER_CALL(cuMemMap, va, bytes, 0, handles[i++], 0);
      vas.push_back(va);
    });
    i = 0;
    double access_us = median_us(reps, [&] {
      CUDAKIT_DRIVER_CALL(cuMemSetAccess, vas[i++], bytes, &access, 1);
    });
    i = 0;
    double release_us = median_us(reps, [&] {
      CUDAKIT_DRIVER_CALL(cuMemUnmap, vas[i], bytes);
      CUDAKIT_DRIVER_CALL(cuMemAddressFree, vas[i], bytes);
      CUDAKIT_DRIVER_CALL(cuMemRelease, handles[i]);
      ++i;
    });
    std::printf("%10zu %14.1f %14.1f %16.1f %16.1f %16.1f %14.1f\n", mib, malloc_us, free_us,
                create_us, map_us, access_us, release_us);
  }
  // Mapping many 2 MiB pages into one reserved range: the cost of growing an expandable segment.
  {
    const int pages = 256;
    const std::size_t page = 2u << 20;
    CUdeviceptr va;
    CUDAKIT_DRIVER_CALL(cuMemAddressReserve, &va, pages * page, 0, 0, 0);
    std::vector<CUmemGenericAllocationHandle> hs(pages);
    auto t0 = Clock::now();
    for (int p = 0; p < pages; ++p) {
      CUDAKIT_DRIVER_CALL(cuMemCreate, &hs[p], page, &prop, 0);
      CUDAKIT_DRIVER_CALL(cuMemMap, va + p * page, page, 0, hs[p], 0);
      CUDAKIT_DRIVER_CALL(cuMemSetAccess, va + p * page, page, &access, 1);
    }
    auto t1 = Clock::now();
    for (int p = 0; p < pages; ++p) {
      CUDAKIT_DRIVER_CALL(cuMemUnmap, va + p * page, page);
      CUDAKIT_DRIVER_CALL(cuMemRelease, hs[p]);
    }
    auto t2 = Clock::now();
    CUDAKIT_DRIVER_CALL(cuMemAddressFree, va, pages * page);
    std::printf("per 2 MiB page: create+map+access %.1f us, unmap+release %.1f us\n",
                std::chrono::duration<double, std::micro>(t1 - t0).count() / pages,
                std::chrono::duration<double, std::micro>(t2 - t1).count() / pages);
  }
  // What recycling single pages would cost (notes/allocator.md, "2026-11-30, 3232bd4"): a page can only be
  // released with its whole handle, so releasing pages one by one needs one handle per page.
  // Growth by k page handles (one set-access over the run) against one handle of k pages, and
  // moving a page handle to another address.
  {
    const std::size_t page = 2u << 20;
    const int kMax = 32;
    CUdeviceptr va;
    CUDAKIT_DRIVER_CALL(cuMemAddressReserve, &va, (kMax + 1) * page, 0, 0, 0);
    for (int k : {1, 2, 4, 8, 32}) {
      std::vector<double> by_pages, by_one;
      for (int rep = 0; rep < 5; ++rep) {
        std::vector<CUmemGenericAllocationHandle> hs(k);
        auto t0 = Clock::now();
        for (int p = 0; p < k; ++p) {
          CUDAKIT_DRIVER_CALL(cuMemCreate, &hs[p], page, &prop, 0);
          CUDAKIT_DRIVER_CALL(cuMemMap, va + p * page, page, 0, hs[p], 0);
        }
        CUDAKIT_DRIVER_CALL(cuMemSetAccess, va, k * page, &access, 1);
        by_pages.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        for (int p = 0; p < k; ++p) {
          CUDAKIT_DRIVER_CALL(cuMemUnmap, va + p * page, page);
          CUDAKIT_DRIVER_CALL(cuMemRelease, hs[p]);
        }
        CUmemGenericAllocationHandle one;
        t0 = Clock::now();
        CUDAKIT_DRIVER_CALL(cuMemCreate, &one, k * page, &prop, 0);
        CUDAKIT_DRIVER_CALL(cuMemMap, va, k * page, 0, one, 0);
        CUDAKIT_DRIVER_CALL(cuMemSetAccess, va, k * page, &access, 1);
        by_one.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        CUDAKIT_DRIVER_CALL(cuMemUnmap, va, k * page);
        CUDAKIT_DRIVER_CALL(cuMemRelease, one);
      }
      std::printf("growth by %2d pages: %2d page handles %7.1f us, one handle %6.1f us\n", k, k,
                  median(by_pages), median(by_one));
    }
    CUmemGenericAllocationHandle h;
    CUDAKIT_DRIVER_CALL(cuMemCreate, &h, page, &prop, 0);
    CUDAKIT_DRIVER_CALL(cuMemMap, va, page, 0, h, 0);
    CUDAKIT_DRIVER_CALL(cuMemSetAccess, va, page, &access, 1);
    int at = 0;
    const double move_us = median_us(15, [&] {
      const int to = 1 - at;
      CUDAKIT_DRIVER_CALL(cuMemUnmap, va + at * page, page);
      CUDAKIT_DRIVER_CALL(cuMemMap, va + to * page, page, 0, h, 0);
      CUDAKIT_DRIVER_CALL(cuMemSetAccess, va + to * page, page, &access, 1);
      at = to;
    });
    CUDAKIT_DRIVER_CALL(cuMemUnmap, va + at * page, page);
    CUDAKIT_DRIVER_CALL(cuMemRelease, h);
    // Mapping a handle at an offset would let one handle per growth be mapped (and unmapped) page
    // by page; the CUDA 13.0 driver refuses it.
    CUDAKIT_DRIVER_CALL(cuMemCreate, &h, 2 * page, &prop, 0);
    const CUresult offset_map = drv.cuMemMap(va, page, page, h, 0);
    if (offset_map == CUDA_SUCCESS) CUDAKIT_DRIVER_CALL(cuMemUnmap, va, page);
    CUDAKIT_DRIVER_CALL(cuMemRelease, h);
    const char* why = nullptr;
    if (offset_map != CUDA_SUCCESS && drv.cuGetErrorName) drv.cuGetErrorName(offset_map, &why);
    std::printf("moving one page handle (unmap + map + set access) %.1f us; mapping at an offset: %s\n",
                move_us, offset_map == CUDA_SUCCESS ? "supported" : (why ? why : "refused"));
    CUDAKIT_DRIVER_CALL(cuMemAddressFree, va, (kMax + 1) * page);
  }
  return 0;
}
