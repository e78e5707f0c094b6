"""cudakit.nccl: stores, argument checks and the library's presence on the host; on a GPU, a
one-rank communicator met through a FileStore (and through init_method) running the collectives
on arrays, with values checked, and its refusals of bad buffers."""

import datetime
import socket

import pytest

import cudakit
from conftest import requires_gpu
from cudakit import _cudakit
from cudakit.nccl import Communicator, FileStore, ReduceOp, TCPStore


def test_is_available_agrees_with_version():
    if cudakit.nccl.is_available():
        major, minor, patch = cudakit.nccl.version()
        assert (major, minor) >= (2, 14) and patch >= 0
        assert cudakit.nccl.nccl_version() == (major, minor, patch)
    else:
        with pytest.raises(cudakit.StateError, match="NCCL"):
            cudakit.nccl.version()


def test_reduce_ops_have_torchs_names_and_strings_are_checked():
    assert [op.name for op in ReduceOp] == ["SUM", "PRODUCT", "MIN", "MAX", "AVG"]
    assert _cudakit._nccl_reduce_op("avg") == ReduceOp.AVG
    assert _cudakit._nccl_reduce_op("PROD") == ReduceOp.PRODUCT
    assert _cudakit._nccl_reduce_op(ReduceOp.MAX) == ReduceOp.MAX
    with pytest.raises(ValueError, match="op: expected a ReduceOp or one of 'sum', 'product', 'min', 'max', 'avg', got 'mean'"):
        _cudakit._nccl_reduce_op("mean")
    with pytest.raises(ValueError, match="got 3"):
        _cudakit._nccl_reduce_op(3)


def test_file_store_round_trip(tmp_path):
    a = FileStore(str(tmp_path / "rdzv"), rank=0, timeout=5)
    b = FileStore(str(tmp_path / "rdzv"), rank=1, timeout=datetime.timedelta(seconds=5))
    a.set("key", b"\x00\x01binary")
    assert b.get("key") == b"\x00\x01binary"
    b.set("text", "caf\u00e9")
    assert a.get("text") == "caf\u00e9".encode()
    assert a.add("counter", 2) == 2 and b.add("counter", 3) == 5
    assert a.check(["key", "counter"]) and not a.check(["key", "absent"])
    b.wait(["key"])
    assert a.timeout == 5.0 and b.rank == 1
    assert a.address.startswith("file://") and a.address.endswith("rdzv")


def test_file_store_get_of_a_missing_key_times_out_naming_it(tmp_path):
    store = FileStore(str(tmp_path), rank=0, timeout=0.2)
    with pytest.raises(cudakit.NcclError, match="never-set"):
        store.get("never-set")


def test_file_store_that_cannot_be_created_names_its_path(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(cudakit.NcclError, match="a-file"):
        FileStore(str(blocker / "rdzv"))


def test_timeouts_are_checked():
    with pytest.raises(ValueError, match="timeout: expected a positive number of seconds"):
        FileStore("/tmp", timeout=-1)
    with pytest.raises(TypeError, match="timeout: expected seconds or a datetime.timedelta, got '5'"):
        FileStore("/tmp", timeout="5")


def test_tcp_store_hosted_here_serves_another_client():
    master = TCPStore("127.0.0.1", 0, is_master=True, timeout=5, rank=0)
    assert master.port > 0
    client = TCPStore("127.0.0.1", master.port, timeout=5, rank=1)
    master.set("id", b"abc")
    assert client.get("id") == b"abc"
    assert client.add("n", 4) == 4 and master.add("n", 1) == 5
    assert master.check(["id", "n"])
    assert client.address == f"tcp://127.0.0.1:{master.port}"


def test_tcp_store_without_a_server_names_the_address():
    with socket.socket() as s:  # a port nothing listens on once the socket is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(cudakit.NcclError, match=f"127.0.0.1:{port}"):
        TCPStore("127.0.0.1", port, timeout=0.3)
    with pytest.raises(ValueError, match="port: expected 1..65535"):
        TCPStore("127.0.0.1", 0)
    with pytest.raises(ValueError, match="port: expected 1..65535"):
        TCPStore("127.0.0.1", 70000, is_master=True)


def test_communicator_arguments_are_checked_before_nccl_is_called():
    uid = bytes(128)
    with pytest.raises(ValueError, match="the world size is 0"):
        Communicator.init_rank(0, uid, 0)
    with pytest.raises(ValueError, match="rank"):
        Communicator.init_rank(2, uid, 2)
    with pytest.raises(ValueError, match="128"):
        Communicator.init_rank(1, b"short", 0)


def test_rendezvous_names_what_is_missing(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="WORLD_SIZE is not set"):
        cudakit.nccl.init_process_group()
    with pytest.raises(ValueError, match="MASTER_ADDR is not set"):
        Communicator.from_rendezvous(rank=0, world_size=1)
    with pytest.raises(ValueError, match="rank 3 is outside 0..1"):
        cudakit.nccl.init_process_group("file:///tmp/unused", rank=3, world_size=2)


def test_init_process_group_checks_its_arguments(tmp_path):
    store = FileStore(str(tmp_path))
    with pytest.raises(ValueError, match="not both"):
        cudakit.nccl.init_process_group("env://", store=store, rank=0, world_size=1)
    with pytest.raises(ValueError, match="rank 1 and world_size 1"):
        cudakit.nccl.init_process_group(store=store, rank=1, world_size=1)
    with pytest.raises(ValueError, match="expected 'env://', 'file:///dir' or 'tcp://host:port', got 'http://x'"):
        cudakit.nccl.init_process_group("http://x", rank=0, world_size=1)
    with pytest.raises(ValueError, match="is not tcp://host:port"):
        cudakit.nccl.init_process_group("tcp://localhost", rank=0, world_size=1)


def one_rank(tmp_path, route):
    if route == "store":
        return cudakit.nccl.init_process_group(store=FileStore(str(tmp_path / "store")), rank=0, world_size=1,
                                               timeout=60)
    return cudakit.nccl.init_process_group(f"file://{tmp_path / 'rdzv'}", rank=0, world_size=1, device=0,
                                           timeout=60)


@requires_gpu
@pytest.mark.parametrize("route", ["store", "init_method"])
def test_one_rank_collectives_move_the_values(tmp_path, route):
    comm = one_rank(tmp_path, route)
    assert (comm.rank, comm.world_size, comm.size()) == (0, 1, 1)
    x = cudakit.arange(1, 9)                       # 1..8
    out = cudakit.zeros([8])
    comm.all_reduce(x, out)                        # one rank: the sum is the input
    assert out.tolist() == x.tolist()
    comm.all_reduce(x, op="max")
    comm.all_reduce(x, op=ReduceOp.AVG)
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    ints = cudakit.full([4], 3.0, dtype="int32")
    comm.all_reduce(ints, op="product")
    assert ints.tolist() == [3, 3, 3, 3]
    b = cudakit.zeros([8])
    comm.broadcast(x, root=0, output=b)
    assert b.tolist() == x.tolist()
    gathered = cudakit.zeros([8])
    comm.all_gather(x, gathered)
    assert gathered.tolist() == x.tolist()
    scattered = cudakit.full([8], -1.0)
    comm.reduce_scatter(x, scattered, op="sum")
    assert scattered.tolist() == x.tolist()
    reduced = cudakit.zeros([8])
    comm.reduce(x, root=0, output=reduced)
    cudakit.synchronize()
    assert reduced.tolist() == x.tolist()
    exchanged = cudakit.zeros([8])
    comm.all_to_all(x, exchanged)
    assert exchanged.tolist() == x.tolist()
    received = cudakit.zeros([8])
    with cudakit.nccl.group():  # a send to itself and its receive, launched together
        comm.send(x, peer=0)
        comm.recv(received, peer=0)
    assert received.tolist() == x.tolist()
    assert comm.operations_issued() == 11
    records = comm.flight_records()
    assert [r["op"] for r in records][:2] == ["all_reduce", "all_reduce"]
    comm.check()
    assert not comm.failed()


@requires_gpu
def test_collectives_on_a_stream_of_ones_own(tmp_path):
    comm = one_rank(tmp_path, "store")
    s = cudakit.Stream()
    with cudakit.stream(s):
        x = cudakit.full([1 << 16], 2.0)
    out = cudakit.zeros([1 << 16], stream=s)
    comm.all_reduce(x, out, stream=s)
    s.synchronize()
    assert out.tolist()[:2] == [2.0, 2.0]


@requires_gpu
def test_collectives_refuse_bad_buffers(tmp_path):
    comm = one_rank(tmp_path, "store")
    x = cudakit.arange(8)
    with pytest.raises(ValueError, match="world_size x the input"):
        comm.all_gather(x, cudakit.zeros([4]))
    with pytest.raises(ValueError, match="the root 1 is outside 0..0"):
        comm.broadcast(x, root=1)
    with pytest.raises(ValueError):
        comm.all_reduce(cudakit.arange(8, device="cpu"))
    with pytest.raises(ValueError, match="op: expected"):
        comm.all_reduce(x, op="mean")
    assert comm.operations_issued() == 0 and not comm.failed()


@requires_gpu
def test_torch_cuda_comm_on_one_device():
    x = cudakit.arange(6)
    [copy] = cudakit.comm.broadcast(x, [0])
    assert copy.tolist() == x.tolist()
    assert cudakit.comm.reduce_add([x]).tolist() == x.tolist()
    pieces = cudakit.comm.scatter(x, [0])
    assert cudakit.comm.gather(pieces).tolist() == x.tolist()
