#include "cudakit/memory/ipc/ipc_memory.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "memory/ipc/detail/ipc_ref_record.hpp"
#include "memory/ipc/detail/process_identity.hpp"

namespace cudakit::memory {
using cudakit::detail::concat;

namespace {
constexpr const char* kApi = "IpcMemory::open";

int device_with_uuid(const std::string& uuid) {
  const int count = device_count();
  for (int d = 0; d < count; ++d) {
    if (get_device_properties(d).uuid == uuid) return d;
  }
  throw InvalidArgumentError(kApi, concat("the block's device ", uuid, " is not among the ", count,
                                          " CUDA devices this process sees (check CUDA_VISIBLE_DEVICES)"));
}

// Maps the chunks behind the descriptors side by side in a fresh address range; returns its
// base. Nothing stays mapped or reserved when it throws.
char* map_chunks(const IpcMemoryHandle& h, int device) {
  const auto& drv = cudakit::detail::require_driver(reinterpret_cast<const void*>(cudakit::detail::driver().cuMemImportFromShareableHandle),
                                           "cuMemImportFromShareableHandle");
  CUdeviceptr base = 0;
  CUDAKIT_DRIVER_CALL(cuMemAddressReserve, &base, h.mapped_size, 0, 0, 0);
  std::size_t mapped = 0;
  try {
    for (std::size_t i = 0; i < h.chunk_sizes.size(); ++i) {
      CUmemGenericAllocationHandle chunk = 0;
      void* os_handle = reinterpret_cast<void*>(static_cast<std::intptr_t>(h.fds[i].get()));
      CUDAKIT_DRIVER_CALL(cuMemImportFromShareableHandle, &chunk, os_handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
      const CUresult status = drv.cuMemMap(base + mapped, h.chunk_sizes[i], 0, chunk, 0);
      // The mapping keeps the memory alive: the import's reference goes at once.
      drv.cuMemRelease(chunk);
      CUDAKIT_CHECK_DRIVER(status);
      mapped += h.chunk_sizes[i];
    }
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CUDAKIT_DRIVER_CALL(cuMemSetAccess, base, h.mapped_size, &access, 1);
  } catch (...) {
    if (mapped) drv.cuMemUnmap(base, mapped);
    drv.cuMemAddressFree(base, h.mapped_size);
    throw;
  }
  return reinterpret_cast<char*>(base);
}

// Note [One open per legacy segment]
// The driver maps a cudaIpcMemHandle_t once per process: opening the same segment's handle
// again fails, yet two blocks of one segment exported apart carry the same handle. As torch
// does (getIpcDevPtr's cache), opened segments are kept per process with a count of the
// IpcMemory objects using them, and closed when the last one closes.
struct OpenSegment {
  void* base = nullptr;
  std::size_t users = 0;
};
struct OpenSegments {
  std::mutex mutex;
  std::map<std::array<unsigned char, IpcMemoryHandle::kLegacyHandleBytes>, OpenSegment> open;
};
OpenSegments& open_segments() {
  static OpenSegments* segments = new OpenSegments;  // never destroyed: closes may run at exit
  return *segments;
}

char* open_segment(const IpcMemoryHandle& h) {
  OpenSegments& segments = open_segments();
  std::lock_guard lock(segments.mutex);
  OpenSegment& seg = segments.open[h.legacy_handle];
  if (seg.users == 0) {
    cudaIpcMemHandle_t raw{};
    std::memcpy(&raw, h.legacy_handle.data(), sizeof raw);
    const cudaError_t status = cudaIpcOpenMemHandle(&seg.base, raw, cudaIpcMemLazyEnablePeerAccess);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      segments.open.erase(h.legacy_handle);
      throw CudaError(status, "cudaIpcOpenMemHandle",
                      concat("the segment of pid ", h.exporter_pid, " on ", h.device_uuid, " cannot be opened"));
    }
  }
  ++seg.users;
  return static_cast<char*>(seg.base);
}

void close_segment(const std::array<unsigned char, IpcMemoryHandle::kLegacyHandleBytes>& key) {
  OpenSegments& segments = open_segments();
  std::lock_guard lock(segments.mutex);
  auto it = segments.open.find(key);
  if (it == segments.open.end() || --it->second.users > 0) return;
  void* base = it->second.base;
  segments.open.erase(it);
  CUDAKIT_CHECK_CUDA(cudaIpcCloseMemHandle(base));
}

}  // namespace

struct IpcMemory::State {
  IpcMemoryKind kind;
  int device;
  char* base;               // what was mapped
  std::size_t mapped_size;
  char* block;              // base + offset
  std::size_t size;
  detail::ProcessId self;
  detail::IpcRefRecord record;
  std::array<unsigned char, IpcMemoryHandle::kLegacyHandleBytes> segment;  // legacy: its key
};

IpcMemory::IpcMemory(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}

IpcMemory IpcMemory::open(IpcMemoryHandle h) {
  // Everything that needs no GPU is checked first, so that the reason given is the first one.
  if (h.boot_id != detail::boot_id()) {
    throw InvalidArgumentError(kApi, concat("the handle comes from another machine, or from before a reboot: its boot "
                                            "id is ", h.boot_id, ", this machine's is ", detail::boot_id(),
                                            " (CUDA memory is shared only between processes of one machine)"));
  }
  const detail::ProcessId self = detail::self_process();
  if (h.exporter_pid == self.pid && h.exporter_start_time == self.start_time) {
    throw InvalidArgumentError(kApi, "the handle was exported by this process, which uses the pointer itself");
  }
  if (h.kind == IpcMemoryKind::expandable && h.fds.size() != h.chunk_sizes.size()) {
    throw InvalidArgumentError(kApi, concat("an expandable handle of ", h.chunk_sizes.size(), " chunk(s) came with ",
                                            h.fds.size(), " file descriptor(s): its descriptors travel only over a "
                                            "Unix-domain socket (send_ipc_handle / receive_ipc_handle)"));
  }
  detail::IpcRefRecord record = detail::IpcRefRecord::open(h.ref_record, kApi);
  if (!detail::process_alive(record.exporter())) {
    throw StateError(kApi, concat("the exporter (pid ", h.exporter_pid, ") no longer runs"));
  }
  const int device = device_with_uuid(h.device_uuid);
  record.register_open(self, h.importer_pid == self.pid, kApi);
  char* base = nullptr;
  try {
    DeviceGuard guard(device);
    CUDAKIT_CHECK_CUDA(cudaFree(nullptr));  // the primary context, which the driver calls need
    if (h.kind == IpcMemoryKind::legacy) {
      base = open_segment(h);  // See Note [One open per legacy segment].
    } else {
      base = map_chunks(h, device);
    }
  } catch (...) {
    (void)record.unregister_open(self);
    throw;
  }
  h.fds.clear();  // imported: the mapping holds the memory now
  return IpcMemory(std::make_unique<State>(State{h.kind, device, base, static_cast<std::size_t>(h.mapped_size),
                                                 base + h.offset, static_cast<std::size_t>(h.size), self,
                                                 std::move(record), h.legacy_handle}));
}

IpcMemory::~IpcMemory() {
  try {
    close();
  } catch (const std::exception& e) {
    CUDAKIT_LOG(warning, "closing IPC memory failed: ", e.what());
  }
}

IpcMemory::IpcMemory(IpcMemory&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}

IpcMemory& IpcMemory::operator=(IpcMemory&& other) noexcept {
  if (this != &other) {
    try {
      close();
    } catch (const std::exception& e) {
      CUDAKIT_LOG(warning, "closing IPC memory failed: ", e.what());
    }
    state_ = std::exchange(other.state_, nullptr);
  }
  return *this;
}

const IpcMemory::State& IpcMemory::state(const char* api) const {
  if (!state_) throw StateError(api, "this IpcMemory was closed or moved from");
  return *state_;
}

void* IpcMemory::ptr() const { return state("IpcMemory::ptr").block; }
std::size_t IpcMemory::size() const { return state("IpcMemory::size").size; }
int IpcMemory::device() const { return state("IpcMemory::device").device; }
IpcMemoryKind IpcMemory::kind() const { return state("IpcMemory::kind").kind; }

void IpcMemory::close() {
  std::unique_ptr<State> s = std::exchange(state_, nullptr);
  if (!s) return;
  // Unregistered however the unmapping goes: the process no longer uses the memory.
  struct Unregister {
    State& s;
    ~Unregister() {
      if (s.record.unregister_open(s.self)) s.record.unlink();  // the exporter is gone: no one else will
    }
  } unregister{*s};
  DeviceGuard guard(s->device);
  CUDAKIT_CHECK_CUDA(cudaDeviceSynchronize());
  if (s->kind == IpcMemoryKind::legacy) {
    close_segment(s->segment);
  } else {
    const auto ptr = reinterpret_cast<CUdeviceptr>(s->base);
    CUDAKIT_DRIVER_CALL(cuMemUnmap, ptr, s->mapped_size);
    CUDAKIT_DRIVER_CALL(cuMemAddressFree, ptr, s->mapped_size);
  }
}

}  // namespace cudakit::memory
