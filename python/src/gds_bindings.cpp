// GPUDirect Storage: GdsFile (torch.cuda.gds.GdsFile, on any file system: cuFile where it can
// take the file, cudakit's parallel O_DIRECT engine otherwise), its IoReports, and safetensors
// checkpoints read straight into cudakit.Arrays and written from them.

#include <fcntl.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "cudakit/core/runtime_info.hpp"
#include "cudakit/gds/gds_file.hpp"
#include "cudakit/gds/safetensors.hpp"
#include "cudakit/gds/safetensors_index.hpp"
#include "cudakit/gds/save_file.hpp"

namespace cudakit::python {
namespace {

using gds::GdsFile;
using gds::IoReport;

// GdsOptions from the environment, then the keyword arguments: each key is a CUDAKIT_GDS_
// variable's name in lower case (io_threads=4, chunk_bytes="8M", o_direct=False,
// cufile="never"). @throws ValueError for an unknown key or a value that does not parse.
gds::GdsOptions options_from(const nb::kwargs& kwargs) {
  gds::GdsOptions options = gds::GdsOptions::from_environment();
  for (auto [key, value] : kwargs) {
    std::string name = nb::cast<std::string>(key);
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::string text;
    if (PyBool_Check(value.ptr())) text = value.ptr() == Py_True ? "1" : "0";
    else text = nb::cast<std::string>(nb::str(value));
    options.set(name, text);
  }
  return options;
}

// open(2)'s flags: an int (os.O_RDONLY, os.O_RDWR | os.O_CREAT, as torch takes them) or a mode:
// "r" reads, "w" creates or truncates for writing, "r+" reads and writes an existing file.
int open_flags(nb::handle flags) {
  if (PyLong_Check(flags.ptr()) && !PyBool_Check(flags.ptr())) return nb::cast<int>(flags);
  if (nb::isinstance<nb::str>(flags)) {
    const std::string mode = nb::cast<std::string>(flags);
    if (mode == "r") return O_RDONLY;
    if (mode == "w") return O_RDWR | O_CREAT | O_TRUNC;
    if (mode == "r+") return O_RDWR;
  }
  throw nb::value_error(("flags: expected open(2) flags (os.O_RDONLY, ...) or 'r', 'w', 'r+', got " +
                         nb::cast<std::string>(nb::repr(flags))).c_str());
}

const char* direction_name(gds::IoDirection d) { return d == gds::IoDirection::load ? "load" : "save"; }

nb::dict statistics_dict(const gds::IoStatistics& s) {
  nb::dict d;
  for (int i = 0; i < gds::kIoPathCount; ++i) {
    const auto path = static_cast<gds::IoPath>(i);
    nb::dict per;
    per["calls"] = s.of(path).calls;
    per["bytes"] = s.of(path).bytes;
    per["seconds"] = s.of(path).seconds;
    d[gds::to_string(path)] = per;
  }
  d["loads"] = s.loads;
  d["saves"] = s.saves;
  return d;
}

// A batch as Python gives it: (array, file_offset) pairs.
std::vector<gds::TensorAt> batch_of(nb::handle pairs, bool writes, const char* api) {
  std::vector<gds::TensorAt> out;
  for (nb::handle item : pairs) {
    const auto [array, offset] = nb::cast<std::pair<const PyArray*, std::uint64_t>>(item);
    if (array == nullptr) throw nb::type_error((std::string(api) + ": expected (Array, offset) pairs").c_str());
    if (writes) check_writable(*array, api);
    out.push_back({array->tensor, offset});
  }
  return out;
}

nb::dict entry_dict(const gds::SafetensorsEntry& e) {
  nb::dict t;
  t["name"] = e.name;
  t["dtype"] = e.dtype;
  t["element_size"] = e.element_size;
  t["bits"] = e.bits;
  t["cudakit_dtype"] = e.cudakit_dtype ? nb::cast(std::string(tensor::dtype_name(*e.cudakit_dtype))) : nb::none();
  nb::list shape;
  for (std::int64_t s : e.shape) shape.append(s);
  t["shape"] = nb::tuple(shape);
  t["data_offsets"] = nb::make_tuple(e.begin, e.end);
  return t;
}

nb::dict header_dict(const gds::SafetensorsHeader& h) {
  nb::dict d;
  d["header_bytes"] = h.header_bytes;
  d["data_offset"] = h.data_offset;
  d["data_bytes"] = h.data_bytes;
  nb::list tensors;
  for (const gds::SafetensorsEntry& e : h.tensors) tensors.append(entry_dict(e));
  d["tensors"] = tensors;
  d["metadata"] = h.metadata;
  return d;
}

}  // namespace

void bind_gds(nb::module_& m) {
  nb::class_<IoReport>(m, "IoReport", "One GdsFile transfer: the path its bytes took, how many, how fast.")
      .def_prop_ro("path", [](const IoReport& r) { return std::string(gds::to_string(r.path)); },
                   "'cufile_direct', 'cufile_compat', 'cudakit_odirect' or 'buffered'.")
      .def_prop_ro("direction", [](const IoReport& r) { return std::string(direction_name(r.direction)); })
      .def_ro("bytes", &IoReport::bytes)
      .def_ro("direct_bytes", &IoReport::direct_bytes)
      .def_ro("buffered_bytes", &IoReport::buffered_bytes)
      .def_ro("requests", &IoReport::requests)
      .def_ro("io_threads", &IoReport::io_threads)
      .def_ro("chunk_bytes", &IoReport::chunk_bytes)
      .def_ro("seconds", &IoReport::seconds)
      .def_ro("note", &IoReport::note, "Why this path.")
      .def_prop_ro("gigabytes_per_second", &IoReport::gigabytes_per_second)
      .def("__str__", &IoReport::to_string)
      .def("__repr__", [](const IoReport& r) { return "<cudakit.gds.IoReport " + r.to_string() + ">"; });

  nb::class_<gds::IoTicket>(m, "IoTicket", "A GdsFile transfer running on a thread of its own.")
      .def("wait", &gds::IoTicket::wait, nb::call_guard<nb::gil_scoped_release>(),
           "Blocks until the transfer is done; returns its IoReport (once only).")
      .def("ready", &gds::IoTicket::ready);

  nb::class_<GdsFile>(m, "GdsFile",
                      "torch.cuda.gds.GdsFile on any file system: cuFile where it takes the file "
                      "(nvidia-fs present), else cudakit's parallel O_DIRECT engine through pinned "
                      "buffers. Loads into and saves from cudakit.Arrays on the GPU or the host.")
      .def("__init__", [](GdsFile* self, const std::string& filename, nb::handle flags, const nb::kwargs& options) {
            new (self) GdsFile(filename, open_flags(flags), options_from(options));
          }, nb::arg("filename"), nb::arg("flags") = O_RDONLY, nb::arg("options"),
          "flags: os.O_* flags or 'r', 'w', 'r+'; options: CUDAKIT_GDS_* settings by lower-case name "
          "(io_threads=4, chunk_bytes='8M', o_direct=False, cufile='never'|'auto'|'required').")
      .def("load", [](GdsFile& f, const PyArray& a, std::uint64_t offset, const PyStream* s) {
            check_writable(a, "GdsFile.load");
            nb::gil_scoped_release unlocked;
            return f.load(a.tensor, offset, optional_stream(s));
          }, nb::arg("array"), nb::arg("offset") = 0, nb::arg("stream").none() = nb::none(),
          "Reads the array's bytes (contiguous) from `offset` of the file; returns the IoReport.")
      .def("save", [](GdsFile& f, const PyArray& a, std::uint64_t offset, const PyStream* s) {
            nb::gil_scoped_release unlocked;
            return f.save(a.tensor, offset, optional_stream(s));
          }, nb::arg("array"), nb::arg("offset") = 0, nb::arg("stream").none() = nb::none(),
          "Writes the array's bytes at `offset` (the file grows as needed); returns the IoReport.")
      .def("load_batch", [](GdsFile& f, nb::sequence pairs, const PyStream* s) {
            const std::vector<gds::TensorAt> batch = batch_of(pairs, true, "GdsFile.load_batch");
            nb::gil_scoped_release unlocked;
            return f.load_batch(std::span<const gds::TensorAt>(batch), optional_stream(s));
          }, nb::arg("requests"), nb::arg("stream").none() = nb::none(), "Many (array, offset) loads in one call.")
      .def("save_batch", [](GdsFile& f, nb::sequence pairs, const PyStream* s) {
            const std::vector<gds::TensorAt> batch = batch_of(pairs, false, "GdsFile.save_batch");
            nb::gil_scoped_release unlocked;
            return f.save_batch(std::span<const gds::TensorAt>(batch), optional_stream(s));
          }, nb::arg("requests"), nb::arg("stream").none() = nb::none(), "Many (array, offset) saves in one call.")
      .def("load_async", [](GdsFile& f, const PyArray& a, std::uint64_t offset, const PyStream* s) {
            check_writable(a, "GdsFile.load_async");
            return f.load_async(a.tensor, offset, optional_stream(s));
          }, nb::arg("array"), nb::arg("offset") = 0, nb::arg("stream").none() = nb::none(), nb::keep_alive<0, 1>(),
          "load on a thread of its own: do not touch the array until the ticket's wait() returns.")
      .def("save_async", [](GdsFile& f, const PyArray& a, std::uint64_t offset, const PyStream* s) {
            return f.save_async(a.tensor, offset, optional_stream(s));
          }, nb::arg("array"), nb::arg("offset") = 0, nb::arg("stream").none() = nb::none(), nb::keep_alive<0, 1>())
      .def("register_handle", &GdsFile::register_handle, "cuFile registration; False (see cufile_status) where cuFile cannot take the file.")
      .def("deregister_handle", &GdsFile::deregister_handle)
      .def_prop_ro("handle_registered", &GdsFile::handle_registered)
      .def_prop_ro("cufile_status", &GdsFile::cufile_status, "Why cuFile is not used for this file, or 'registered (...)'.")
      .def("register_buffer", [](GdsFile& f, const PyArray& a) { return f.register_buffer(a.tensor.data_ptr(), a.tensor.nbytes()); },
           nb::arg("array"), "cuFileBufRegister (torch's gds_register_buffer); False where the file is not on cuFile's path.")
      .def("deregister_buffer", [](GdsFile& f, const PyArray& a) { f.deregister_buffer(a.tensor.data_ptr()); }, nb::arg("array"))
      .def("sync", &GdsFile::sync, nb::call_guard<nb::gil_scoped_release>(), "fsync(2).")
      .def("size", &GdsFile::size, "The file's size now, in bytes.")
      .def_prop_ro("filename", [](const GdsFile& f) { return f.path().string(); })
      .def_prop_ro("file_system", &GdsFile::file_system)
      .def_prop_ro("o_direct", &GdsFile::o_direct, "Whether an O_DIRECT descriptor is open (o_direct_status says why not).")
      .def_prop_ro("o_direct_status", &GdsFile::o_direct_status)
      .def_prop_ro("tuning", [](const GdsFile& f) {
            const gds::IoTuning& t = f.tuning();
            nb::dict d;
            d["chunk_bytes"] = t.chunk_bytes;
            d["io_threads"] = t.io_threads;
            d["buffers_per_thread"] = t.buffers_per_thread;
            d["alignment"] = t.alignment;
            d["page_cache_check"] = t.page_cache_check;
            d["cold_reads"] = t.cold_reads == gds::ColdReads::direct     ? "direct"
                              : t.cold_reads == gds::ColdReads::buffered ? "buffered"
                                                                         : "auto";
            return d;
          })
      .def("last_io", &GdsFile::last_io, "The last completed call's IoReport.")
      .def("statistics", [](const GdsFile& f) { return statistics_dict(f.statistics()); },
           "Calls, bytes and seconds per path, and the numbers of loads and saves.");

  m.def("_gds_support", [] {
        nb::dict d;
        // feature_support()'s rows about cuFile and nvidia-fs (See runtime_info.hpp).
        for (const FeatureSupport& f : feature_support()) {
          const char* key = f.name.starts_with("GPUDirect Storage") ? "cufile"
                            : f.name.starts_with("nvidia-fs")       ? "nvidia_fs"
                                                                    : nullptr;
          if (key == nullptr) continue;
          nb::dict row;
          row["supported"] = f.supported;
          row["detail"] = f.detail;
          d[key] = row;
        }
        d["nvidia_fs_version"] = nvidia_fs_version();
        return d;
      });

  m.def("_gds_save_safetensors", [](nb::dict tensors, const std::string& filename,
                                    const std::map<std::string, std::string>& metadata, bool atomic, bool fsync,
                                    const PyStream* s, const nb::kwargs& options) {
        std::map<std::string, tensor::Tensor> named;
        for (auto [key, value] : tensors) {
          if (!nb::isinstance<nb::str>(key) || !nb::isinstance<PyArray>(value)) {
            throw nb::type_error(("save_file: expected a dict of str to cudakit.Array, got the item " +
                                  nb::cast<std::string>(nb::repr(key)) + ": " + nb::cast<std::string>(nb::repr(value)))
                                     .c_str());
          }
          named.emplace(nb::cast<std::string>(key), nb::cast<const PyArray&>(value).tensor);
        }
        const gds::GdsOptions parsed = options_from(options);
        nb::gil_scoped_release unlocked;
        return gds::save_safetensors(filename, named, metadata, gds::SaveOptions{.atomic = atomic, .fsync = fsync},
                                     parsed, optional_stream(s));
      }, nb::arg("tensors"), nb::arg("filename"), nb::arg("metadata") = std::map<std::string, std::string>{},
      nb::arg("atomic") = false, nb::arg("fsync") = false, nb::arg("stream").none() = nb::none(), nb::arg("options"));
  m.def("_gds_load_safetensors", [](const std::string& filename, nb::handle device, const PyStream* s, nb::handle dtype,
                                    nb::handle dtypes, bool raw, bool index, bool map_cached, const nb::kwargs& options) {
        const tensor::Device target = parse_device(device);
        const gds::GdsOptions parsed = options_from(options);
        gds::SafetensorsReadOptions read;
        if (!dtype.is_none()) read.dtype = parse_dtype(dtype);
        if (!dtypes.is_none()) {
          for (auto [name, to] : nb::cast<nb::dict>(dtypes)) read.dtypes[nb::cast<std::string>(name)] = parse_dtype(to);
        }
        read.raw_unknown_dtypes = raw;
        read.map_cached_host_file = map_cached;
        gds::SafetensorsLoad loaded;
        {
          nb::gil_scoped_release unlocked;
          loaded = index ? gds::load_safetensors_index(filename, target, read, parsed, optional_stream(s))
                         : gds::load_safetensors(filename, target, read, parsed, optional_stream(s));
        }
        nb::dict arrays;
        for (auto& [name, t] : loaded.tensors) arrays[nb::str(name.data(), name.size())] = PyArray{std::move(t), false};
        nb::dict raw_entries;
        for (const gds::SafetensorsEntry& e : loaded.raw) raw_entries[nb::str(e.name.data(), e.name.size())] = entry_dict(e);
        return nb::make_tuple(arrays, loaded.metadata, loaded.report, raw_entries);
      }, nb::arg("filename"), nb::arg("device").none() = "cpu", nb::arg("stream").none() = nb::none(),
      nb::arg("dtype").none() = nb::none(), nb::arg("dtypes").none() = nb::none(), nb::arg("raw") = false,
      nb::arg("index") = false, nb::arg("map_cached") = true, nb::arg("options"));
  m.def("_gds_parse_safetensors_header", [](nb::bytes data, std::optional<std::uint64_t> file_size) {
        return header_dict(gds::parse_safetensors_header(std::string_view(data.c_str(), data.size()), file_size));
      }, nb::arg("data"), nb::arg("file_size").none() = nb::none(),
      "The header of a safetensors file from its first bytes (8 + the header's length, or more).");
}

}  // namespace cudakit::python
