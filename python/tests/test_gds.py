"""cudakit.gds: GdsFile and safetensors on host arrays (the same engine as for GPU memory, with
memcpy as its copy step), malformed files refused with the reason, options checked; on a GPU,
device arrays written and read back, and a safetensors round trip on cuda:0."""

import json
import os
import struct

import pytest

import cudakit
from conftest import requires_gpu
from cudakit.gds import GdsFile

PATHS = {"cufile_direct", "cufile_compat", "cudakit_odirect", "buffered", "mapped"}


def test_host_array_save_and_load_round_trip(tmp_path):
    path = tmp_path / "data.bin"
    a = cudakit.arange(1000, dtype="float32", device="cpu")
    f = GdsFile(str(path), "w")
    report = f.save(a)
    assert (report.bytes, report.direction, report.requests) == (4000, "save", 1)
    assert report.path in PATHS and report.direct_bytes + report.buffered_bytes == 4000
    assert str(report).startswith("save 4000 bytes via ")
    f.save(cudakit.full([16], 7.0, device="cpu"), offset=8192)
    f.sync()
    assert f.size() == 8192 + 64 == path.stat().st_size
    r = GdsFile(str(path))
    b = cudakit.zeros([1000], device="cpu")
    assert r.load(b).bytes == 4000
    assert b.tolist() == a.tolist()
    tail = cudakit.zeros([16], device="cpu")
    r.load_storage(tail, 8192)  # torch's name
    assert tail.tolist() == [7.0] * 16
    assert r.last_io().direction == "load"
    stats = r.statistics()
    assert stats["loads"] == 2 and stats["saves"] == 0
    assert sum(p["bytes"] for name, p in stats.items() if name in PATHS) == 4064
    assert r.filename == str(path) and isinstance(r.file_system, str)
    assert r.o_direct or r.o_direct_status


def test_batches_and_async_transfers(tmp_path):
    path = str(tmp_path / "batch.bin")
    x = cudakit.arange(256, dtype="int64", device="cpu")
    y = cudakit.full([128], 2.5, dtype="float64", device="cpu")
    w = GdsFile(path, "w")
    assert w.save_batch([(x, 0), (y, 4096)]).requests == 2
    w.save_async(x, 8192).wait()
    x2 = cudakit.zeros([256], dtype="int64", device="cpu")
    y2 = cudakit.zeros([128], dtype="float64", device="cpu")
    r = GdsFile(path)
    r.load_batch([(x2, 0), (y2, 4096)])
    assert x2.tolist() == list(range(256)) and y2.tolist() == [2.5] * 128
    x3 = cudakit.zeros([256], dtype="int64", device="cpu")
    ticket = r.load_async(x3, 8192)
    assert ticket.wait().bytes == 2048
    assert x3.tolist() == list(range(256))


def test_reads_past_the_end_and_into_read_only_arrays_are_refused(tmp_path):
    path = tmp_path / "small.bin"
    path.write_bytes(bytes(100))
    f = GdsFile(str(path))
    with pytest.raises(ValueError, match="100"):
        f.load(cudakit.zeros([100], device="cpu"))  # 400 bytes from a 100-byte file
    numpy = pytest.importorskip("numpy")
    frozen = numpy.zeros(100, dtype=numpy.float32)
    frozen.flags.writeable = False
    readonly = cudakit.from_dlpack(frozen)  # DLPack 1.1's read-only flag
    assert readonly.readonly
    with pytest.raises(ValueError, match="GdsFile.load: the array is read-only"):
        f.load(readonly.slice(0, 0, 25))


def test_open_errors_are_oserrors_naming_the_path(tmp_path):
    missing = tmp_path / "missing.bin"
    with pytest.raises(cudakit.gds.IoError, match="missing.bin") as raised:
        GdsFile(str(missing))
    assert isinstance(raised.value, OSError)


def test_flags_and_options_are_checked(tmp_path):
    path = str(tmp_path / "f.bin")
    with pytest.raises(ValueError, match="flags: expected open\\(2\\) flags"):
        GdsFile(path, "x")
    with pytest.raises(ValueError, match="CUDAKIT_GDS_SPEED"):
        GdsFile(path, "w", speed=3)
    with pytest.raises(ValueError, match="CUDAKIT_GDS_CUFILE"):
        GdsFile(path, "w", cufile="sometimes")
    f = GdsFile(path, os.O_RDWR | os.O_CREAT, io_threads=2, o_direct=False, cufile="never")
    assert not f.o_direct and "O_DIRECT turned off" in f.o_direct_status
    assert not f.handle_registered and "cuFile turned off" in f.cufile_status
    assert f.save(cudakit.ones([8], device="cpu")).path == "buffered"


def test_support_says_which_path_serves_files():
    s = cudakit.gds.support()
    assert set(s) == {"cufile", "nvidia_fs", "nvidia_fs_version"}
    assert s["nvidia_fs"]["supported"] == (s["nvidia_fs_version"] != "")
    assert cudakit.gds.is_gds_available() == (s["cufile"]["supported"] and s["nvidia_fs"]["supported"])


def test_safetensors_round_trip_on_the_host(tmp_path):
    path = tmp_path / "model.safetensors"
    tensors = {
        "weight": cudakit.arange(12, device="cpu").reshape([3, 4]),
        "bias": cudakit.full([4], -1, dtype="int64", device="cpu"),
        "half": cudakit.full([2], 0.5, dtype="float16", device="cpu"),
    }
    report = cudakit.gds.save_file(tensors, path, metadata={"format": "pt"})
    assert report.direction == "save"
    # The file is safetensors as its specification lays it out: a little-endian u64 length, a
    # JSON header, the data in name order.
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    assert header["__metadata__"] == {"format": "pt"}
    assert header["weight"] == {"dtype": "F32", "shape": [3, 4], "data_offsets": [36, 84]}
    assert header["bias"]["dtype"] == "I64" and header["half"]["dtype"] == "F16"
    assert struct.unpack("<4f", raw[8 + length + 36:8 + length + 52]) == (0.0, 1.0, 2.0, 3.0)
    loaded = cudakit.gds.load_file(path)
    assert set(loaded) == set(tensors)
    for name, array in tensors.items():
        assert loaded[name].shape == array.shape and loaded[name].dtype == array.dtype
        assert loaded[name].device == "cpu"
        assert loaded[name].tolist() == array.tolist()
    full = cudakit.gds.load_safetensors(path, "cpu")
    assert full.metadata == {"format": "pt"} and full.report.bytes == 48 + 32 + 4
    parsed = cudakit.gds.read_safetensors_header(path)
    assert [t["name"] for t in parsed["tensors"]] == ["bias", "half", "weight"]
    assert parsed["tensors"][2]["shape"] == (3, 4) and parsed["tensors"][2]["cudakit_dtype"] == "float32"


def test_a_cached_file_loads_on_the_host_as_its_pages(tmp_path):
    """A file in the page cache (just written) loads on the host mapped, as safetensors' loader
    does: the report says so, a write to an array stays in the process, and a save over the file
    replaces it, leaving the mapped arrays their old bytes."""
    path = tmp_path / "cached.safetensors"
    cudakit.gds.save_file({"w": cudakit.arange(16, device="cpu"), "u": cudakit.ones([1024], device="cpu")}, path)
    before = path.read_bytes()
    loaded = cudakit.gds.load_safetensors(path, "cpu")
    assert loaded.report.path == "mapped" and loaded.report.bytes == 64 + 4096
    w = loaded.tensors["w"]
    assert w.tolist() == list(range(16))
    w.fill_(3)
    assert w.tolist() == [3.0] * 16 and path.read_bytes() == before
    cudakit.gds.save_file({"v": cudakit.zeros([2], device="cpu")}, path)  # replaced, not truncated
    assert w.tolist() == [3.0] * 16 and list(cudakit.gds.load_file(path)) == ["v"]
    assert loaded.tensors["u"].tolist() == [1.0] * 1024  # pages never written: still the old file's
    copied = cudakit.gds.load_safetensors(path, "cpu", map_cached=False)
    assert copied.report.path != "mapped" and copied.tensors["v"].tolist() == [0.0, 0.0]


def test_atomic_save_replaces_the_file_and_leaves_nothing_beside_it(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    cudakit.gds.save_file({"a": cudakit.ones([4], device="cpu")}, path)
    cudakit.gds.save_file({"b": cudakit.zeros([2], device="cpu")}, path, atomic=True)
    assert list(cudakit.gds.load_file(path)) == ["b"]
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]


def write_safetensors(path, header_bytes: bytes, data: bytes = b"", length=None):
    length = len(header_bytes) if length is None else length
    path.write_bytes(struct.pack("<Q", length) + header_bytes + data)


@pytest.mark.parametrize("header, data, length, reason", [
    (b"", b"", None, "8"),                                              # not even the length
    (b"{}", b"", 1 << 40, "100000000|100,000,000|limit"),               # a length past the limit
    (b"{not json", b"", None, "JSON|json|parse"),
    (b'{"t": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}', b"\0" * 8, None, "end|past|size"),
    (b'{"t": {"dtype": "F99", "shape": [1], "data_offsets": [0, 4]}}', b"\0" * 4, None, "F99"),
    (b'{"t": {"dtype": "F32", "shape": [3], "data_offsets": [0, 4]}}', b"\0" * 4, None, "shape|bytes"),
    (b'{"t": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}', b"\0" * 4, None, "negative|-1"),
    # nesting past the readers' limit, refused before parsing (notes/hostile-input.md)
    (b'{"__metadata__": {}, "x": ' + b"[" * 100000 + b"]" * 100000 + b"}", b"", None, "nests deeper than 256"),
    (b'{"t": "' + b"x" * 300000 + b'\\q"}', b"", None, "not valid JSON"),
])
def test_malformed_safetensors_are_refused_naming_the_file_and_the_reason(tmp_path, header, data, length, reason):
    path = tmp_path / "bad.safetensors"
    if header == b"" and length is None:
        path.write_bytes(b"\x01\x02\x03")
    else:
        write_safetensors(path, header, data, length)
    with pytest.raises(ValueError, match=reason) as refused:
        cudakit.gds.load_file(path)
    assert "bad.safetensors" in str(refused.value)
    assert len(str(refused.value)) < 1000, "a message quotes at most ~200 bytes of the input"


def test_save_file_takes_a_dict_of_arrays(tmp_path):
    with pytest.raises(TypeError, match="dict of str to cudakit.Array"):
        cudakit.gds.save_file({"a": [1, 2, 3]}, tmp_path / "x.safetensors")


@requires_gpu
def test_device_array_written_and_read_back(tmp_path):
    path = str(tmp_path / "gpu.bin")
    n = (1 << 22) + 3  # not a multiple of the O_DIRECT alignment: an unaligned tail
    a = cudakit.rand([n])
    report = GdsFile(path, "w").save(a)
    assert report.bytes == 4 * n and report.path in PATHS
    b = cudakit.zeros([n])
    back = GdsFile(path).load(b)
    assert back.bytes == 4 * n and back.path in PATHS
    assert cudakit.equal(a, b)
    # Into a slice at an offset of the file, on a stream of its own.
    s = cudakit.Stream()
    part = cudakit.zeros([1000], stream=s)
    GdsFile(path).load(part, offset=4 * 12345, stream=s)
    s.synchronize()
    assert part.tolist() == a.slice(0, 12345, 13345).tolist()


@requires_gpu
def test_safetensors_round_trip_on_the_gpu(tmp_path):
    path = tmp_path / "gpu.safetensors"
    tensors = {
        "w": cudakit.randn([256, 128]),
        "idx": cudakit.arange(0, 1000, dtype="int64"),
        "h": cudakit.randn([64]).to("float16"),
    }
    cudakit.gds.save_file(tensors, path, metadata={"step": "7"})
    loaded = cudakit.gds.load_safetensors(path, device="cuda:0")
    assert loaded.metadata == {"step": "7"}
    for name, array in tensors.items():
        got = loaded.tensors[name]
        assert got.device == "cuda:0" and got.dtype == array.dtype and got.shape == array.shape
        assert cudakit.equal(got, array), name
    on_host = cudakit.gds.load_file(path)
    assert on_host["idx"].tolist() == list(range(1000))
