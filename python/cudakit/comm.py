"""torch.cuda.comm: copies and reductions of Arrays across the GPUs of one process — broadcast
and reduce_add through NCCL (a cached communicator per device list), scatter and gather through
peer copies, each ordered on the current stream of every device it uses."""

from __future__ import annotations

from . import _cudakit

__all__ = ["broadcast", "reduce_add", "scatter", "gather"]


def broadcast(tensor, devices):
    """`tensor` on each of `devices` (the entry for its own device is the array itself)."""
    return _cudakit._comm_broadcast(tensor, list(devices))


def reduce_add(inputs, destination=None):
    """The sum of `inputs` (one per device, one dtype and size) on `destination` (default: the
    first input's device)."""
    return _cudakit._comm_reduce_add(list(inputs), destination)


def scatter(tensor, devices, chunk_sizes=None):
    """`tensor` cut along dimension 0 into one piece per device (`chunk_sizes`, or as even as
    possible), each copied to its device."""
    return _cudakit._comm_scatter(tensor, list(devices), None if chunk_sizes is None else list(chunk_sizes))


def gather(tensors, destination=None):
    """`tensors` joined along dimension 0 on `destination` (default: the first's device)."""
    return _cudakit._comm_gather(list(tensors), destination)
