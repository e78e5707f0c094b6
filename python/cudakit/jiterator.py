"""torch.cuda.jiterator over cudakit.Array: kernels compiled at run time from C++ strings."""

from __future__ import annotations

from . import _cudakit

__all__ = ["_create_jit_fn", "_create_multi_output_jit_fn", "create_jit_fn", "create_jit_reduction",
           "create_multi_output_jit_fn"]


def create_jit_fn(code_string: str, **kwargs):
    """The last function in `code_string` is the entry; keyword arguments are its scalar defaults.
    Call the result with Arrays and numbers; `out=`, `stream=` and scalar overrides by keyword."""
    return _cudakit._create_jit_fn(code_string, **kwargs)


def create_multi_output_jit_fn(code_string: str, num_outputs: int, **kwargs):
    """As create_jit_fn, for a kernel with `num_outputs` outputs; the call returns a tuple of Arrays."""
    return _cudakit._create_multi_output_jit_fn(code_string, num_outputs, **kwargs)


def create_jit_reduction(map_code: str, combine_code: str, identity: str, **kwargs):
    """cudakit's own (CuPy's ReductionKernel; torch.cuda.jiterator has none): a reduction written as
    two C++ functions. ``map_code``'s last function maps the inputs of one element to a value,
    ``combine_code``'s last function combines two values (it must be associative), ``identity`` is
    a C++ expression for the empty reduction; keyword arguments are scalar defaults of the map.

        sum_of_squares = create_jit_reduction(
            "template <typename T> T square(T x) { return x * x; }",
            "template <typename T> T add(T a, T b) { return a + b; }", "0")
        total = sum_of_squares(x)                  # a 0-dim Array
        rows = sum_of_squares(x, dim=1, keepdim=True)

    The result accumulates in the inputs' common dtype (float for float16 and bfloat16)."""
    return _cudakit._create_jit_reduction(map_code, combine_code, identity, **kwargs)


# torch's private spellings.
_create_jit_fn = create_jit_fn
_create_multi_output_jit_fn = create_multi_output_jit_fn
