"""torch.cuda.comm: copies and reductions of Arrays across the GPUs of one process — broadcast
and reduce_add through NCCL (a cached communicator per device list), scatter and gather through
peer copies, each ordered on the current stream of every device it uses."""

from __future__ import annotations

from . import _cudakit

__all__ = ["broadcast", "broadcast_coalesced", "reduce_add", "reduce_add_coalesced", "scatter", "gather"]


def broadcast(tensor, devices):
    """`tensor` on each of `devices` (the entry for its own device is the array itself)."""
    return _cudakit._comm_broadcast(tensor, list(devices))


def reduce_add(inputs, destination=None):
    """The sum of `inputs` (one per device, one dtype and size) on `destination` (default: the
    first input's device)."""
    return _cudakit._comm_reduce_add(list(inputs), destination)


def broadcast_coalesced(tensors, devices, buffer_size: int = 10485760):
    """torch.cuda.comm.broadcast_coalesced: each of `tensors` (all on one device) on each of
    `devices`, as one tuple of arrays per device. ``buffer_size`` is accepted for torch's
    signature: cudakit sends the tensors in one NCCL group rather than through a buffer."""
    return [tuple(per_device) for per_device in _cudakit._comm_broadcast_coalesced(list(tensors), list(devices))]


def reduce_add_coalesced(inputs, destination=None, buffer_size: int = 10485760):
    """torch.cuda.comm.reduce_add_coalesced: ``inputs`` is one list of arrays per device; the
    element-wise sums of the lists, on `destination` (default: the first list's device).
    ``buffer_size`` is accepted for torch's signature, as in broadcast_coalesced."""
    return _cudakit._comm_reduce_add_coalesced([list(per_device) for per_device in inputs], destination)


def scatter(tensor, devices, chunk_sizes=None):
    """`tensor` cut along dimension 0 into one piece per device (`chunk_sizes`, or as even as
    possible), each copied to its device."""
    return _cudakit._comm_scatter(tensor, list(devices), None if chunk_sizes is None else list(chunk_sizes))


def gather(tensors, destination=None):
    """`tensors` joined along dimension 0 on `destination` (default: the first's device)."""
    return _cudakit._comm_gather(list(tensors), destination)
