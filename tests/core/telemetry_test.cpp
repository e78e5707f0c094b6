// Telemetry without a GPU: the error where NVML is absent, bad ordinals and UUIDs refused before
// NVML is asked, and the libcudakit check on /proc/<pid>/maps text.
#include "cudakit/core/telemetry.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/detail/nvml_session.hpp"
#include "cudakit/core/detail/nvml_api.hpp"
#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/nvml_error.hpp"
#include "cudakit/core/runtime_info.hpp"

namespace {

using cudakit::InvalidArgumentError;
using cudakit::NvmlError;
using cudakit::NvmlUnavailableError;

constexpr const char* kWellFormedUuid = "GPU-5c4f1e2a-9b1d-4e7a-8c3f-0a1b2c3d4e5f";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Each telemetry function, by ordinal and by UUID, with the name its errors carry.
struct Query {
  const char* api;
  std::function<void()> by_ordinal;
  std::function<void()> by_uuid;
};
std::vector<Query> every_query(int ordinal, const std::string& uuid) {
  using namespace cudakit;
  return {
      {"device_memory_used", [=] { (void)device_memory_used(ordinal); }, [=] { (void)device_memory_used(uuid); }},
      {"memory_usage", [=] { (void)memory_usage(ordinal); }, [=] { (void)memory_usage(uuid); }},
      {"utilization", [=] { (void)utilization(ordinal); }, [=] { (void)utilization(uuid); }},
      {"temperature", [=] { (void)temperature(ordinal); }, [=] { (void)temperature(uuid); }},
      {"power_draw", [=] { (void)power_draw(ordinal); }, [=] { (void)power_draw(uuid); }},
      {"clock_rate", [=] { (void)clock_rate(ordinal); }, [=] { (void)clock_rate(uuid); }},
      {"list_gpu_processes", [=] { (void)list_gpu_processes(ordinal); }, [=] { (void)list_gpu_processes(uuid); }},
  };
}

TEST(Telemetry, WithoutNvmlEveryQuerySaysWhyNvmlIsNotAvailable) {
  const cudakit::detail::NvmlSession& session = cudakit::detail::nvml_session();
  if (session.api != nullptr) GTEST_SKIP() << "NVML is here: the GPU tier checks the readings";
  ASSERT_FALSE(session.reason.empty());
  const std::string expected = "NVML is not available: " + session.reason;
  auto expect_unavailable = [&](const char* api, const std::function<void()>& query) {
    try {
      query();
      ADD_FAILURE() << api << " did not throw";
    } catch (const NvmlUnavailableError& e) {
      EXPECT_EQ(e.api(), api);
      EXPECT_TRUE(contains(e.what(), expected)) << e.what();
      EXPECT_EQ(e.reason(), session.reason);
      EXPECT_EQ(e.status(), session.status);
      EXPECT_NE(e.status(), 0);
    }
  };
  for (const Query& q : every_query(-1, kWellFormedUuid)) {
    expect_unavailable(q.api, q.by_ordinal);
    expect_unavailable(q.api, q.by_uuid);
  }
  expect_unavailable("read_device_telemetry", [] { (void)cudakit::read_device_telemetry(); });
  if (!cudakit::detail::nvml_api().status.loaded) {
    // The library itself is missing (this machine, CI): the reason names what was tried.
    EXPECT_EQ(session.status, cudakit::detail::NVML_ERROR_LIBRARY_NOT_FOUND);
    EXPECT_TRUE(contains(session.reason, "libnvidia-ml.so.1")) << session.reason;
  }
}

TEST(TelemetryThreads, ConcurrentFirstUsesShareOneSession) {
  // NVML is initialized once, by whichever thread comes first; the others wait and see the same.
  std::vector<const cudakit::detail::NvmlSession*> seen(8, nullptr);
  std::vector<std::string> errors(seen.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] {
      seen[i] = &cudakit::detail::nvml_session();
      try {
        (void)cudakit::temperature(-1);
      } catch (const cudakit::Error& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i], seen[0]);
    EXPECT_EQ(errors[i], errors[0]);  // the same answer in every thread
  }
}

TEST(Telemetry, UnavailableIsAnNvmlErrorAndAStdException) {
  try {
    throw NvmlUnavailableError(cudakit::detail::NVML_ERROR_DRIVER_NOT_LOADED, "temperature",
                               "no driver is loaded");
  } catch (const std::runtime_error& e) {
    const auto* nvml = dynamic_cast<const NvmlError*>(&e);
    ASSERT_NE(nvml, nullptr);
    EXPECT_EQ(nvml->status(), 9);
    EXPECT_TRUE(contains(e.what(), "temperature: ")) << e.what();
    EXPECT_TRUE(contains(e.what(), "NVML is not available: no driver is loaded")) << e.what();
  }
}

TEST(Telemetry, CudaInfoSaysWhetherTelemetryWorksAndWhy) {
  const cudakit::detail::NvmlSession& session = cudakit::detail::nvml_session();
  bool found = false;
  for (const cudakit::FeatureSupport& f : cudakit::feature_support()) {
    if (f.name != "device telemetry (NVML)") continue;
    found = true;
    EXPECT_EQ(f.supported, session.api != nullptr);
    if (!f.supported) {
      EXPECT_EQ(f.detail, "NVML is not available: " + session.reason);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Telemetry, OrdinalsBelowMinusOneAreRefusedWithTheValue) {
  for (const Query& q : every_query(-2, kWellFormedUuid)) {
    try {
      q.by_ordinal();
      ADD_FAILURE() << q.api << "(-2) did not throw";
    } catch (const InvalidArgumentError& e) {
      EXPECT_EQ(e.api(), q.api);
      EXPECT_TRUE(contains(e.what(), "device ordinal -2 is out of range")) << e.what();
    }
  }
}

TEST(Telemetry, MalformedUuidsAreRefusedWithTheText) {
  const std::vector<std::string> malformed = {
      "",
      "GPU-",
      "0",
      "5c4f1e2a-9b1d-4e7a-8c3f-0a1b2c3d4e5f",        // no prefix
      "gpu-5c4f1e2a-9b1d-4e7a-8c3f-0a1b2c3d4e5f",    // lower-case prefix
      "GPU-5c4f1e2a-9b1d-4e7a-8c3f-0a1b2c3d4e5",     // one digit short
      "GPU-5c4f1e2a-9b1d-4e7a-8c3f-0a1b2c3d4e5f0",   // one too many
      "GPU-5c4f1e2a9b1d-4e7a-8c3f-0a1b2c3d4e5f-",    // a dash moved
      "GPU-5c4f1e2g-9b1d-4e7a-8c3f-0a1b2c3d4e5f",    // not hexadecimal
      "GPU-5c4f1e2a-9b1d-4e7a-8c3f-0a1b2c3d4e5f\n",
  };
  for (const std::string& uuid : malformed) {
    for (const Query& q : every_query(-1, uuid)) {
      try {
        q.by_uuid();
        ADD_FAILURE() << q.api << "('" << uuid << "') did not throw";
      } catch (const InvalidArgumentError& e) {
        EXPECT_EQ(e.api(), q.api);
        EXPECT_TRUE(contains(e.what(), "'" + uuid + "' is not a GPU UUID")) << e.what();
      }
    }
  }
}

TEST(Telemetry, WellFormedUuidsPassTheSyntaxCheck) {
  EXPECT_NO_THROW(cudakit::detail::check_uuid_syntax(kWellFormedUuid, "t"));
  EXPECT_NO_THROW(cudakit::detail::check_uuid_syntax("GPU-5C4F1E2A-9B1D-4E7A-8C3F-0A1B2C3D4E5F", "t"));
  EXPECT_NO_THROW(cudakit::detail::check_uuid_syntax("MIG-5c4f1e2a-9b1d-4e7a-8c3f-0a1b2c3d4e5f", "t"));
}

TEST(Telemetry, MapsNameLibcudakitOnlyWhereItsFileIsMapped) {
  using cudakit::detail::maps_library;
  const std::string cudakit_line =
      "7f1c2a000000-7f1c2a200000 r-xp 00000000 08:01 1234567                    "
      "/opt/cudakit/lib/libcudakit.so.0.1.0\n";
  const std::string anonymous = "7ffd1b2c0000-7ffd1b2e1000 rw-p 00000000 00:00 0                          [stack]\n"
                                "55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0\n";
  const std::string other =
      "7f1c2b000000-7f1c2b100000 r-xp 00000000 08:01 7654321  /usr/lib/libcudart.so.13\n";
  EXPECT_TRUE(maps_library(anonymous + cudakit_line + other, "libcudakit"));
  EXPECT_TRUE(maps_library("00400000-00452000 r-xp 00000000 08:02 173521 /my dir/libcudakit.so (deleted)",
                           "libcudakit"));
  EXPECT_TRUE(maps_library("00400000-00452000 r-xp 00000000 08:02 173521 /a/libcudakit.so", "libcudakit"));
  EXPECT_FALSE(maps_library(anonymous + other, "libcudakit"));
  EXPECT_FALSE(maps_library("00400000-00452000 r-xp 00000000 08:02 1 /b/libcudakit_test_pluggable.so\n",
                            "libcudakit"));
  EXPECT_FALSE(maps_library("00400000-00452000 r-xp 00000000 08:02 1 /libcudakit/libfoo.so\n", "libcudakit"));
  EXPECT_FALSE(maps_library("00400000-00452000 r-xp 00000000 08:02 1 libcudakit.so\n", "libcudakit"));
  EXPECT_FALSE(maps_library("", "libcudakit"));
  EXPECT_FALSE(maps_library("garbage without fields /libcudakit.so", "libcudakit"));
}

TEST(Telemetry, ThisProcessMapsLibcudakitWhenLinkedAsASharedLibrary) {
  // Where this binary's cudakit code lives: libcudakit.so, or the binary itself when static.
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&cudakit::detail::maps_library), &info), 0);
  const bool shared = contains(info.dli_fname, "libcudakit.");
  const auto maps = cudakit::detail::try_read_text_file("/proc/self/maps");
  ASSERT_TRUE(maps.has_value());
  EXPECT_EQ(cudakit::detail::maps_library(*maps, "libcudakit"), shared) << info.dli_fname;
}

}  // namespace
