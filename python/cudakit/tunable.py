"""torch.cuda.tunable: TunableOp's switches and results."""

from __future__ import annotations

from . import _cudakit

enable = _cudakit._tunable_enable
is_enabled = _cudakit._tunable_is_enabled
tuning_enable = _cudakit._tunable_tuning_enable
tuning_is_enabled = _cudakit._tunable_tuning_is_enabled
record_untuned_enable = _cudakit._tunable_record_untuned_enable
record_untuned_is_enabled = _cudakit._tunable_record_untuned_is_enabled
set_max_tuning_duration = _cudakit._tunable_set_max_tuning_duration
get_max_tuning_duration = _cudakit._tunable_get_max_tuning_duration
set_max_tuning_iterations = _cudakit._tunable_set_max_tuning_iterations
get_max_tuning_iterations = _cudakit._tunable_get_max_tuning_iterations
set_filename = _cudakit._tunable_set_filename
get_filename = _cudakit._tunable_get_filename
get_results = _cudakit._tunable_get_results
read_file = _cudakit._tunable_read_file
write_file = _cudakit._tunable_write_file
write_file_on_exit = _cudakit._tunable_write_file_on_exit
set_numerical_check = _cudakit._tunable_set_numerical_check
set_rotating_buffer_size = _cudakit._tunable_set_rotating_buffer_size
get_rotating_buffer_size = _cudakit._tunable_get_rotating_buffer_size
clear_results = _cudakit._tunable_clear_results
