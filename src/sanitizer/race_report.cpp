#include "cudakit/sanitizer/race_report.hpp"

#include <sstream>

#include "cudakit/sanitizer/sanitizer_error.hpp"

namespace cudakit::sanitizer {

const char* to_string(HazardKind kind) noexcept {
  switch (kind) {
    case HazardKind::read_after_write: return "read-after-write race";
    case HazardKind::write_after_read: return "write-after-read race";
    case HazardKind::write_after_write: return "write-after-write race";
    case HazardKind::free_while_in_use: return "free while in use by another stream";
    case HazardKind::use_after_free: return "use after free";
    case HazardKind::uninitialized_read: return "read of memory nothing wrote";
  }
  return "unknown hazard";
}

namespace {

const char* mode_name(MemoryAccess::Mode mode) {
  switch (mode) {
    case MemoryAccess::Mode::read: return "reads";
    case MemoryAccess::Mode::write: return "writes";
    case MemoryAccess::Mode::read_write: return "reads and writes";
  }
  return "touches";
}

void write_stack(std::ostream& out, const memory::StackFrames& stack) {
  if (stack.empty()) {
    out << "      (no stack: stacks are off)\n";
    return;
  }
  for (const memory::StackFrame& f : stack) out << "      " << f.name << " (" << f.filename << ")\n";
}

void write_access(std::ostream& out, const char* label, const AccessInfo& a) {
  out << "  " << label << ": operation #" << a.operation_id << ", " << to_string(a.kind);
  if (!a.name.empty()) out << " " << a.name;
  out << " on stream " << static_cast<const void*>(a.stream) << " " << mode_name(a.mode);
  if (!a.argument.empty()) out << " argument '" << a.argument << "'";
  out << " [" << reinterpret_cast<const void*>(a.begin) << ", +" << a.bytes << " bytes) at " << a.time_ns / 1000
      << " us\n";
  write_stack(out, a.stack);
}

}  // namespace

std::string RaceReport::to_string() const {
  std::ostringstream out;
  out << "cudakit sanitizer: " << sanitizer::to_string(kind) << " on [" << reinterpret_cast<const void*>(overlap_begin)
      << ", +" << overlap_bytes << " bytes)\n";
  write_access(out, kind == HazardKind::free_while_in_use ? "freed by" : "this access", current);
  if (previous) {
    write_access(out, kind == HazardKind::use_after_free ? "freed by" : "conflicts with", *previous);
    if (kind != HazardKind::use_after_free) {
      out << "  nothing orders the two (no event, stream wait or host synchronization between them";
      out << (kind == HazardKind::free_while_in_use ? ", and no record_stream for that stream)\n" : ")\n");
    }
  }
  if (allocation) {
    out << "  allocated: operation #" << allocation->operation_id << " on stream "
        << static_cast<const void*>(allocation->stream) << ", [" << reinterpret_cast<const void*>(allocation->begin)
        << ", +" << allocation->bytes << " bytes) at " << allocation->time_ns / 1000 << " us\n";
    write_stack(out, allocation->stack);
  } else {
    out << "  allocated: not by the device allocator while the sanitizer ran\n";
  }
  return std::move(out).str();
}

SanitizerError::SanitizerError(RaceReport report, std::source_location location)
    : ErrorOf(0, "sanitizer", report.to_string(), location), report_(std::move(report)) {}

}  // namespace cudakit::sanitizer
