"""torch.cuda's public names that cudakit's Python module leaves out, each with the reason.

Every other public name of torch.cuda (its own, torch.cuda.memory's and its submodules', and the
members of its classes) has a cudakit counterpart under the same path: ``torch.cuda.X`` is
``cudakit.X``, ``torch.cuda.memory.X`` is ``cudakit.memory.X``, ``torch.cuda.Stream.X`` is
``cudakit.Stream.X``. The API-listing tests (python/tests/test_torch_names.py) hold the module to
that: the host test against the list of torch's names kept in python/tests/data, the GPU test
against the installed torch.
"""

from __future__ import annotations

from typing import Dict, Optional

_TENSOR_TYPES = "torch's legacy tensor and storage types: cudakit's array is cudakit.Array"

#: Path below torch.cuda -> why cudakit has no such name.
EXCLUDED: Dict[str, str] = {
    "make_graphed_callables": "autograd's: it captures forward and backward passes of torch modules "
                              "(cudakit.graph captures any work, torch's included)",
    "graphs.make_graphed_callables": "as make_graphed_callables",
    "amp": "torch's automatic mixed precision (autocast of torch operators)",
    "sparse": "torch's sparse tensor kernels",
    "current_solver_handle": "cuSOLVER: cudakit has no dense linear algebra beyond GEMM",
    "nccl.all_reduce": "torch's one-process form over lists of tensors; cudakit's collectives are "
                       "Communicator methods (cudakit.nccl.init_rank), and cudakit.comm copies and reduces "
                       "across the GPUs of one process",
    "nccl.reduce": "as nccl.all_reduce",
    "nccl.broadcast": "as nccl.all_reduce",
    "nccl.all_gather": "as nccl.all_reduce",
    "nccl.reduce_scatter": "as nccl.all_reduce",
    "nccl.SUM": "torch's reduction constant of nccl.all_reduce; cudakit.nccl.ReduceOp.SUM",
}
for _kind in ("BFloat16", "Bool", "Byte", "Char", "Double", "Float", "Half", "Int", "Long", "Short"):
    EXCLUDED[f"{_kind}Storage"] = _TENSOR_TYPES
    EXCLUDED[f"{_kind}Tensor"] = _TENSOR_TYPES
for _kind in ("ComplexDouble", "ComplexFloat"):  # storages only: torch has no Complex*Tensor here
    EXCLUDED[f"{_kind}Storage"] = _TENSOR_TYPES
del _kind


def excluded(path: str) -> Optional[str]:
    """Why ``torch.cuda.<path>`` has no cudakit counterpart, or None when it should have one."""
    return EXCLUDED.get(path)


def resolve(path: str):
    """The cudakit object for ``torch.cuda.<path>`` ("memory.MemPool", "Stream.priority_range");
    raises AttributeError naming the first part that is missing."""
    import importlib

    obj = importlib.import_module("cudakit")
    walked = "cudakit"
    for part in path.split("."):
        if not hasattr(obj, part):
            try:  # a submodule not imported by the package
                obj = importlib.import_module(f"{walked}.{part}")
            except ImportError:
                raise AttributeError(f"{walked} has no attribute {part!r} (torch.cuda.{path})") from None
        else:
            obj = getattr(obj, part)
        walked = f"{walked}.{part}"
    return obj
