"""torch.cuda.tunable: TunableOp's switches and results."""

from __future__ import annotations

from typing import Tuple

from . import _cudakit

def enable(val: bool = True) -> None:
    """Turns TunableOp on or off: GEMMs use the tuned solution of their key."""
    return _cudakit._tunable_enable(val)


def is_enabled() -> bool:
    """Whether TunableOp is on."""
    return _cudakit._tunable_is_enabled()


def tuning_enable(val: bool = True) -> None:
    """Whether keys without a result are tuned when first met (else they use the default)."""
    return _cudakit._tunable_tuning_enable(val)


def tuning_is_enabled() -> bool:
    """Whether new keys are tuned."""
    return _cudakit._tunable_tuning_is_enabled()


def record_untuned_enable(val: bool = True) -> None:
    """Whether keys without a result are written to the untuned file (for tune_gemm_in_file)."""
    return _cudakit._tunable_record_untuned_enable(val)


def record_untuned_is_enabled() -> bool:
    """Whether untuned keys are recorded."""
    return _cudakit._tunable_record_untuned_is_enabled()


def set_max_tuning_duration(duration: int) -> None:
    """The most milliseconds tuning one key may take."""
    return _cudakit._tunable_set_max_tuning_duration(duration)


def get_max_tuning_duration() -> int:
    """The most milliseconds tuning one key may take."""
    return _cudakit._tunable_get_max_tuning_duration()


def set_max_tuning_iterations(iterations: int) -> None:
    """The most runs of each candidate while tuning one key."""
    return _cudakit._tunable_set_max_tuning_iterations(iterations)


def get_max_tuning_iterations() -> int:
    """The most runs of each candidate while tuning one key."""
    return _cudakit._tunable_get_max_tuning_iterations()


def set_filename(filename: str, insert_device_ordinal: bool = False) -> None:
    """The results file's name pattern ('%d' or the ordinal before the extension is the device); insert_device_ordinal is accepted for torch's signature: cudakit always inserts it."""
    return _cudakit._tunable_set_filename(filename)


def get_filename() -> str:
    """The results file's name pattern."""
    return _cudakit._tunable_get_filename()


def get_results(device=None) -> dict:
    """The device's results: {'OpName,ParamsSignature': 'Solution,Time'}."""
    return _cudakit._tunable_get_results(device)


def read_file(filename: str = "", device=None) -> bool:
    """Reads a results file into the device's results; False when it does not exist."""
    return _cudakit._tunable_read_file(filename, device)


def write_file(filename: str = "", device=None) -> None:
    """Writes the device's validators and results (atomically)."""
    return _cudakit._tunable_write_file(filename, device)


def write_file_on_exit(val: bool) -> None:
    """Whether every device's results are written to their files at exit (on by default)."""
    return _cudakit._tunable_write_file_on_exit(val)


def set_numerical_check(val: bool) -> None:
    """Whether candidates are checked against the default GEMM's output before they may win."""
    return _cudakit._tunable_set_numerical_check(val)


def set_rotating_buffer_size(buffer_size: int) -> None:
    """MiB of rotating inputs while tuning, so that timings do not come from a warm cache."""
    return _cudakit._tunable_set_rotating_buffer_size(buffer_size)


def get_rotating_buffer_size() -> int:
    """MiB of rotating inputs while tuning."""
    return _cudakit._tunable_get_rotating_buffer_size()


def clear_results() -> None:
    """Drops every result of every device (and the cached plans)."""
    return _cudakit._tunable_clear_results()



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
