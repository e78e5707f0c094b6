// TunableOp's switches and results (torch.cuda.tunable's names).

#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>

#include <string>

#include "common.hpp"
#include "cudakit/tunable/tunable.hpp"

namespace cudakit::python {

void bind_tunable(nb::module_& m) {
  namespace t = cudakit::tunable;
  m.def("_tunable_enable", &t::enable, nb::arg("val") = true);
  m.def("_tunable_is_enabled", &t::is_enabled);
  m.def("_tunable_tuning_enable", &t::tuning_enable, nb::arg("val") = true);
  m.def("_tunable_tuning_is_enabled", &t::tuning_is_enabled);
  m.def("_tunable_record_untuned_enable", &t::record_untuned_enable, nb::arg("val") = true);
  m.def("_tunable_record_untuned_is_enabled", &t::record_untuned_is_enabled);
  m.def("_tunable_set_max_tuning_duration", &t::set_max_tuning_duration, nb::arg("duration"));
  m.def("_tunable_get_max_tuning_duration", &t::get_max_tuning_duration);
  m.def("_tunable_set_max_tuning_iterations", &t::set_max_tuning_iterations, nb::arg("iterations"));
  m.def("_tunable_get_max_tuning_iterations", &t::get_max_tuning_iterations);
  m.def("_tunable_set_filename", [](const std::string& f) { t::set_filename(f); }, nb::arg("filename"));
  m.def("_tunable_get_filename", &t::get_filename);
  m.def("_tunable_get_results", [](DeviceIndex d) { return t::get_results(d.value); }, nb::arg("device") = nb::none());
  m.def("_tunable_read_file", [](const std::string& f, DeviceIndex d) { return t::read_file(f, d.value); },
        nb::arg("filename") = "", nb::arg("device") = nb::none());
  m.def("_tunable_write_file", [](const std::string& f, DeviceIndex d) { t::write_file(f, d.value); },
        nb::arg("filename") = "", nb::arg("device") = nb::none());
  m.def("_tunable_write_file_on_exit", &t::write_file_on_exit, nb::arg("val"));
  m.def("_tunable_set_numerical_check", &t::set_numerical_check, nb::arg("val"));
  m.def("_tunable_set_rotating_buffer_size", &t::set_rotating_buffer_size, nb::arg("buffer_size"));
  m.def("_tunable_get_rotating_buffer_size", &t::get_rotating_buffer_size);
  m.def("_tunable_clear_results", &t::clear_results);
}

}  // namespace cudakit::python
