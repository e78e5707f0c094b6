"""NCCL collectives over cudakit.Array (torch.cuda.nccl, and torch.distributed's process group
as one object, the Communicator). NCCL is loaded at run time: is_available() says whether it
is there, and without it every call that needs it raises cudakit.StateError saying why.

    comm = cudakit.nccl.init_process_group("file:///shared/rdzv", rank=r, world_size=n)
    comm.all_reduce(grads)                          # sum, in place, on the current stream
    comm.all_gather(shard, full)                    # full: world_size x shard
    comm.reduce_scatter(full, shard, op="avg")
    with cudakit.nccl.group():
        comm.send(a, peer=nxt); comm.recv(b, peer=prv)
"""

from __future__ import annotations

import contextlib
import urllib.parse

from . import _cudakit
from ._device import _index
from ._cudakit import Communicator, FileStore, NcclError, ReduceOp, Store, TCPStore

__all__ = ["Communicator", "FileStore", "NcclError", "ReduceOp", "Store", "TCPStore", "group",
           "init_process_group", "init_rank", "is_available", "nccl_version", "unique_id", "version"]


def is_available(tensors=None) -> bool:
    """Whether libnccl loaded with every entry point cudakit needs; given `tensors` (Arrays),
    also whether they can take part in one single-process collective (torch.cuda.nccl's)."""
    if tensors is None:
        return _cudakit._nccl_is_available()
    return _cudakit._nccl_is_available_for(list(tensors))


def version() -> tuple[int, int, int]:
    """(major, minor, patch) of the loaded NCCL (torch.cuda.nccl.version()); StateError when
    NCCL is not loaded."""
    return _cudakit._nccl_version()


nccl_version = version


def unique_id() -> bytes:
    """A new NCCL unique id (torch.cuda.nccl.unique_id()): 128 bytes to hand every rank."""
    return _cudakit._nccl_unique_id()


def init_rank(num_ranks: int, uid: bytes, rank: int, device=None, **options) -> Communicator:
    """torch.cuda.nccl.init_rank: rank `rank` of `num_ranks`, met through `uid`."""
    return Communicator.init_rank(num_ranks, uid, rank, device, **options)


def _unique_id_key(name: str) -> str:
    # The key Communicator.from_rendezvous uses, so that ranks of either route can meet.
    return f"cudakit/nccl/{name}/unique_id"


def init_process_group(init_method: str | None = None, *, rank: int = -1, world_size: int = -1,
                       store: Store | None = None, device=None, timeout=None, store_timeout=300.0,
                       name: str = "default") -> Communicator:
    """A communicator of `world_size` ranks met as torch.distributed.init_process_group does,
    returned rather than made the default group:

    - store: a FileStore or TCPStore every rank reaches; rank 0 publishes the NCCL id there;
    - init_method "file:///dir": a FileStore in that directory (a folder, not torch's file);
    - init_method "tcp://host:port": rank 0 hosts a TCP store there;
    - neither, or "env://": RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT.

    rank and world_size (-1: from the environment) are required with a store. device: the rank's
    GPU (default: LOCAL_RANK, else the rank, for init_method; the current device with a store).
    timeout: seconds (or a timedelta) that initialization and each operation may take."""
    if store is not None:
        if init_method is not None:
            raise ValueError("init_process_group: give a store or an init_method, not both")
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(f"init_process_group: rank {rank} and world_size {world_size} must satisfy "
                             "0 <= rank < world_size with a store")
        key = _unique_id_key(name)
        if rank == 0:
            uid = unique_id()
            store.set(key, uid)
        else:
            uid = store.get(key)
        return Communicator.init_rank(world_size, uid, rank, device, timeout=timeout, name=name, store=store)
    local_rank = -1 if device is None else _index(device)
    rendezvous = dict(rank=rank, world_size=world_size, local_rank=local_rank, store_timeout=store_timeout,
                      timeout=timeout, name=name)
    if init_method is None or init_method == "env://":
        return Communicator.from_rendezvous(**rendezvous)
    url = urllib.parse.urlparse(init_method)
    if url.scheme == "file":
        path = urllib.parse.unquote(url.path)
        if not path:
            raise ValueError(f"init_method: {init_method!r} names no directory")
        return Communicator.from_rendezvous(store_path=path, **rendezvous)
    if url.scheme == "tcp":
        if not url.hostname or url.port is None:
            raise ValueError(f"init_method: {init_method!r} is not tcp://host:port")
        return Communicator.from_rendezvous(master_addr=url.hostname, master_port=url.port, **rendezvous)
    raise ValueError(f"init_method: expected 'env://', 'file:///dir' or 'tcp://host:port', got {init_method!r}")


@contextlib.contextmanager
def group():
    """`with cudakit.nccl.group():` — ncclGroupStart/ncclGroupEnd: the operations issued inside
    are launched together at the end (send/recv rings, one call per device)."""
    scope = _cudakit._NcclGroupScope()
    scope.enter()
    try:
        yield
    except BaseException:
        scope.exit(raising=True)
        raise
    scope.exit(raising=False)
