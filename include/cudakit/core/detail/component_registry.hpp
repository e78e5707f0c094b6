#pragma once
// The rows of `cudakit info` that layers above core contribute: the versions of the libraries
// they own and the features those make work. See Note [Components registered by their layer].

#include <vector>

#include "cudakit/core/detail/library_table.hpp"
#include "cudakit/core/runtime_info.hpp"

namespace cudakit::detail {

// Note [Components registered by their layer]
// component_versions() and feature_support() (runtime_info.hpp) list what cudakit uses on this
// machine. Core reaches only its own libraries (the driver, the runtime, CUPTI, NVML); a library
// that one layer above uses is that layer's: tensor links cuBLAS, jiterator loads NVRTC, nccl
// NCCL, gds cuFile, each through its own table (See Note [Optional library tables]). Such a
// layer registers its rows with core here, from a namespace-scope ComponentRegistration or
// FeatureRegistration in the file that holds the library's table or handle, so that core
// neither links nor names it. The rows keep a fixed order by `rank` (core's own rows have ranks
// too), whatever the order in which static initialization runs.
//
// Registrations run while libcudakit loads (before main for a program linked to it). With a
// static libcudakit the linker keeps a layer's object file only where the program uses it, so a
// program lists the libraries of the layers it uses, which is what it depends on.

// Ranks: the order in which `cudakit info` prints the rows.
namespace component_rank {
inline constexpr int cudakit = 0, driver = 10, runtime = 20, cublas = 30, nvrtc = 40, nccl = 50,
                     cupti = 60, cufile = 70, nvml = 80;
}  // namespace component_rank
namespace feature_rank {
inline constexpr int graph_tools_ids = 0, gpudirect_storage = 10, green_contexts = 20,
                     virtual_memory = 30, ipc_events = 40, telemetry = 50;
}  // namespace feature_rank

// A component's row: its version, and where it was found or why not.
using ComponentRow = ComponentVersion (*)();
// Appends a layer's feature rows (one or several).
using FeatureRows = void (*)(std::vector<FeatureSupport>& rows);

// Registers `row` at `rank`. Construct one at namespace scope; it never throws.
struct ComponentRegistration {
  ComponentRegistration(int rank, ComponentRow row) noexcept;
};
// Registers `rows` at `rank`. Construct one at namespace scope; it never throws.
struct FeatureRegistration {
  FeatureRegistration(int rank, FeatureRows rows) noexcept;
};

// The registered rows, in order of rank (registration order among equal ranks).
std::vector<ComponentVersion> registered_components();
std::vector<FeatureSupport> registered_features();

// An optional library's row from its table's status: its version ("unknown" where it loaded and
// cannot say), and the file that loaded or why none did.
ComponentVersion library_row(const LibraryStatus& status);

}  // namespace cudakit::detail
