"""torch.cuda.tunable: TunableOp's switches and results."""

from __future__ import annotations

from typing import Tuple

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


def get_validators(device=None) -> Tuple[Tuple[str, str], ...]:
    """torch.cuda.tunable.get_validators(): (name, value) pairs the results depend on
    (CUDAKIT_VERSION, CUDA_VERSION, CUBLAS_VERSION, CUBLASLT_VERSION, GPU_NAME,
    COMPUTE_CAPABILITY); torch returns the same as a tuple of pairs."""
    return tuple(tuple(pair) for pair in _cudakit._tunable_get_validators(device))


def tune_gemm_in_file(filename: str, results_filename: str = "") -> int:
    """torch.cuda.tunable.tune_gemm_in_file: tunes every GEMM of an untuned file (one written with
    record_untuned_enable) on the current device; returns how many keys were tuned (torch returns
    None). Results go to ``results_filename``, else to the filename option's file."""
    return _cudakit._tunable_tune_gemm_in_file(filename, results_filename)


def mgpu_tune_gemm_in_file(filename_pattern: str, num_gpus: int, results_filename: str = "") -> int:
    """torch.cuda.tunable.mgpu_tune_gemm_in_file: the same over ``num_gpus`` GPUs (0: all), one
    thread per device, each writing its own per-device results file (torch runs a process per
    GPU); returns how many keys were tuned in all."""
    return _cudakit._tunable_mgpu_tune_gemm_in_file(filename_pattern, num_gpus, results_filename)


def set_numerical_check_tolerances(enable: bool, atol: float = 1e-5, rtol: float = 1e-5) -> None:
    """torch.cuda.tunable.set_numerical_check_tolerances: turns the numerical check of candidate
    GEMMs on or off. Differs from torch: cudakit's check uses each key's own tolerance (from its
    dtypes, TF32 and k: Note [GEMM tolerance] in src/tunable/tolerance.cpp), so ``atol`` and
    ``rtol`` are checked (positive, finite) and otherwise unused."""
    import math

    for name, value in (("atol", atol), ("rtol", rtol)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ValueError(f"set_numerical_check_tolerances: {name} must be a positive number, got {value!r}")
    _cudakit._tunable_set_numerical_check(bool(enable))
