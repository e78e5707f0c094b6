#include "cudakit/memory/ipc/ipc_memory_export.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/memory/cuda_segment_provider.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "memory/ipc/detail/ipc_ref_record.hpp"
#include "memory/ipc/detail/process_identity.hpp"

namespace cudakit::memory {
using cudakit::detail::concat;

namespace {
constexpr const char* kApi = "export_ipc_memory";

// One exported block: its allocator holds it (one external hold) until ipc_collect() finds its
// record unused.
struct Export {
  CachingAllocator* allocator;
  void* ptr;
  detail::IpcRefRecord record;
};

struct Registry {
  std::mutex mutex;
  std::map<std::pair<CachingAllocator*, void*>, std::unique_ptr<Export>> exports;
  std::map<int, std::string> device_uuids;
};

Registry& registry() {
  // Never destroyed: exports may be collected from static destructors.
  static Registry* r = new Registry;
  return *r;
}

// At exit, the names of the records still there go: the exporter's memory goes with it, so no
// later open could succeed, and /dev/shm keeps nothing. Importers that mapped a record keep it.
struct UnlinkAtExit {
  ~UnlinkAtExit() {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    for (auto& [key, e] : r.exports) e->record.unlink();
  }
} g_unlink_at_exit;

std::size_t collect_locked(Registry& r) {
  std::size_t released = 0;
  std::optional<StateError> failure;
  for (auto it = r.exports.begin(); it != r.exports.end();) {
    Export& e = *it->second;
    bool unused = false;
    try {
      unused = e.record.collect();
    } catch (const StateError& error) {
      if (!failure) failure = error;
    }
    if (!unused) {
      ++it;
      continue;
    }
    e.allocator->release_external_hold(e.ptr);
    e.record.unlink();
    it = r.exports.erase(it);
    ++released;
  }
  if (failure) throw *failure;
  return released;
}

const std::string& device_uuid(Registry& r, int device) {
  auto it = r.device_uuids.find(device);
  if (it == r.device_uuids.end()) it = r.device_uuids.emplace(device, get_device_properties(device).uuid).first;
  return it->second;
}

// legacy: the segment's cudaIpcMemHandle_t.
void export_segment(IpcMemoryHandle& h, const CachingAllocator::Backing& b, int device) {
  DeviceGuard guard(device);
  cudaIpcMemHandle_t raw{};
  const cudaError_t status = cudaIpcGetMemHandle(&raw, b.ranges.front().base);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw CudaError(status, "cudaIpcGetMemHandle",
                    concat("the segment at ", b.ranges.front().base, " (", b.ranges.front().size,
                           " bytes) holding the block cannot be shared (memory not from cudaMalloc?)"));
  }
  static_assert(sizeof raw == IpcMemoryHandle::kLegacyHandleBytes);
  std::memcpy(h.legacy_handle.data(), &raw, sizeof raw);
}

// expandable: one descriptor per chunk. See Note [Exportable chunks] in cuda_segment_provider.cpp.
void export_chunks(IpcMemoryHandle& h, const CachingAllocator::Backing& b, CachingAllocator& allocator) {
  const int device = allocator.device();
  const auto* cuda = dynamic_cast<const CudaSegmentProvider*>(&allocator.provider());
  if (!cuda) {
    throw StateError(kApi, concat("the allocator's memory comes from ", allocator.provider().name(),
                                  ", not the driver: its expandable arenas cannot be shared"));
  }
  if (!cuda->exports_file_descriptors()) {
    throw StateError(kApi, concat("device ", device, " cannot export memory as POSIX file descriptors "
                                  "(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED is 0, or "
                                  "cuMemCreate refused such memory): blocks of expandable arenas cannot be "
                                  "shared; set expandable_segments:False to share through cudaIpcGetMemHandle"));
  }
  const auto& drv = cudakit::detail::require_driver(reinterpret_cast<const void*>(cudakit::detail::driver().cuMemExportToShareableHandle),
                                           "cuMemExportToShareableHandle");
  (void)cudakit::detail::require_driver(reinterpret_cast<const void*>(drv.cuMemRetainAllocationHandle),
                               "cuMemRetainAllocationHandle");
  DeviceGuard guard(device);
  for (const CachingAllocator::Backing::Range& range : b.ranges) {
    CUmemGenericAllocationHandle chunk = 0;
    CUDAKIT_DRIVER_CALL(cuMemRetainAllocationHandle, &chunk, range.base);
    int fd = -1;
    const CUresult exported = drv.cuMemExportToShareableHandle(&fd, chunk, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    drv.cuMemRelease(chunk);  // the retain's reference; the mapping keeps the memory
    if (exported != CUDA_SUCCESS) {
      throw CudaError::from_driver(exported, "cuMemExportToShareableHandle",
                                   concat("the chunk at ", range.base, " (", range.size, " bytes) cannot be "
                                          "exported as a file descriptor: was it created before exportable "
                                          "chunks were refused? (See the log; expandable_segments:False "
                                          "shares through cudaIpcGetMemHandle instead)"));
    }
    h.fds.emplace_back(fd);
    h.chunk_sizes.push_back(range.size);
  }
}

}  // namespace

IpcMemoryHandle export_ipc_memory(void* ptr, pid_t importer) {
  CachingAllocator* allocator = device_allocator_owning(ptr);
  if (!allocator) {
    throw InvalidArgumentError(kApi, concat("pointer ", ptr, " was not allocated by cudakit's device allocator"));
  }
  return export_ipc_memory(*allocator, ptr, importer);
}

IpcMemoryHandle export_ipc_memory(CachingAllocator& allocator, void* ptr, pid_t importer) {
  if (importer < 0) throw InvalidArgumentError(kApi, concat("importer pid ", importer, " is negative"));
  const CachingAllocator::Backing backing = allocator.backing(ptr);  // throws for a non-live pointer
  const detail::ProcessId self = detail::self_process();
  if (importer == self.pid) {
    throw InvalidArgumentError(kApi, concat("importer pid ", importer, " is this process: memory is shared with other "
                                            "processes, this one uses the pointer itself"));
  }
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  collect_locked(r);

  IpcMemoryHandle h;
  h.kind = backing.expandable ? IpcMemoryKind::expandable : IpcMemoryKind::legacy;
  h.boot_id = detail::boot_id();
  h.exporter_pid = self.pid;
  h.exporter_start_time = self.start_time;
  h.importer_pid = importer;
  h.device_uuid = device_uuid(r, allocator.device());
  h.size = backing.block_size;
  const auto* first = static_cast<const char*>(backing.ranges.front().base);
  h.offset = static_cast<std::uint64_t>(static_cast<const char*>(backing.block) - first);
  for (const auto& range : backing.ranges) h.mapped_size += range.size;
  if (backing.expandable) export_chunks(h, backing, allocator);
  else export_segment(h, backing, allocator.device());

  const auto key = std::make_pair(&allocator, ptr);
  auto it = r.exports.find(key);
  if (it == r.exports.end()) {
    auto e = std::make_unique<Export>(Export{&allocator, ptr, detail::IpcRefRecord::create(self)});
    try {
      e->record.reserve(importer);
      allocator.add_external_hold(ptr);
    } catch (...) {
      e->record.unlink();
      throw;
    }
    it = r.exports.emplace(key, std::move(e)).first;
  } else {
    it->second->record.reserve(importer);
  }
  h.ref_record = it->second->record.name();
  return h;
}

std::size_t ipc_collect() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return collect_locked(r);
}

std::size_t ipc_exported_blocks() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.exports.size();
}

}  // namespace cudakit::memory
