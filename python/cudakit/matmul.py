"""Matrix products through cudakit's TunableOp, on cudakit arrays and on torch tensors alike.

``matmul(a, b)`` computes ``a @ b`` for ``[m, k] x [k, n]`` and batched ``[b, m, k] x [b, k, n]``
or ``[b, m, k] x [k, n]`` operands; ``linear(x, weight, bias)`` is ``torch.nn.functional.linear``
(``x @ weight.T + bias``, any number of leading dims); both take an epilogue (``activation=
"relu" | "gelu"``, with or without a bias, applied by cuBLASLt in the GEMM) and, for float8
inputs, scales as ``torch._scaled_mm`` takes them: per tensor (one float32 each), per row of ``a`` and
column of ``b`` (``[m, 1]`` and ``[1, n]``), or DeepSeek-V3's blocks (``a`` per token in 1x128 groups,
``b`` per 128x128 block); see ``matmul``.

Nothing is copied: the operands' device pointers and strides go to ``cudakit::tunable::gemm`` as
the column-major problem cuBLAS sees (``out^T = b^T a^T``), so a row-major operand is an
untransposed cuBLAS operand and a transposed view (``w.T``, ``x.mT``) a transposed one; only an
operand that is neither (a general strided view) is made contiguous first. The product runs on the
operands' library's current stream (torch's for torch tensors), its output allocated by that library.

Whether cuBLAS's default or a tuned solution runs is TunableOp's choice: ``cudakit.tunable.enable()``
and ``cudakit.tunable.tuning_enable()`` switch it, as ``torch.cuda.tunable`` does for torch.

``route_torch()`` is a context manager under which a torch program's CUDA ``torch.matmul``,
``torch.mm``, ``torch.bmm``, ``torch.addmm`` and ``torch.nn.functional.linear`` (the ATen ``mm``,
``bmm`` and ``addmm`` they reach) run through cudakit's tuner; other operations, and products cudakit
does not take (other dtypes, CPU tensors, ``out=`` forms), run as torch's.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

from . import _cudakit

__all__ = ["matmul", "prepare", "linear", "route_torch", "routed_calls"]

# GemmDType's, Epilogue's and GemmOp's codes (cudakit/tunable/gemm_key.hpp).
_DTYPE_CODES = {"float32": 0, "float16": 1, "bfloat16": 2, "float64": 3, "float8_e4m3fn": 4, "float8_e5m2": 5}
_EPILOGUES = {(False, None): 0, (True, None): 1, (False, "relu"): 2, (True, "relu"): 3, (False, "gelu"): 4,
              (True, "gelu"): 5}
_GEMM, _BATCHED, _EPILOGUE, _SCALED = 0, 1, 2, 3
# ScaleMode's codes (cudakit/tunable/gemm_key.hpp).
_SCALAR, _OUTER_VEC, _VEC128, _BLK128x128 = 0, 1, 2, 3


def _scale_mode(scale, rows, k, name, transposed):
    """The ScaleMode of `scale` for an operand of `rows` x k (rows: m of ``a``, n of ``b``), read as
    ``torch._scaled_mm`` reads it; for ``b`` (`transposed`) the scale's dims are taken as those of
    ``scale.T``, so both operands are described as [rows, ...]. Refuses every other layout, naming the
    ones accepted (cuBLASLt reads these four; src/tunable/gemm_key.cpp, Note [FP8 scale modes])."""
    if _dtype_name(scale.dtype) != "float32":
        raise ValueError(f"cudakit.matmul: {name} must be float32, got {_dtype_name(scale.dtype)}")
    shape, strides = tuple(scale.shape), tuple(scale.stride())
    if transposed and len(shape) == 2:
        shape, strides = shape[::-1], strides[::-1]
    groups, blocks = -(-k // 128), -(-rows // 128)
    if shape in ((), (1,), (1, 1)):
        return _SCALAR
    if shape in ((rows,), (rows, 1)) and strides[0] == 1:
        return _OUTER_VEC
    if len(shape) == 2 and shape == (rows, groups) and (rows == 1 or strides[0] == 1) \
            and (groups == 1 or strides[1] == rows):
        return _VEC128
    # cuBLASLt takes no stride for a 128x128 scale: its rows lie exactly `groups` rounded up to 4 apart.
    ld = -(-groups // 4) * 4
    if len(shape) == 2 and shape == (blocks, groups) and (groups == 1 or strides[1] == 1) \
            and (blocks == 1 or strides[0] == ld):
        return _BLK128x128
    t = ".T" if transposed else ""
    raise ValueError(
        f"cudakit.matmul: {name}{t} is {shape} with strides {strides}; for {rows} x {k} it must be one float "
        f"(per tensor), [{rows}, 1] (per {'column' if transposed else 'row'}), [{rows}, {groups}] with strides "
        f"(1, {rows}) (1x128 groups along k), or [{blocks}, {groups}] with strides ({ld}, 1) "
        f"(128x128 blocks, rows {ld} apart: cuBLASLt's stride)")


def _check_scale_device(scale, name, device):
    """A scale must be on the operands' GPU: cuBLASLt reads its pointer there."""
    if not scale.is_cuda or _device_of(scale) != device:
        raise ValueError(f"cudakit.matmul: {name} is on {scale.device}; the operands are on cuda:{device}")


def _cublas_scales(scale_a, scale_b, m, n, k):
    """(A's scale pointer, B's, A's ScaleMode, B's) in cuBLAS's terms, where A is our ``b`` (its rows
    n) and B our ``a`` (rows m): each scale goes with its operand, pointer and mode alike."""
    return (scale_b.data_ptr(), scale_a.data_ptr(), _scale_mode(scale_b, n, k, "scale_b", True),
            _scale_mode(scale_a, m, k, "scale_a", False))


def _dtype_name(dtype) -> str:
    name = str(dtype)
    return name[6:] if name.startswith("torch.") else name


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "untyped_storage")


@dataclass
class _Operand:
    """A matrix (or a batch of them) as cuBLAS reads it: its last two dims rows x cols."""

    obj: object
    ptr: int
    rows: int
    cols: int
    trans: str  # "n": row-major (cuBLAS's untransposed cols x rows), "t": column-major
    ld: int
    batch_stride: int


def _operand(x):
    """x's last two dims (rows x cols) as cuBLAS reads them, made contiguous only when neither
    row- nor column-major. A dimension of size one has no meaningful stride and is read as packed."""
    shape, strides = tuple(x.shape), tuple(x.stride())
    rows, cols = shape[-2], shape[-1]
    sr, sc = strides[-2], strides[-1]
    if rows == 1:
        layout = ("n", max(cols, 1)) if sc == 1 or cols == 1 else ("t", sc) if sc >= 1 else None
    elif cols == 1:
        layout = ("t", rows) if sr == 1 else ("n", sr) if sr >= 1 else None
    elif sc == 1 and sr >= cols:
        layout = ("n", sr)
    elif sr == 1 and sc >= rows:
        layout = ("t", sc)
    else:
        layout = None
    if layout is None:
        return _operand(x.contiguous())
    batch_stride = strides[0] if len(shape) == 3 and shape[0] > 1 else 0
    return _Operand(x, x.data_ptr(), rows, cols, layout[0], layout[1], batch_stride)


def _device_of(x) -> int:
    if _is_torch(x):
        return x.device.index if x.device.index is not None else _torch().cuda.current_device()
    device = str(x.device)
    return int(device.split(":")[1]) if ":" in device else _cudakit.current_device()


def _torch():
    import torch

    return torch


def _check_inputs(a, b, api):
    for name, x in (("a", a), ("b", b)):
        if x.ndim not in (2, 3):
            raise ValueError(f"{api}: {name} has {x.ndim} dims (shape {tuple(x.shape)}); 2 or 3 are supported")
    if a.ndim == 2 and b.ndim == 3:
        raise ValueError(f"{api}: [m, k] x [b, k, n] is not supported (shapes {tuple(a.shape)} x {tuple(b.shape)})")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"{api}: inner dimensions differ: {tuple(a.shape)} x {tuple(b.shape)}")
    if a.ndim == 3 and b.ndim == 3 and a.shape[0] != b.shape[0]:
        raise ValueError(f"{api}: batch sizes differ: {tuple(a.shape)} x {tuple(b.shape)}")


def _stream_of(x, device):
    if _is_torch(x):
        return _raw_stream(device)
    return _cudakit.current_stream(device).cuda_stream


def _empty_like_lib(x, shape, dtype_name, device):
    if _is_torch(x):
        torch = _torch()
        return torch.empty(shape, dtype=getattr(torch, dtype_name), device=f"cuda:{device}")
    return _cudakit.empty(list(shape), dtype_name, f"cuda:{device}")


def _tf32_for(x) -> bool:
    if _is_torch(x):
        return bool(_torch().backends.cuda.matmul.allow_tf32)
    return False


def matmul(a, b, *, bias=None, activation=None, scale_a=None, scale_b=None, out_dtype=None, out=None, stream=None):
    """``a @ b`` through cudakit's TunableOp; see the module's docstring.

    ``bias`` (``[n]``, the output's dtype) and ``activation`` make it a GEMM with an epilogue
    (2-D operands only). float8 operands (``torch.float8_e4m3fn`` / ``float8_e5m2``) need
    ``scale_a`` and ``scale_b`` (float32, 16-byte aligned: tensors of their own), ``b``
    column-major (``w.T`` of a row-major ``w``) and ``a`` row-major, as ``torch._scaled_mm``; the
    scales per tensor (one float each), per row of ``a`` and column of ``b`` (``[m, 1]`` and
    ``[1, n]``), or in blocks as DeepSeek-V3's checkpoints: ``scale_a`` ``[m, ceil(k/128)]`` with
    strides ``(1, m)`` (per token in 1x128 groups) and ``scale_b`` the ``.T`` of a checkpoint's
    ``weight_scale_inv`` (``[ceil(n/128), ceil(k/128)]`` row-major, its row length a multiple of 4),
    or either the other way round (not both 128x128);
    ``out_dtype`` is then the output's type (default bfloat16). ``out``: an output of the right
    shape and dtype to write (row-major rows; its leading dimension may exceed n). ``stream``: a
    stream (torch's or cudakit's, or a ``cudaStream_t`` as an int) instead of the operands'
    library's current one.
    """
    plain = activation is None and scale_a is None and scale_b is None and out is None and out_dtype is None \
        and stream is None
    if plain and bias is None and type(a).__name__ == "Array" and type(b).__name__ == "Array":
        return _cudakit._matmul(a, b)
    if plain and _is_torch(a) and _is_torch(b) and a.is_cuda and (bias is None or _is_torch(bias)):
        product = _cached_product(a, b, bias)  # a layout seen before: its plan, with new pointers
        if product is not None:
            return product
    out, args = _plan(a, b, bias, activation, scale_a, scale_b, out_dtype, out, stream)
    if args is not None:
        _cudakit._gemm(*args)
    # The operands and the output must outlive the queued GEMM: the caller holds them; a copy made
    # here (a contiguous version of a strided operand) belongs to the library's stream-ordered
    # allocator, which keeps it valid for the work already queued on its stream.
    return out


def prepare(a, b, *, bias=None, activation=None, scale_a=None, scale_b=None, out_dtype=None, out=None, stream=None):
    """The product ``matmul`` would make, checked and laid out once: returns ``(out, run)``, where
    each ``run()`` queues it again on the same buffers and stream (a loop's, a benchmark's), at the
    cost of one bound call. The operands must stay alive and in place while ``run`` is used."""
    out, args = _plan(a, b, bias, activation, scale_a, scale_b, out_dtype, out, stream)
    gemm = _cudakit._gemm
    if args is None:
        return out, lambda: None
    return out, lambda: gemm(*args)


def _plan(a, b, bias, activation, scale_a, scale_b, out_dtype, out, stream=None):
    """(out, the arguments of _cudakit._gemm) for a @ b, or (out, None) when there is nothing to compute."""
    _check_inputs(a, b, "cudakit.matmul")
    ab = _dtype_name(a.dtype)
    if _dtype_name(b.dtype) != ab:
        raise ValueError(f"cudakit.matmul: dtypes differ: {ab} and {_dtype_name(b.dtype)}")
    if ab not in _DTYPE_CODES:
        raise ValueError(f"cudakit.matmul: dtype {ab} is not supported (float32, float16, bfloat16, float64, float8)")
    fp8 = ab.startswith("float8")
    if fp8 and (scale_a is None or scale_b is None):
        raise ValueError("cudakit.matmul: float8 operands need scale_a and scale_b (one float32 each)")
    if not fp8 and (scale_a is not None or scale_b is not None):
        raise ValueError(f"cudakit.matmul: scale_a / scale_b are for float8 operands, not {ab}")
    if activation not in (None, "relu", "gelu"):
        raise ValueError(f"cudakit.matmul: activation must be None, 'relu' or 'gelu', got {activation!r}")
    out_name = _dtype_name(out_dtype) if out_dtype is not None else ("bfloat16" if fp8 else ab)
    if not fp8 and out_name != ab:
        raise ValueError(f"cudakit.matmul: out_dtype {out_name} differs from the inputs' {ab} (only float8 converts)")
    device = _device_of(a)
    if _device_of(b) != device:
        raise ValueError(f"cudakit.matmul: operands on different devices (cuda:{device}, cuda:{_device_of(b)})")

    # [b, m, k] x [k, n] with a row-major `a` is one [b*m, k] x [k, n] product.
    lead = ()  # the [b, m] of a folded product's output
    if a.ndim == 3 and b.ndim == 2:
        lead = (a.shape[0], a.shape[1])
        flat = [a.shape[0] * a.shape[1], a.shape[2]]
        a = a.reshape(*flat) if _is_torch(a) else a.reshape(flat)
    batch = a.shape[0] if a.ndim == 3 else 1
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    out_shape = (*lead, N) if lead else ((batch, M, N) if a.ndim == 3 else (M, N))
    if out is None:
        out = _empty_like_lib(a, out_shape, out_name, device)
        ldc, stride_c = N, M * N
    else:
        if tuple(out.shape) != out_shape or _dtype_name(out.dtype) != out_name:
            raise ValueError(f"cudakit.matmul: out is {tuple(out.shape)} {_dtype_name(out.dtype)}, "
                             f"expected {out_shape} {out_name}")
        if out.stride()[-1] != 1 and N > 1:
            raise ValueError(f"cudakit.matmul: out must have unit stride in its last dim (strides {out.stride()})")
        ldc = out.stride()[-2] if out.shape[-2] > 1 else N
        if lead and lead[0] > 1 and out.stride()[0] != lead[1] * ldc:
            raise ValueError(f"cudakit.matmul: out (strides {out.stride()}) must hold its [b, m] rows evenly apart")
        stride_c = out.stride()[0] if out.ndim == 3 and not lead else M * N
    if M == 0 or N == 0:
        return out, None
    if K == 0:
        out.zero_()
        return out, None
    # cuBLAS's A is our b, its B our a: out^T (N x M) = b^T (N x K) a^T (K x M).
    opa, opb = _operand(b), _operand(a)
    has_bias = bias is not None
    if has_bias:
        if tuple(bias.shape) != (N,) or _dtype_name(bias.dtype) != out_name:
            raise ValueError(f"cudakit.matmul: bias must be [{N}] {out_name}, got {tuple(bias.shape)} "
                             f"{_dtype_name(bias.dtype)}")
        if bias.stride()[0] != 1 and N > 1:
            bias = bias.contiguous()
    if (has_bias or activation) and batch > 1:
        raise ValueError("cudakit.matmul: an epilogue (bias or activation) takes 2-D operands")
    scales = (0, 0, _SCALAR, _SCALAR)
    if fp8:
        op = _SCALED
        if has_bias or activation:
            raise ValueError("cudakit.matmul: float8 products take no epilogue here")
        if batch > 1:
            raise ValueError("cudakit.matmul: float8 products take 2-D operands")
        _check_scale_device(scale_a, "scale_a", device)
        _check_scale_device(scale_b, "scale_b", device)
        scales = _cublas_scales(scale_a, scale_b, M, N, K)
    elif has_bias or activation:
        op = _EPILOGUE
    else:
        op = _BATCHED if batch > 1 else _GEMM
    return out, (
        op, opa.trans, opb.trans, N, M, K, opa.ptr, opa.ld, opb.ptr, opb.ld, out.data_ptr(), ldc,
        _DTYPE_CODES[ab], _DTYPE_CODES[out_name], batch, opa.batch_stride, opb.batch_stride,
        stride_c if batch > 1 else 0, 1.0, 0.0, bias.data_ptr() if has_bias else 0,
        _EPILOGUES[(has_bias, activation)], scales[0], scales[1],
        _stream_of(a, device) if stream is None else int(getattr(stream, "cuda_stream", stream)), device,
        ab == "float32" and _tf32_for(a), scales[2], scales[3])


def linear(x, weight, bias=None, *, activation=None):
    """``torch.nn.functional.linear`` (``x @ weight.T + bias``) through cudakit's TunableOp.

    ``x``: ``[..., in]``; ``weight``: ``[out, in]``; ``bias``: ``[out]`` or None. The bias (and the
    activation, when given) is applied in the GEMM's epilogue.
    """
    if weight.ndim != 2:
        raise ValueError(f"cudakit.linear: weight must be [out, in], got {tuple(weight.shape)}")
    lead = tuple(x.shape[:-1])
    x2 = x.reshape(-1, x.shape[-1]) if _is_torch(x) else x.reshape([-1, x.shape[-1]])
    wt = weight.t() if _is_torch(weight) else weight.T
    y = matmul(x2, wt, bias=bias, activation=activation)
    return y.reshape(*lead, weight.shape[0]) if _is_torch(y) else y.reshape([*lead, weight.shape[0]])


# ---- routing torch's products --------------------------------------------------------------------

_routed_lock = threading.Lock()
_routed_count = 0


def routed_calls() -> int:
    """How many products ``route_torch`` sent to cudakit so far, in every thread (the routing is
    process-wide: a backward pass's products run on torch's autograd threads)."""
    native = _native_library  # None until route_torch() loaded it
    return _routed_count + (native.cudakit_torch_routed_count() if native is not None else 0)


def _count():
    global _routed_count
    with _routed_lock:
        _routed_count += 1


def _takes(*tensors) -> bool:
    torch = _torch()
    first = tensors[0]
    if not isinstance(first, torch.Tensor) or not first.is_cuda:
        return False
    if first.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        return False
    for t in tensors:
        if not isinstance(t, torch.Tensor) or t.dtype != first.dtype or t.device != first.device:
            return False
    return True


# Note [Routing torch's products]
# route_torch() registers Python kernels for aten::mm, aten::bmm and aten::addmm at torch's CUDA
# dispatch key while a block is open, so that only those three operations reach Python; every other
# ATen operation of a forward pass (norms, rotary embeddings, softmax, views) stays in C++. A
# TorchDispatchMode, the first design, sees every operation of the block through a Python call:
# a forward pass of a few hundred operations paid that many round trips, and the routed forward
# ran slower than plain torch with outputs equal to the bit (notes/tunable.md).
# Registering at the CUDA key sits below autograd and autocast, so gradients, mixed precision and
# inference mode are torch's. A product cudakit does not take goes to torch's own kernel through the
# op's out= overload (aten::mm.out and the others), which is not overridden: no recursion, and no
# need of torch.library.get_kernel (torch 2.9 and later). A dispatcher registration is process-wide,
# unlike a dispatch mode: while any thread holds a block open, every thread's CUDA products are
# routed. The registration is counted, made when the first block opens and removed when the last
# closes; its cost is paid at those two moments, not per product (notes/tunable.md). torch's
# dispatcher reads its kernel table without a lock, so a registration racing a product in another
# thread is torch's hazard, which the docstring passes on to the user. Where libcudakit_torch is
# built for the torch in use, the kernels registered are its C++ ones (Note [Routed products in
# C++], python/torch_route/routed_products.cpp): the same products taken, without Python per call.

_routing_lock = threading.Lock()
_routing_depth = 0
_routing_library = None


# Note [Routed products' plans]
# A routed product's host time is torch's dispatcher, the Python kernel, the plan and the bound
# call; the plan (_plan: checks, layouts, the 29 arguments) was most of the Python kernel's time
# (notes/tunable.md), and cudakit.matmul on torch tensors paid it too. A model runs the same few
# layouts over and over, so the arguments are kept per layout (both operands' and the bias's
# dtypes, devices, shapes and strides, TF32 for float32) with only the pointers and the stream
# filled in per call, the stream read with torch._C._cuda_getCurrentRawStream (what torch's own
# generated code calls) instead of a Stream object. Only plans that made no copy are kept (an
# operand that was neither row- nor column-major was made contiguous: its pointer is not the
# tensor's); a layout cudakit refuses is remembered as such, and cudakit.matmul then plans it again
# to raise its error. The table holds at most _ROUTE_PLANS_MAX layouts and starts again when full
# (sequence lengths vary in a server).
_ROUTE_PLANS_MAX = 4096
_route_plans: dict = {}
_NO_PLAN = object()
# The positions of the per-call values in _cudakit._gemm's arguments (see _plan's return).
_ARG_A, _ARG_B, _ARG_OUT, _ARG_BIAS, _ARG_STREAM = 6, 8, 10, 20, 24


def _raw_stream(device):
    torch = _torch()
    get = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return get(device) if get is not None else torch.cuda.current_stream(device).cuda_stream


def _cached_product(a, b, bias):
    """a @ b (+ bias) of torch CUDA tensors from the plan kept for their layout (Note [Routed
    products' plans]), or None when cudakit does not take the product."""
    torch = _torch()
    tf32 = torch.backends.cuda.matmul.allow_tf32 if a.dtype is torch.float32 else None
    key = (a.dtype, b.dtype, a.device, b.device, a.shape, a.stride(), b.shape, b.stride(),
           None if bias is None else (bias.dtype, bias.device, bias.shape, bias.stride()), tf32)
    plan = _route_plans.get(key)
    if plan is None:
        try:
            out, args = _plan(a, b, bias, None, None, None, None, None)
        except ValueError:
            _remember_route_plan(key, _NO_PLAN)
            return None
        if args is not None and args[_ARG_A] == b.data_ptr() and args[_ARG_B] == a.data_ptr() and \
                (bias is None or args[_ARG_BIAS] == bias.data_ptr()):
            _remember_route_plan(key, (tuple(out.shape), out.dtype, list(args)))
        if args is not None:
            _cudakit._gemm(*args)
        return out
    if plan is _NO_PLAN:
        return None
    shape, dtype, template = plan
    out = torch.empty(shape, dtype=dtype, device=a.device)
    args = template.copy()
    args[_ARG_A], args[_ARG_B], args[_ARG_OUT] = b.data_ptr(), a.data_ptr(), out.data_ptr()
    if bias is not None:
        args[_ARG_BIAS] = bias.data_ptr()
    args[_ARG_STREAM] = _raw_stream(a.device.index)
    _cudakit._gemm(*args)
    return out


def _route_product(a, b, bias):
    """A routed product through cudakit (counted), or None when cudakit does not take it."""
    out = _cached_product(a, b, bias)
    if out is not None:
        _count()
    return out


def _remember_route_plan(key, plan):
    if len(_route_plans) >= _ROUTE_PLANS_MAX:
        _route_plans.clear()
    _route_plans[key] = plan


def _routed_mm(a, b):
    if _takes(a, b) and a.ndim == 2 and b.ndim == 2:
        out = _route_product(a, b, None)
        if out is not None:
            return out
    out = _torch().empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    return _torch().ops.aten.mm.out(a, b, out=out)


def _routed_bmm(a, b):
    if _takes(a, b) and a.ndim == 3 and b.ndim == 3:
        out = _route_product(a, b, None)
        if out is not None:
            return out
    out = _torch().empty((a.shape[0], a.shape[1], b.shape[2]), dtype=a.dtype, device=a.device)
    return _torch().ops.aten.bmm.out(a, b, out=out)


def _routed_addmm(bias, a, b, *, beta=1, alpha=1):
    if beta == 1 and alpha == 1 and _takes(a, b, bias) and bias.ndim == 1 and a.ndim == 2 and b.ndim == 2 \
            and bias.shape[0] == b.shape[1]:
        out = _route_product(a, b, bias)
        if out is not None:
            return out
    out = _torch().empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    return _torch().ops.aten.addmm.out(bias, a, b, beta=beta, alpha=alpha, out=out)


# Whether route_torch() registers the C++ kernels of libcudakit_torch where that library is built
# for the torch in use (Note [Routed products in C++] in python/torch_route/routed_products.cpp);
# False registers the Python kernels above (what a build without torch has).
_ROUTE_IN_CPP = True
_native_loaded = False
_native_library = None


def _native_route():
    """libcudakit_torch loaded (ctypes), or None where it was not built or was built for another torch."""
    global _native_loaded, _native_library
    if _native_loaded:
        return _native_library
    import ctypes
    import os

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libcudakit_torch.so")
    library = None
    if os.path.exists(path):
        torch = _torch()
        try:
            candidate = ctypes.CDLL(path)
        except OSError:  # linked against another torch's libraries
            candidate = None
        if candidate is not None:
            candidate.cudakit_torch_built_for.restype = ctypes.c_char_p
            candidate.cudakit_torch_route_start.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
            candidate.cudakit_torch_route_start.restype = ctypes.c_int
            candidate.cudakit_torch_routed_count.restype = ctypes.c_uint64
            if candidate.cudakit_torch_built_for().decode() == torch.__version__:
                library = candidate
    _native_library, _native_loaded = library, True
    return library


class _NativeRouting:
    """The C++ kernels' registration, removed by _destroy() as a torch.library.Library is."""

    def __init__(self, library, dispatch_key):
        import ctypes

        error = ctypes.create_string_buffer(1024)
        if library.cudakit_torch_route_start(dispatch_key.encode(), error, len(error)) != 0:
            raise RuntimeError(f"cudakit.route_torch: registering the kernels at {dispatch_key} failed: "
                               f"{error.value.decode(errors='replace')}")
        self._library = library

    def _destroy(self):
        self._library.cudakit_torch_route_stop()


def _register_routing(dispatch_key="CUDA"):
    """The registration of the routed kernels at torch's `dispatch_key` (CUDA; tests of the
    fallbacks take CPU): the C++ ones where libcudakit_torch is built for this torch, else Python's."""
    native = _native_route() if _ROUTE_IN_CPP else None
    if native is not None:
        return _NativeRouting(native, dispatch_key)
    import warnings

    torch = _torch()
    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        # torch warns once that an ATen kernel is overridden: that is the purpose here.
        warnings.filterwarnings("ignore", message=".*[Oo]verrid")
        library.impl("mm", _routed_mm, dispatch_key)
        library.impl("bmm", _routed_bmm, dispatch_key)
        library.impl("addmm", _routed_addmm, dispatch_key)
    return library


@contextlib.contextmanager
def route_torch():
    """Within the block, torch's CUDA matrix products run through cudakit's TunableOp.

    ``torch.matmul``, ``torch.mm``, ``torch.bmm``, ``torch.addmm`` and ``torch.nn.functional.linear``
    on CUDA float32, float16 and bfloat16 tensors (the ATen ``mm``, ``bmm`` and ``addmm`` they reach)
    run as cudakit's GEMM on torch's current stream; other operations, and products cudakit does not
    take, run as torch's. The kernels are C++ (libcudakit_torch, built with the module where torch
    is importable, for that torch version) or, without that library, Python ones, which cost more
    host time per product. Autograd and autocast work as without the block (the products are routed
    below them). Blocks nest. The routing is process-wide: while a block is open in any thread,
    every thread's CUDA products are routed; opening the first block and closing the last change
    torch's dispatcher, which torch does not guard against products running in other threads at
    that moment, so a threaded program opens the block before its threads start their products and
    closes it after they finish (or keeps one open for its life).

    Example::

        with cudakit.matmul.route_torch():
            y = model(x)          # its nn.Linear layers and matmuls tuned by cudakit
    """
    global _routing_depth, _routing_library
    with _routing_lock:
        if _routing_depth == 0:
            _routing_library = _register_routing()
        _routing_depth += 1
    try:
        yield
    finally:
        with _routing_lock:
            _routing_depth -= 1
            if _routing_depth == 0:
                library, _routing_library = _routing_library, None
                library._destroy()


# `cudakit.matmul` is the function (the package re-exports it over this module's name); the
# module's other names stay reachable from it: cudakit.matmul.prepare, .linear, .route_torch.
matmul.prepare = prepare
matmul.linear = linear
matmul.route_torch = route_torch
matmul.routed_calls = routed_calls
