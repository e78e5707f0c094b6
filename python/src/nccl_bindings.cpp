// NCCL collectives over cudakit.Array: the communicator (torch.cuda.nccl's calls and
// torch.distributed's process group in one object), the stores ranks meet in (FileStore,
// TCPStore), ReduceOp, groups, the library's version, and torch.cuda.comm's copies across the
// devices of one process. NCCL is loaded at run time: where it is absent, every call that needs
// it raises cudakit.StateError saying why.

#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "cudakit/nccl/comm.hpp"
#include "cudakit/nccl/communicator.hpp"
#include "cudakit/nccl/store/file_store.hpp"
#include "cudakit/nccl/group.hpp"
#include "cudakit/nccl/reduce_op.hpp"
#include "cudakit/nccl/store/tcp_store.hpp"
#include "cudakit/nccl/unique_id.hpp"
#include "cudakit/nccl/validation.hpp"
#include "cudakit/nccl/version.hpp"

namespace cudakit::python {
namespace {

using nccl::Communicator;
using nccl::ReduceOp;
using nccl::Store;

// A ReduceOp, or its name in any case ("sum", "AVG", "product"/"prod", "min", "max").
ReduceOp to_reduce_op(nb::handle op) {
  if (nb::isinstance<ReduceOp>(op)) return nb::cast<ReduceOp>(op);
  if (nb::isinstance<nb::str>(op)) {
    std::string name = nb::cast<std::string>(op);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name == "sum") return ReduceOp::sum;
    if (name == "product" || name == "prod") return ReduceOp::prod;
    if (name == "min") return ReduceOp::min;
    if (name == "max") return ReduceOp::max;
    if (name == "avg") return ReduceOp::avg;
  }
  throw nb::value_error(("op: expected a ReduceOp or one of 'sum', 'product', 'min', 'max', 'avg', got " +
                         nb::cast<std::string>(nb::repr(op))).c_str());
}

// A timeout as torch takes one: a datetime.timedelta, or seconds as a number. `what` names it.
std::chrono::milliseconds to_milliseconds(nb::handle timeout, const char* what) {
  double seconds = 0;
  if (nb::hasattr(timeout, "total_seconds")) {
    seconds = nb::cast<double>(timeout.attr("total_seconds")());
  } else if ((PyFloat_Check(timeout.ptr()) || PyLong_Check(timeout.ptr())) && !PyBool_Check(timeout.ptr())) {
    seconds = nb::cast<double>(timeout);
  } else {
    throw nb::type_error((std::string(what) + ": expected seconds or a datetime.timedelta, got " +
                          nb::cast<std::string>(nb::repr(timeout))).c_str());
  }
  if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 1e9) {
    throw nb::value_error((std::string(what) + ": expected a positive number of seconds, got " +
                           std::to_string(seconds)).c_str());
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000.0)));
}

// A store value: bytes as they are, str as UTF-8.
std::string store_value(nb::handle value) {
  if (nb::isinstance<nb::bytes>(value)) {
    const nb::bytes b = nb::borrow<nb::bytes>(value);
    return std::string(b.c_str(), b.size());
  }
  if (nb::isinstance<nb::str>(value)) return nb::cast<std::string>(value);
  throw nb::type_error(("store value: expected bytes or str, got " + nb::cast<std::string>(nb::repr(value))).c_str());
}

nb::bytes as_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

nccl::CommunicatorOptions communicator_options(nb::handle timeout, const std::string& name) {
  nccl::CommunicatorOptions options;
  if (!timeout.is_none()) options.timeout = to_milliseconds(timeout, "timeout");
  options.name = name;
  return options;
}

const tensor::Tensor& output_of(const PyArray* output, const PyArray& input, const char* api) {
  if (output == nullptr) {
    check_writable(input, api);
    return input.tensor;
  }
  check_writable(*output, api);
  return output->tensor;
}

// `with cudakit.nccl.group():` — ncclGroupStart at __enter__, ncclGroupEnd at __exit__ (an
// exception leaving the block ends the group without raising a second error).
class GroupScope {
 public:
  void enter() { group_ = std::make_unique<nccl::Group>(); }
  void exit(bool raising) {
    std::unique_ptr<nccl::Group> group = std::move(group_);
    if (group && !raising) group->end();
  }

 private:
  std::unique_ptr<nccl::Group> group_;
};

nb::list flight_records(const Communicator& c) {
  nb::list out;
  for (const nccl::FlightRecord& r : c.flight_recorder().records()) {
    nb::dict d;
    d["seq"] = r.seq;
    d["op"] = r.op;
    d["dtype"] = std::string(nccl::data_type_name(r.dtype));
    d["input_count"] = r.input_count;
    d["output_count"] = r.output_count;
    d["peer"] = r.peer;
    d["stream"] = r.stream;
    d["state"] = std::string(nccl::flight_state_name(r.state));
    d["age_ms"] = r.age_ms;
    out.append(d);
  }
  return out;
}

// The tensors of a sequence of Arrays. @throws TypeError naming `what` for anything else.
std::vector<tensor::Tensor> tensors_of(nb::handle arrays, const char* what) {
  std::vector<tensor::Tensor> out;
  for (nb::handle a : arrays) {
    if (!nb::isinstance<PyArray>(a)) {
      throw nb::type_error((std::string(what) + ": expected cudakit.Array items, got " +
                            nb::cast<std::string>(nb::repr(a))).c_str());
    }
    out.push_back(nb::cast<const PyArray&>(a).tensor);
  }
  return out;
}

nb::list arrays_of(std::vector<tensor::Tensor> tensors) {
  nb::list out;
  for (tensor::Tensor& t : tensors) out.append(PyArray{std::move(t), false});
  return out;
}

}  // namespace

void bind_nccl(nb::module_& m) {
  nb::enum_<ReduceOp>(m, "ReduceOp", "torch.distributed.ReduceOp's reductions for all_reduce, reduce and reduce_scatter.")
      .value("SUM", ReduceOp::sum)
      .value("PRODUCT", ReduceOp::prod)
      .value("MIN", ReduceOp::min)
      .value("MAX", ReduceOp::max)
      .value("AVG", ReduceOp::avg);

  m.def("_nccl_reduce_op", &to_reduce_op, nb::arg("op"), "The ReduceOp an `op=` argument names (ValueError otherwise).");
  m.def("_nccl_is_available", &nccl::library_loaded, "Whether libnccl loaded with every entry point cudakit needs.");
  m.def("_nccl_is_available_for", [](nb::sequence arrays) {
        return nccl::is_available(tensors_of(arrays, "tensors"));
      }, nb::arg("tensors"), "torch.cuda.nccl.is_available(tensors): NCCL loaded and the arrays fit one collective.");
  m.def("_nccl_version", [] {
        const nccl::NcclVersion v = nccl::version();
        return nb::make_tuple(v.major, v.minor, v.patch);
      }, "(major, minor, patch) of the loaded NCCL (StateError naming why when it is not loaded).");
  m.def("_nccl_version_string", [] { return nccl::version().str(); });
  m.def("_nccl_unique_id", [] { return as_bytes(nccl::unique_id().to_bytes()); },
        "A new NCCL unique id (128 bytes), for init_rank.");

  nb::class_<Store>(m, "Store", "The key-value store the ranks of a communicator meet in (torch.distributed.Store).")
      .def("set", [](Store& s, const std::string& key, nb::handle value) {
            const std::string v = store_value(value);
            nb::gil_scoped_release unlocked;
            s.set(key, v);
          }, nb::arg("key"), nb::arg("value"))
      .def("get", [](Store& s, const std::string& key) {
            std::string value;
            {
              nb::gil_scoped_release unlocked;
              value = s.get(key);
            }
            return as_bytes(value);
          }, nb::arg("key"), "The value of `key` as bytes, waiting up to the store's timeout.")
      .def("add", &Store::add, nb::arg("key"), nb::arg("amount"), nb::call_guard<nb::gil_scoped_release>(),
           "Adds `amount` to the integer at `key` (0 when absent); returns the new value.")
      .def("check", [](Store& s, const std::vector<std::string>& keys) { return s.check(keys); }, nb::arg("keys"))
      .def("wait", [](Store& s, const std::vector<std::string>& keys, nb::handle timeout) {
            const std::chrono::milliseconds limit = timeout.is_none() ? s.timeout() : to_milliseconds(timeout, "timeout");
            nb::gil_scoped_release unlocked;
            s.wait(keys, limit);
          }, nb::arg("keys"), nb::arg("timeout") = nb::none())
      .def_prop_ro("timeout", [](const Store& s) { return static_cast<double>(s.timeout().count()) / 1000.0; },
                   "The default timeout of get and wait, in seconds.")
      .def("set_timeout", [](Store& s, nb::handle timeout) { s.set_timeout(to_milliseconds(timeout, "timeout")); },
           nb::arg("timeout"))
      .def_prop_ro("rank", &Store::rank)
      .def_prop_ro("address", &Store::address);

  nb::class_<nccl::FileStore, Store>(m, "FileStore",
                                     "A store in a directory every rank sees (one file per key); the directory "
                                     "is created. Not torch's single-file FileStore: give a directory.")
      .def("__init__", [](nccl::FileStore* self, const std::string& path, int rank, nb::handle timeout) {
            new (self) nccl::FileStore(path, rank, to_milliseconds(timeout, "timeout"));
          }, nb::arg("path"), nb::arg("rank") = -1, nb::arg("timeout") = 300.0);

  nb::class_<nccl::TcpStore, Store>(m, "TCPStore",
                                    "A TCP store client (torch.distributed.TCPStore); with is_master, this "
                                    "process also hosts the server (port 0: an ephemeral port, see `port`).")
      .def("__init__", [](nccl::TcpStore* self, const std::string& host_name, int port, bool is_master,
                          nb::handle timeout, int rank) {
            if (port < 0 || port > 65535 || (port == 0 && !is_master)) {
              throw nb::value_error(("port: expected 1..65535 (0 only with is_master), got " + std::to_string(port)).c_str());
            }
            const std::chrono::milliseconds limit = to_milliseconds(timeout, "timeout");
            nb::gil_scoped_release unlocked;
            std::shared_ptr<nccl::TcpStoreServer> server;
            if (is_master) server = std::make_shared<nccl::TcpStoreServer>("0.0.0.0", port);
            new (self) nccl::TcpStore(host_name, server ? server->port() : port, rank, limit, server);
          }, nb::arg("host_name"), nb::arg("port"), nb::arg("is_master") = false, nb::arg("timeout") = 300.0,
          nb::arg("rank") = -1)
      .def_prop_ro("port", [](const nccl::TcpStore& s) {
        const std::string address = s.address();  // "tcp://host:port"
        return std::stoi(address.substr(address.rfind(':') + 1));
      });

  nb::class_<Communicator>(m, "Communicator",
                           "One rank of an NCCL communicator over cudakit.Array (torch.cuda.nccl's calls; "
                           "cudakit.nccl.init_process_group makes one as torch.distributed does). Each "
                           "operation is checked before launch (ValueError naming the values), queued on "
                           "`stream` (default: the device's current stream) and watched: a peer that never "
                           "comes raises NcclError after the timeout instead of hanging.")
      .def_static("init_rank", [](int world_size, nb::bytes unique_id, int rank, DeviceIndex device, nb::handle timeout,
                                  const std::string& name, std::shared_ptr<Store> store) {
            const nccl::UniqueId id = nccl::UniqueId::from_bytes(std::string_view(unique_id.c_str(), unique_id.size()));
            const nccl::CommunicatorOptions options = communicator_options(timeout, name);
            nb::gil_scoped_release unlocked;  // initialization waits for every rank
            return Communicator::init_rank(world_size, rank, id, device.value, options, std::move(store));
          }, nb::arg("world_size"), nb::arg("unique_id"), nb::arg("rank"), nb::arg("device") = nb::none(),
          nb::arg("timeout") = nb::none(), nb::arg("name") = "default", nb::arg("store").none() = nb::none(),
          "torch.cuda.nccl.init_rank: rank `rank` of `world_size`, met through `unique_id` (bytes of "
          "cudakit.nccl.unique_id()); `store` carries the flight records on a timeout.")
      .def_static("from_rendezvous", [](int rank, int world_size, int local_rank, const std::string& master_addr,
                                        int master_port, const std::string& store_path, nb::handle store_timeout,
                                        nb::handle timeout, const std::string& name) {
            nccl::RendezvousOptions r;
            r.rank = rank;
            r.world_size = world_size;
            r.local_rank = local_rank;
            r.master_addr = master_addr;
            r.master_port = master_port;
            r.store_path = store_path;
            r.timeout = to_milliseconds(store_timeout, "store_timeout");
            const nccl::CommunicatorOptions options = communicator_options(timeout, name);
            nb::gil_scoped_release unlocked;
            return Communicator::from_rendezvous(r, options);
          }, nb::arg("rank") = -1, nb::arg("world_size") = -1, nb::arg("local_rank") = -1, nb::arg("master_addr") = "",
          nb::arg("master_port") = -1, nb::arg("store_path") = "", nb::arg("store_timeout") = 300.0,
          nb::arg("timeout") = nb::none(), nb::arg("name") = "default",
          "A rank of a multi-process communicator: unset fields (-1, '') from RANK, WORLD_SIZE, LOCAL_RANK, "
          "MASTER_ADDR, MASTER_PORT; store_path: a FileStore directory instead of rank 0's TCP store.")
      .def_static("for_devices", [](const std::vector<int>& devices, nb::handle timeout) {
            const nccl::CommunicatorOptions options = communicator_options(timeout, "default");
            nb::gil_scoped_release unlocked;
            return Communicator::for_devices(devices, options);
          }, nb::arg("devices"), nb::arg("timeout") = nb::none(),
          "One communicator per device in this process, rank i on devices[i] (cached per list).")
      .def("split", [](const Communicator& c, int color, int key, nb::handle timeout, const std::string& name) {
            const nccl::CommunicatorOptions options = communicator_options(timeout, name);
            nb::gil_scoped_release unlocked;
            return c.split(color, key, options);
          }, nb::arg("color"), nb::arg("key"), nb::arg("timeout") = nb::none(), nb::arg("name") = "default",
          "ncclCommSplit: the ranks passing the same color, ordered by key; None for a negative color.")
      .def_prop_ro("rank", &Communicator::rank)
      .def_prop_ro("world_size", &Communicator::world_size)
      .def_prop_ro("device_index", &Communicator::device)
      .def("size", &Communicator::world_size, "torch.distributed's name for the world size.")
      .def("operations_issued", &Communicator::operations_issued)
      .def("flight_records", &flight_records, "The flight recorder's records, oldest first, as dicts.")
      .def("all_reduce", [](Communicator& c, const PyArray& input, const PyArray* output, nb::handle op,
                            const PyStream* s) {
            const tensor::Tensor& out = output_of(output, input, "all_reduce");
            const ReduceOp r = to_reduce_op(op);
            nb::gil_scoped_release unlocked;
            c.all_reduce(input.tensor, out, r, optional_stream(s));
          }, nb::arg("input"), nb::arg("output").none() = nb::none(), nb::arg("op") = ReduceOp::sum,
          nb::arg("stream").none() = nb::none(), "Reduces `input` over the ranks into `output` (default: in place).")
      .def("reduce", [](Communicator& c, const PyArray& input, int root, const PyArray* output, nb::handle op,
                        const PyStream* s) {
            const tensor::Tensor& out = output_of(output, input, "reduce");
            const ReduceOp r = to_reduce_op(op);
            nb::gil_scoped_release unlocked;
            c.reduce(input.tensor, out, root, r, optional_stream(s));
          }, nb::arg("input"), nb::arg("root"), nb::arg("output").none() = nb::none(), nb::arg("op") = ReduceOp::sum,
          nb::arg("stream").none() = nb::none(), "The reduction lands in `output` on `root` only.")
      .def("broadcast", [](Communicator& c, const PyArray& input, int root, const PyArray* output, const PyStream* s) {
            const tensor::Tensor& out = output_of(output, input, "broadcast");
            nb::gil_scoped_release unlocked;
            c.broadcast(input.tensor, out, root, optional_stream(s));
          }, nb::arg("input"), nb::arg("root") = 0, nb::arg("output").none() = nb::none(),
          nb::arg("stream").none() = nb::none(), "`root`'s input into every rank's output (default: in place).")
      .def("all_gather", [](Communicator& c, const PyArray& input, const PyArray& output, const PyStream* s) {
            check_writable(output, "all_gather");
            nb::gil_scoped_release unlocked;
            c.all_gather(input.tensor, output.tensor, optional_stream(s));
          }, nb::arg("input"), nb::arg("output"), nb::arg("stream").none() = nb::none(),
          "output: world_size x input's elements, rank r's at r x input.size (all_gather_into_tensor).")
      .def("reduce_scatter", [](Communicator& c, const PyArray& input, const PyArray& output, nb::handle op,
                                const PyStream* s) {
            check_writable(output, "reduce_scatter");
            const ReduceOp r = to_reduce_op(op);
            nb::gil_scoped_release unlocked;
            c.reduce_scatter(input.tensor, output.tensor, r, optional_stream(s));
          }, nb::arg("input"), nb::arg("output"), nb::arg("op") = ReduceOp::sum, nb::arg("stream").none() = nb::none(),
          "input: world_size x output's elements; rank r gets the reduction of block r (reduce_scatter_tensor).")
      .def("all_to_all", [](Communicator& c, const PyArray& input, const PyArray& output, const PyStream* s) {
            check_writable(output, "all_to_all");
            nb::gil_scoped_release unlocked;
            c.all_to_all(input.tensor, output.tensor, optional_stream(s));
          }, nb::arg("input"), nb::arg("output"), nb::arg("stream").none() = nb::none(),
          "Block j of rank i's input goes to block i of rank j's output (all_to_all_single).")
      .def("send", [](Communicator& c, const PyArray& input, int peer, const PyStream* s) {
            nb::gil_scoped_release unlocked;
            c.send(input.tensor, peer, optional_stream(s));
          }, nb::arg("input"), nb::arg("peer"), nb::arg("stream").none() = nb::none())
      .def("recv", [](Communicator& c, const PyArray& output, int peer, const PyStream* s) {
            check_writable(output, "recv");
            nb::gil_scoped_release unlocked;
            c.recv(output.tensor, peer, optional_stream(s));
          }, nb::arg("output"), nb::arg("peer"), nb::arg("stream").none() = nb::none())
      .def("check", &Communicator::check, "Raises the error the watchdog recorded (a timeout, NCCL's asynchronous error).")
      .def("failed", &Communicator::failed)
      .def("abort", &Communicator::abort, nb::call_guard<nb::gil_scoped_release>(),
           "ncclCommAbort: releases operations in flight; every later call raises NcclError.")
      .def_prop_ro("native_handle", [](const Communicator& c) { return reinterpret_cast<std::uintptr_t>(c.native_handle()); },
                   "The ncclComm_t, as an address.")
      .def("__repr__", [](const Communicator& c) {
        return "<cudakit.nccl.Communicator rank=" + std::to_string(c.rank()) + " world_size=" +
               std::to_string(c.world_size()) + " device=cuda:" + std::to_string(c.device()) + ">";
      });

  nb::class_<GroupScope>(m, "_NcclGroupScope")
      .def(nb::init<>())
      .def("enter", &GroupScope::enter)
      .def("exit", &GroupScope::exit, nb::arg("raising"), nb::call_guard<nb::gil_scoped_release>());

  // torch.cuda.comm: copies and reductions across the devices of one process.
  m.def("_comm_broadcast", [](const PyArray& a, const std::vector<int>& devices) {
        return arrays_of(nccl::comm::broadcast(a.tensor, devices));
      }, nb::arg("tensor"), nb::arg("devices"));
  m.def("_comm_reduce_add", [](nb::sequence inputs, DeviceIndex destination) {
        return PyArray{nccl::comm::reduce_add(tensors_of(inputs, "inputs"), destination.value), false};
      }, nb::arg("inputs"), nb::arg("destination") = nb::none());
  m.def("_comm_broadcast_coalesced", [](nb::sequence tensors, const std::vector<int>& devices) {
        // C++ gives one list per tensor (over the devices); torch one tuple per device.
        auto per_tensor = nccl::comm::broadcast_coalesced(tensors_of(tensors, "tensors"), devices);
        nb::list out;
        for (std::size_t d = 0; d < devices.size(); ++d) {
          std::vector<tensor::Tensor> on_device;
          for (auto& copies : per_tensor) on_device.push_back(std::move(copies[d]));
          out.append(nb::tuple(arrays_of(std::move(on_device))));
        }
        return out;
      }, nb::arg("tensors"), nb::arg("devices"));
  m.def("_comm_reduce_add_coalesced", [](nb::sequence inputs, DeviceIndex destination) {
        std::vector<std::vector<tensor::Tensor>> lists;
        for (nb::handle per_device : inputs) lists.push_back(tensors_of(per_device, "inputs"));
        return arrays_of(nccl::comm::reduce_add_coalesced(lists, destination.value));
      }, nb::arg("inputs"), nb::arg("destination") = nb::none());
  m.def("_comm_scatter", [](const PyArray& a, const std::vector<int>& devices,
                            std::optional<std::vector<std::int64_t>> chunk_sizes) {
        return arrays_of(nccl::comm::scatter(a.tensor, devices, std::move(chunk_sizes)));
      }, nb::arg("tensor"), nb::arg("devices"), nb::arg("chunk_sizes").none() = nb::none());
  m.def("_comm_gather", [](nb::sequence tensors, DeviceIndex destination) {
        return PyArray{nccl::comm::gather(tensors_of(tensors, "tensors"), destination.value), false};
      }, nb::arg("tensors"), nb::arg("destination") = nb::none());
}

}  // namespace cudakit::python
