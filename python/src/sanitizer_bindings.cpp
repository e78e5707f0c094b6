// The stream sanitizer (torch.cuda._sanitizer's role): enable/disable, its statistics, the
// reports as dicts, and SanitizerError, which carries the refused operation's report.

#include <nanobind/stl/string.h>

#include <string>

#include "common.hpp"
#include "cudakit/sanitizer/sanitizer.hpp"
#include "cudakit/sanitizer/sanitizer_error.hpp"

namespace cudakit::python {
namespace {

namespace san = cudakit::sanitizer;

san::Mode parse_mode(const std::string& mode) {
  if (mode == "throw") return san::Mode::throw_error;
  if (mode == "log") return san::Mode::log;
  if (mode == "abort") return san::Mode::abort;
  throw nb::value_error(("mode: expected 'throw', 'log' or 'abort', got '" + mode + "'").c_str());
}

// The enumerator's name ("read_after_write"), for code that branches on the kind; the report's
// text uses san::to_string's words.
const char* kind_name(san::HazardKind kind) {
  switch (kind) {
    case san::HazardKind::read_after_write: return "read_after_write";
    case san::HazardKind::write_after_read: return "write_after_read";
    case san::HazardKind::write_after_write: return "write_after_write";
    case san::HazardKind::free_while_in_use: return "free_while_in_use";
    case san::HazardKind::use_after_free: return "use_after_free";
    case san::HazardKind::uninitialized_read: return "uninitialized_read";
  }
  return "unknown";
}

const char* access_mode_name(MemoryAccess::Mode mode) {
  switch (mode) {
    case MemoryAccess::Mode::read: return "read";
    case MemoryAccess::Mode::write: return "write";
    case MemoryAccess::Mode::read_write: return "read_write";
  }
  return "unknown";
}

nb::list stack_list(const memory::StackFrames& stack) {
  nb::list frames;
  for (const memory::StackFrame& f : stack) {
    nb::dict frame;
    frame["name"] = f.name;
    frame["filename"] = f.filename;
    frame["line"] = f.line;
    frames.append(frame);
  }
  return frames;
}

nb::dict access_dict(const san::AccessInfo& a) {
  nb::dict d;
  d["operation_id"] = a.operation_id;
  d["kind"] = cudakit::to_string(a.kind);
  d["name"] = a.name;
  d["stream"] = reinterpret_cast<std::uintptr_t>(a.stream);
  d["argument"] = a.argument;
  d["begin"] = a.begin;
  d["bytes"] = a.bytes;
  d["mode"] = access_mode_name(a.mode);
  d["time_ns"] = a.time_ns;
  d["stack"] = stack_list(a.stack);
  return d;
}

nb::dict report_dict(const san::RaceReport& r) {
  nb::dict d;
  d["kind"] = kind_name(r.kind);
  d["description"] = san::to_string(r.kind);
  d["current"] = access_dict(r.current);
  d["previous"] = r.previous ? nb::object(access_dict(*r.previous)) : nb::none();
  d["overlap_begin"] = r.overlap_begin;
  d["overlap_bytes"] = r.overlap_bytes;
  if (r.allocation) {
    nb::dict a;
    a["begin"] = r.allocation->begin;
    a["bytes"] = r.allocation->bytes;
    a["stream"] = reinterpret_cast<std::uintptr_t>(r.allocation->stream);
    a["operation_id"] = r.allocation->operation_id;
    a["time_ns"] = r.allocation->time_ns;
    a["stack"] = stack_list(r.allocation->stack);
    d["allocation"] = a;
  } else {
    d["allocation"] = nb::none();
  }
  d["text"] = r.to_string();
  return d;
}

nb::dict stats_dict(const san::DetectorStats& s) {
  nb::dict d;
  d["operations"] = s.operations;
  d["unchecked_launches"] = s.unchecked_launches;
  d["replayed_operations"] = s.replayed_operations;
  d["hazards"] = s.hazards;
  d["streams"] = s.streams;
  d["shadow_ranges"] = s.shadow_ranges;
  d["stacks"] = s.stacks;
  return d;
}

}  // namespace

void bind_sanitizer(nb::module_& m) {
  // SanitizerError is a RuntimeError whose message is the report's text and whose `report` is
  // the report as a dict (what cudakit.sanitizer.reports() lists). nb::exception makes the type;
  // the translator registered after it (nanobind tries the newest first) adds the report.
  // The module holds the type, so the translator's payload stays valid as long as the module.
  nb::exception<san::SanitizerError> sanitizer_error(m, "SanitizerError", PyExc_RuntimeError);
  nb::register_exception_translator([](const std::exception_ptr& p, void* type) {
    try {
      std::rethrow_exception(p);
    } catch (const san::SanitizerError& e) {
      nb::object error = nb::borrow(static_cast<PyObject*>(type))(e.what());
      error.attr("report") = report_dict(e.report());
      PyErr_SetObject(static_cast<PyObject*>(type), error.ptr());
    }
  }, sanitizer_error.ptr());

  m.def("_sanitizer_enable", [](const std::string& mode, const std::string& stacks, int stack_depth,
                                bool uninitialized_reads) {
        const san::Mode parsed = parse_mode(mode);
        if (stack_depth < 0 || stack_depth > 64) {
          throw nb::value_error(("stack_depth: expected 0..64 frames, got " + std::to_string(stack_depth)).c_str());
        }
        san::enable(parsed, san::DetectorOptions{.stacks = san::parse_stack_capture(stacks),
                                                 .stack_depth = stack_depth,
                                                 .uninitialized_reads = uninitialized_reads});
      }, nb::arg("mode") = "throw", nb::arg("stacks") = "fp", nb::arg("stack_depth") = 24,
      nb::arg("uninitialized_reads") = true,
      "Starts the sanitizer with a fresh model (enabling again changes the mode, keeps the model).");
  m.def("_sanitizer_disable", &san::disable, "Stops the sanitizer; its reports are kept until the next enable.");
  m.def("_sanitizer_is_enabled", &san::enabled);
  m.def("_sanitizer_stats", [] { return stats_dict(san::stats()); });
  m.def("_sanitizer_reports", [] {
        nb::list out;
        for (const san::RaceReport& r : san::reports()) out.append(report_dict(r));
        return out;
      }, "Every report since enable(), in order, as dicts (their 'text' is the printed report).");
}

}  // namespace cudakit::python
