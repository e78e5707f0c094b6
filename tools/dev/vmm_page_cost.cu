// Development probe (not built by CMake): what VMM calls cost per 2 MiB page on this GPU, to
// decide whether an expandable arena can afford one physical handle per page
// (notes/allocator.md, "Session 4"). Build on the device: nvcc -O2 -o /tmp/vmm tools/dev/vmm_page_cost.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_; cuGetErrorString(r_, &s_); std::printf("%s failed: %s (line %d)\n", #x, s_, __LINE__); return 1; } } while (0)

using Clock = std::chrono::steady_clock;
static double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

int main() {
  cudaFree(nullptr);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t page = 0;
  CK(cuMemGetAllocationGranularity(&page, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  const int n = 256;
  CUdeviceptr va = 0;
  CK(cuMemAddressReserve(&va, size_t(n) * 4 * page, page, 0, 0));
  for (int round = 0; round < 3; ++round) {
    std::vector<CUmemGenericAllocationHandle> h(n);
    // (a) one page at a time: create, map, set access
    double t_create = 0, t_map = 0, t_access = 0, t_unmap = 0, t_release = 0;
    for (int i = 0; i < n; ++i) {
      auto t0 = Clock::now(); CK(cuMemCreate(&h[i], page, &prop, 0));
      auto t1 = Clock::now(); CK(cuMemMap(va + i * page, page, 0, h[i], 0));
      auto t2 = Clock::now(); CK(cuMemSetAccess(va + i * page, page, &access, 1));
      auto t3 = Clock::now();
      t_create += us(t0, t1); t_map += us(t1, t2); t_access += us(t2, t3);
    }
    for (int i = 0; i < n; ++i) {
      auto t0 = Clock::now(); CK(cuMemUnmap(va + i * page, page));
      auto t1 = Clock::now(); CK(cuMemRelease(h[i]));
      auto t2 = Clock::now();
      t_unmap += us(t0, t1); t_release += us(t1, t2);
    }
    std::printf("per page, one at a time: create %.2f us, map %.2f, set access %.2f, unmap %.2f, release %.2f\n",
                t_create / n, t_map / n, t_access / n, t_unmap / n, t_release / n);
    // (b) k pages as k handles, one set-access over the run, vs one handle of k pages
    for (int k : {1, 2, 4, 8, 32}) {
      const int runs = n / k;
      double t_pages = 0, t_chunk = 0, t_free_pages = 0, t_free_chunk = 0;
      for (int r = 0; r < runs; ++r) {
        CUdeviceptr base = va + size_t(r) * k * page;
        auto t0 = Clock::now();
        for (int i = 0; i < k; ++i) {
          CK(cuMemCreate(&h[i], page, &prop, 0));
          CK(cuMemMap(base + i * page, page, 0, h[i], 0));
        }
        CK(cuMemSetAccess(base, size_t(k) * page, &access, 1));
        auto t1 = Clock::now();
        for (int i = 0; i < k; ++i) { CK(cuMemUnmap(base + i * page, page)); CK(cuMemRelease(h[i])); }
        auto t2 = Clock::now();
        CUmemGenericAllocationHandle c;
        CK(cuMemCreate(&c, size_t(k) * page, &prop, 0));
        CK(cuMemMap(base, size_t(k) * page, 0, c, 0));
        CK(cuMemSetAccess(base, size_t(k) * page, &access, 1));
        auto t3 = Clock::now();
        CK(cuMemUnmap(base, size_t(k) * page)); CK(cuMemRelease(c));
        auto t4 = Clock::now();
        t_pages += us(t0, t1); t_free_pages += us(t1, t2); t_chunk += us(t2, t3); t_free_chunk += us(t3, t4);
      }
      std::printf("run of %2d pages: %2d handles + one set access %.1f us (unmap+release %.1f); one handle %.1f us (%.1f)\n",
                  k, k, t_pages / runs, t_free_pages / runs, t_chunk / runs, t_free_chunk / runs);
    }
    // (b2) one handle of k pages mapped page by page (offsets), one set access over the run
    for (int k : {1, 4, 32}) {
      const int runs = n / k;
      double t_map = 0, t_move = 0, t_free = 0;
      for (int r = 0; r < runs; ++r) {
        CUdeviceptr base = va + size_t(r) * k * page;
        auto t0 = Clock::now();
        CUmemGenericAllocationHandle c;
        CK(cuMemCreate(&c, size_t(k) * page, &prop, 0));
        for (int i = 0; i < k; ++i) CK(cuMemMap(base + i * page, page, size_t(i) * page, c, 0));
        CK(cuMemSetAccess(base, size_t(k) * page, &access, 1));
        auto t1 = Clock::now();
        // move the run's first page to the top of the reservation and back
        const CUdeviceptr spare = va + size_t(n) * 4 * page - page;
        CK(cuMemUnmap(base, page));
        CK(cuMemMap(spare, page, 0, c, 0));
        CK(cuMemSetAccess(spare, page, &access, 1));
        auto t2 = Clock::now();
        CK(cuMemUnmap(spare, page));
        CK(cuMemMap(base, page, 0, c, 0));
        CK(cuMemSetAccess(base, page, &access, 1));
        auto t3 = Clock::now();
        for (int i = 0; i < k; ++i) CK(cuMemUnmap(base + i * page, page));
        CK(cuMemRelease(c));
        auto t4 = Clock::now();
        t_map += us(t0, t1); t_move += us(t1, t2) + us(t2, t3); t_free += us(t3, t4);
      }
      std::printf("one handle of %2d pages mapped page by page + one set access %.1f us; move one page %.1f us; unmap all + release %.1f us\n",
                  k, t_map / runs, t_move / runs / 2, t_free / runs);
    }
    // (c) remap an existing handle elsewhere (recycling without create/release)
    {
      CUmemGenericAllocationHandle c;
      CK(cuMemCreate(&c, page, &prop, 0));
      double t = 0; const int m = 64;
      CK(cuMemMap(va, page, 0, c, 0)); CK(cuMemSetAccess(va, page, &access, 1));
      for (int i = 1; i <= m; ++i) {
        auto t0 = Clock::now();
        CK(cuMemUnmap(va + (i - 1) * page, page));
        CK(cuMemMap(va + i * page, page, 0, c, 0));
        CK(cuMemSetAccess(va + i * page, page, &access, 1));
        t += us(t0, Clock::now());
      }
      CK(cuMemUnmap(va + m * page, page)); CK(cuMemRelease(c));
      std::printf("move one page (unmap + map + set access): %.1f us\n", t / m);
    }
  }
  return 0;
}
