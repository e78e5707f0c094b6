#pragma once
// @brief The memory snapshot viewer: one self-contained HTML page (the counterpart of PyTorch's
// MemoryViz / pytorch.org/memory_viz) for a snapshot in torch.cuda.memory._snapshot()'s schema,
// so snapshots written by cudakit and by PyTorch both render.

#include <string>
#include <string_view>

namespace cudakit::memory {

// Renders `snapshot_json` (a JSON object with "segments", "device_traces" and optionally
// "allocator_settings", "device_stats", "cudakit_version") as one
// HTML file with inline CSS and JavaScript and no network references: a summary header, the
// active-memory timeline built from the trace events and the segment map, every allocation and
// block hoverable with its size, address, stream and stack frames. The snapshot is validated and
// embedded in the page; the page draws itself when opened.
// @param snapshot_json the snapshot as JSON (snapshot_to_json() or PyTorch's, converted).
// @return the whole HTML page.
// @throws InvalidArgumentError when the input is not JSON or does not follow the schema; the
//         message names the offending key by its path, e.g. "segments[1].blocks[3].size".
[[nodiscard]] std::string render_memviz_html(std::string_view snapshot_json);

}  // namespace cudakit::memory
