"""from_dlpack: any DLPack producer (PyTorch, CuPy, JAX, NumPy, cudakit itself) to cudakit.Array.

The consumer's side of the protocol: ask the producer where its data lives (__dlpack_device__),
then for a capsule ordered after the producer's work on the stream cudakit will use — the current
stream of that device (See Note [DLPack streams] in python/src/dlpack_bindings.cpp). A producer
that knows DLPack 1.x returns a versioned capsule (with the read-only flag); one that predates it
is asked again without max_version and returns a legacy capsule.
"""

from __future__ import annotations

from . import _cudakit

_CPU = 1
_CUDA = 2
_CUDA_HOST = 3
_CUDA_MANAGED = 13

_VERSION = _cudakit._dlpack_version()


def from_dlpack(obj, *, device=None, copy: bool | None = None) -> _cudakit.Array:
    """An Array over `obj`'s memory (no copy unless `copy=True` or `device` needs one).

    `obj` is an object with __dlpack__/__dlpack_device__ or a DLPack capsule. `device` ("cpu",
    "cuda:N") asks the producer to deliver there. The array keeps the producer's tensor until the
    last cudakit reference goes, then calls its deleter.
    """
    if type(obj).__name__ == "PyCapsule":
        return _cudakit._from_dlpack_capsule(obj)
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(obj).__name__} has no __dlpack__")
    device_type, device_id = obj.__dlpack_device__()
    kwargs = {"max_version": _VERSION}
    if device is not None:
        device_type, device_id = _dl_device(device)
        kwargs["dl_device"] = (device_type, device_id)
    if copy is not None:
        kwargs["copy"] = copy
    # CUDA memory: the producer orders our current stream after its work. Host memory (CPU,
    # pinned, managed) takes stream=None.
    stream = _cudakit._protocol_stream(device_id) if device_type == _CUDA else None
    try:
        capsule = obj.__dlpack__(stream=stream, **kwargs)
    except TypeError:
        # A producer from before DLPack 1.0 takes no max_version (nor dl_device, copy).
        if device is not None:
            raise
        capsule = obj.__dlpack__(stream=stream)
        if copy:
            return _cudakit._from_dlpack_capsule(capsule).copy()
    return _cudakit._from_dlpack_capsule(capsule)


def _dl_device(device) -> tuple[int, int]:
    if isinstance(device, tuple):
        return device
    text = str(device)
    if text == "cpu":
        return (_CPU, 0)
    if text == "cuda":
        return (_CUDA, _cudakit.current_device())
    if text.startswith("cuda:"):
        return (_CUDA, int(text[5:]))
    if isinstance(device, int):
        return (_CUDA, device)
    raise ValueError(f"from_dlpack: device must be 'cpu', 'cuda', 'cuda:N' or (type, id), got {device!r}")
