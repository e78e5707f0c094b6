// Device probe (not part of the build): what one growth of an expandable arena costs the driver
// (cuMemCreate, cuMemMap, cuMemSetAccess), by size, for chunks created plain and created
// exportable as POSIX file descriptors (Note [Exportable chunks]), alternating in one process;
// the medians of seven growths in microseconds, and cudaMalloc of the same size beside them.
//   g++ -O2 -std=c++20 -I/usr/local/cuda/include probe/growth_cost.cpp -L/usr/local/cuda/lib64 -lcudart \
//       -o /tmp/growth_cost && /tmp/growth_cost
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;
double us_since(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
template <class F>
F entry(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found);
  return reinterpret_cast<F>(fn);
}
}  // namespace

int main() {
  cudaSetDevice(0);
  cudaFree(nullptr);
  auto create = entry<decltype(&cuMemCreate)>("cuMemCreate");
  auto release = entry<decltype(&cuMemRelease)>("cuMemRelease");
  auto reserve = entry<decltype(&cuMemAddressReserve)>("cuMemAddressReserve");
  auto unreserve = entry<decltype(&cuMemAddressFree)>("cuMemAddressFree");
  auto map = entry<decltype(&cuMemMap)>("cuMemMap");
  auto unmap = entry<decltype(&cuMemUnmap)>("cuMemUnmap");
  auto set_access = entry<decltype(&cuMemSetAccess)>("cuMemSetAccess");
  const std::size_t max_bytes = std::size_t{512} << 20;
  CUdeviceptr va = 0;
  if (reserve(&va, max_bytes, 2 << 20, 0, 0) != CUDA_SUCCESS) return 1;
  std::printf("%8s %10s %10s %10s %10s %10s | %10s\n", "MiB", "handles", "create", "map", "access", "total",
              "cudaMalloc");
  for (std::size_t mib : {2, 20, 64, 256, 512}) {
    const std::size_t bytes = mib << 20;
    for (int exportable = 0; exportable < 2; ++exportable) {
      std::vector<double> c, m, a, t, cm;
      for (int rep = 0; rep < 7; ++rep) {
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = 0;
        if (exportable) prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        CUmemGenericAllocationHandle h = 0;
        auto t0 = Clock::now();
        if (create(&h, bytes, &prop, 0) != CUDA_SUCCESS) return 2;
        c.push_back(us_since(t0));
        auto t1 = Clock::now();
        map(va, bytes, 0, h, 0);
        m.push_back(us_since(t1));
        CUmemAccessDesc access{};
        access.location = prop.location;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        auto t2 = Clock::now();
        set_access(va, bytes, &access, 1);
        a.push_back(us_since(t2));
        t.push_back(us_since(t0));
        unmap(va, bytes);
        release(h);
        void* p = nullptr;
        auto t3 = Clock::now();
        cudaMalloc(&p, bytes);
        cm.push_back(us_since(t3));
        cudaFree(p);
      }
      std::printf("%8zu %10s %10.1f %10.1f %10.1f %10.1f | %10.1f\n", mib, exportable ? "posix_fd" : "none",
                  median(c), median(m), median(a), median(t), median(cm));
    }
  }
  unreserve(va, max_bytes);
  return 0;
}
