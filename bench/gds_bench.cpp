// gds_bench: GdsFile against the disk itself and against a plain POSIX read + cudaMemcpy, on one
// file, in one run. Prints one JSON line per measurement (bench/gds_table.py makes the table).
//
//   gds_bench [--dir DIR] [--gib N] [--sweep] [--keep]
//
// The disk's own O_DIRECT bandwidth is measured first (8 threads of 8 MiB O_DIRECT preads or
// pwrites into host memory: no GPU in the way), so that cudakit's figures are ratios against it.
// Cold-cache cases drop the file from the page cache with posix_fadvise(DONTNEED) after an fsync
// and report how much of it stayed resident (mincore). The file is deleted at the end unless
// --keep.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cudakit/core/device.hpp"
#include "cudakit/core/runtime_info.hpp"
#include "cudakit/gds/gds_file.hpp"
#include "cudakit/gds/safetensors.hpp"
#include "cudakit/tensor/factories.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using cudakit::gds::GdsFile;
using cudakit::gds::ColdReads;
using cudakit::gds::GdsOptions;
using cudakit::gds::IoReport;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "gds_bench: %s: %s\n", what.c_str(), std::strerror(errno));
    std::exit(1);
  }
}

void emit(const std::string& name, const std::string& impl, std::size_t bytes, double seconds,
          nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json line = {{"bench", "gds"}, {"case", name}, {"impl", impl}, {"bytes", bytes},
                         {"seconds", seconds}, {"gbps", seconds > 0 ? bytes / seconds / 1e9 : 0.0}};
  line.update(extra);
  std::printf("%s\n", line.dump().c_str());
  std::fflush(stdout);
}

void emit_report(const std::string& name, const IoReport& report, nlohmann::json extra = nlohmann::json::object()) {
  extra["path"] = cudakit::gds::to_string(report.path);
  extra["direct_bytes"] = report.direct_bytes;
  extra["buffered_bytes"] = report.buffered_bytes;
  extra["io_threads"] = report.io_threads;
  extra["chunk_bytes"] = report.chunk_bytes;
  extra["note"] = report.note;
  emit(name, "cudakit", report.bytes, report.seconds, extra);
}

// The fraction of the file's pages in the page cache.
double resident_fraction(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  check(fd >= 0, "open " + path.string());
  struct stat info {};
  ::fstat(fd, &info);
  const std::size_t size = static_cast<std::size_t>(info.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return -1;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> pages((size + page - 1) / page);
  double fraction = -1;
  if (::mincore(map, size, pages.data()) == 0) {
    std::size_t resident = 0;
    for (unsigned char p : pages) resident += p & 1;
    fraction = pages.empty() ? 0.0 : static_cast<double>(resident) / static_cast<double>(pages.size());
  }
  ::munmap(map, size);
  return fraction;
}

// Drops the file from the page cache; returns what stayed resident.
double drop_cache(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  check(fd >= 0, "open " + path.string());
  ::fsync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return resident_fraction(path);
}

// The disk's O_DIRECT bandwidth: `threads` threads, `chunk`-byte requests, host memory.
double raw_direct(const std::filesystem::path& path, std::size_t bytes, bool write, int threads = 8,
                  std::size_t chunk = 8u << 20) {
  const int fd = ::open(path.c_str(), (write ? O_WRONLY | O_CREAT : O_RDONLY) | O_DIRECT | O_CLOEXEC, 0644);
  check(fd >= 0, "open O_DIRECT " + path.string());
  std::atomic<std::size_t> next{0};
  const std::size_t chunks = (bytes + chunk - 1) / chunk;
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      void* buffer = std::aligned_alloc(4096, chunk);
      std::memset(buffer, 0x5A + t, chunk);
      for (std::size_t i; (i = next.fetch_add(1)) < chunks;) {
        const std::size_t n = std::min(chunk, bytes - i * chunk);
        const ssize_t done = write ? ::pwrite(fd, buffer, n, static_cast<off_t>(i * chunk))
                                   : ::pread(fd, buffer, n, static_cast<off_t>(i * chunk));
        check(done == static_cast<ssize_t>(n), write ? "pwrite O_DIRECT" : "pread O_DIRECT");
      }
      std::free(buffer);
    });
  }
  for (auto& thread : pool) thread.join();
  if (write) ::fsync(fd);
  const double seconds = since(start);
  ::close(fd);
  return seconds;
}

// The plain way: read(2) into pageable memory (one thread), then cudaMemcpy.
double posix_load(const std::filesystem::path& path, std::size_t bytes, void* device, bool pinned_buffer) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  check(fd >= 0, "open " + path.string());
  void* host = nullptr;
  if (pinned_buffer) cudaHostAlloc(&host, bytes, cudaHostAllocDefault);
  else host = std::malloc(bytes);
  std::memset(host, 0, bytes);  // fault the pages in outside the timing
  const auto start = Clock::now();
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t got = ::read(fd, static_cast<char*>(host) + done, bytes - done);
    check(got > 0, "read");
    done += static_cast<std::size_t>(got);
  }
  cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice);
  const double seconds = since(start);
  if (pinned_buffer) cudaFreeHost(host);
  else std::free(host);
  ::close(fd);
  return seconds;
}

double posix_save(const std::filesystem::path& path, std::size_t bytes, const void* device) {
  void* host = std::malloc(bytes);
  std::memset(host, 0, bytes);
  const auto start = Clock::now();
  cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(fd >= 0, "open " + path.string());
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t put = ::write(fd, static_cast<char*>(host) + done, bytes - done);
    check(put > 0, "write");
    done += static_cast<std::size_t>(put);
  }
  ::fsync(fd);
  const double seconds = since(start);
  ::close(fd);
  std::free(host);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path dir = "/tmp";
  double gib = 4;
  bool sweep = false, keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (arg == "--gib" && i + 1 < argc) gib = std::atof(argv[++i]);
    else if (arg == "--sweep") sweep = true;
    else if (arg == "--keep") keep = true;
    else {
      std::fprintf(stderr, "gds_bench: unknown argument %s (takes --dir DIR, --gib N, --sweep, --keep)\n", arg.c_str());
      return 2;
    }
  }
  if (!cudakit::is_available()) {
    std::printf("no CUDA device: GPU benchmarks skipped\n");
    return 0;
  }
  const std::size_t bytes = static_cast<std::size_t>(gib * (1ull << 30)) / 4096 * 4096;
  const auto file = dir / "cudakit_gds_bench.bin";
  const auto out = dir / "cudakit_gds_bench_out.bin";
  const auto checkpoint = dir / "cudakit_gds_bench.safetensors";
  const bool root = ::geteuid() == 0;
  emit("setup", "info", bytes, 0,
       {{"dir", dir.string()}, {"root", root}, {"nvidia_fs", cudakit::nvidia_fs_version()},
        {"note", root ? "" : "not root: posix_fadvise(DONTNEED) drops only clean pages of files we may read; resident fraction reported"}});

  // The disk itself.
  emit("disk_odirect_write", "disk", bytes, raw_direct(file, bytes, true));
  emit("disk_odirect_read", "disk", bytes, raw_direct(file, bytes, false), {{"resident_before", drop_cache(file)}});

  void* device = nullptr;
  if (cudaMalloc(&device, bytes) != cudaSuccess) {
    std::fprintf(stderr, "gds_bench: cannot allocate %zu bytes of device memory\n", bytes);
    return 1;
  }
  cudaMemset(device, 0x11, bytes);
  cudaDeviceSynchronize();
  GdsOptions options = GdsOptions::from_environment();
  {
    GdsFile gds(file, O_RDONLY, options);
    emit("setup", "cudakit", 0, 0, {{"file_system", gds.file_system()}, {"o_direct", gds.o_direct_status()},
                                    {"cufile", gds.cufile_status()}, {"chunk_bytes", gds.tuning().chunk_bytes},
                                    {"io_threads", gds.tuning().io_threads}});
    for (int rep = 0; rep < 2; ++rep) {
      const double resident = drop_cache(file);
      emit_report("cold_load", gds.load(device, bytes, 0), {{"resident_before", resident}, {"rep", rep}});
    }
    // Each way of reading cold chunks forced (Note [Cold reads through the page cache]): what the
    // automatic choice above chose between.
    for (const auto& [name, reads] : {std::pair{"cold_load_odirect", ColdReads::direct},
                                      std::pair{"cold_load_buffered", ColdReads::buffered}}) {
      GdsOptions forced = options;
      forced.cold_reads = reads;
      GdsFile forced_file(file, O_RDONLY, forced);
      const double resident = drop_cache(file);
      emit_report(name, forced_file.load(device, bytes, 0), {{"resident_before", resident}});
    }
    const double resident_cold = drop_cache(file);
    emit("cold_load", "posix_read_cudaMemcpy", bytes, posix_load(file, bytes, device, false), {{"resident_before", resident_cold}});
    // Warm: the plain read above left the file in the page cache.
    for (int rep = 0; rep < 3; ++rep) {
      emit_report("warm_load", gds.load(device, bytes, 0), {{"resident_before", resident_fraction(file)}, {"rep", rep}});
    }
    emit("warm_load", "posix_read_cudaMemcpy", bytes, posix_load(file, bytes, device, false), {{"resident_before", resident_fraction(file)}});
    emit("warm_load", "posix_read_pinned_cudaMemcpy", bytes, posix_load(file, bytes, device, true), {{"resident_before", resident_fraction(file)}});
  }
  {
    GdsOptions save_options = options;
    save_options.fsync = true;
    for (int rep = 0; rep < 2; ++rep) {
      std::filesystem::remove(out);
      GdsFile gds(out, O_RDWR | O_CREAT | O_TRUNC, save_options);
      emit_report("save", gds.save(device, bytes, 0), {{"fsync", true}, {"rep", rep}});
    }
    std::filesystem::remove(out);
    emit("save", "cudaMemcpy_posix_write", bytes, posix_save(out, bytes, device), {{"fsync", true}});
    std::filesystem::remove(out);
  }
  // A checkpoint: 64 tensors of bytes/64 (bf16), saved and loaded through safetensors.
  {
    namespace tensor = cudakit::tensor;
    std::map<std::string, tensor::Tensor> tensors;
    const std::int64_t elements = static_cast<std::int64_t>(bytes / 64 / 2);
    for (int i = 0; i < 64; ++i) {
      tensors.emplace("layers." + std::to_string(i) + ".weight",
                      tensor::full({elements}, i, {.dtype = tensor::DType::bfloat16, .device = tensor::Device::cuda(0)}));
    }
    const IoReport saved = cudakit::gds::save_safetensors(checkpoint, tensors, {}, {.atomic = true}, options);
    emit_report("safetensors_save", saved);
    tensors.clear();
    const double resident = drop_cache(checkpoint);
    const auto start = Clock::now();
    const auto loaded = cudakit::gds::load_safetensors(checkpoint, tensor::Device::cuda(0), options);
    cudaDeviceSynchronize();
    nlohmann::json extra = {{"resident_before", resident}, {"tensors", loaded.tensors.size()}};
    emit_report("safetensors_cold_load", loaded.report, extra);
    emit("safetensors_cold_load_total", "cudakit", loaded.report.bytes, since(start), extra);
  }
  if (sweep) {
    const std::size_t sweep_bytes = std::min<std::size_t>(bytes, 1ull << 30);
    for (std::size_t chunk : {1u << 20, 4u << 20, 8u << 20, 16u << 20, 32u << 20}) {
      for (int threads : {1, 2, 4, 8, 16}) {
        GdsOptions o = options;
        o.chunk_bytes = chunk;
        o.io_threads = threads;
        GdsFile gds(file, O_RDONLY, o);
        const double resident = drop_cache(file);
        emit_report("sweep_cold_load", gds.load(device, sweep_bytes, 0), {{"resident_before", resident}});
        emit_report("sweep_warm_load", gds.load(device, sweep_bytes, 0), {{"resident_before", resident_fraction(file)}});
        // Cold chunks through the page cache whatever the automatic choice found (torch's one
        // buffered read into pinned memory is the peer of the cold rows): which chunk size and
        // thread count the disk's read-ahead serves best.
        GdsOptions buffered = o;
        buffered.cold_reads = ColdReads::buffered;
        GdsFile buffered_file(file, O_RDONLY, buffered);
        const double resident_buffered = drop_cache(file);
        emit_report("sweep_cold_load_buffered", buffered_file.load(device, sweep_bytes, 0),
                    {{"resident_before", resident_buffered}});
      }
    }
  }
  cudaFree(device);
  if (!keep) {
    std::filesystem::remove(file);
    std::filesystem::remove(checkpoint);
  }
  return 0;
}
