"""torch.cuda.jiterator over cudakit.Array: kernels compiled at run time from C++ strings."""

from __future__ import annotations

from . import _cudakit

__all__ = ["_create_jit_fn", "_create_multi_output_jit_fn", "create_jit_fn", "create_multi_output_jit_fn"]


def create_jit_fn(code_string: str, **kwargs):
    """The last function in `code_string` is the entry; keyword arguments are its scalar defaults.
    Call the result with Arrays and numbers; `out=`, `stream=` and scalar overrides by keyword."""
    return _cudakit._create_jit_fn(code_string, **kwargs)


def create_multi_output_jit_fn(code_string: str, num_outputs: int, **kwargs):
    """As create_jit_fn, for a kernel with `num_outputs` outputs; the call returns a tuple of Arrays."""
    return _cudakit._create_multi_output_jit_fn(code_string, num_outputs, **kwargs)


# torch's private spellings.
_create_jit_fn = create_jit_fn
_create_multi_output_jit_fn = create_multi_output_jit_fn
