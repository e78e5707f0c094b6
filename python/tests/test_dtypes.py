"""The dtypes of today's checkpoints on the host: cudakit.Array's names, factories, casts and
values; DLPack with NumPy for the dtypes NumPy has (and a clear error for the ones it lacks);
safetensors files written by safetensors itself, every dtype, loaded byte for byte; raw bytes
for unknown dtypes, dtype= on load, sharded checkpoints, headers that are not UTF-8."""

import json
import math
import struct

import pytest

import cudakit

np = pytest.importorskip("numpy")

NEW = ["int8", "int16", "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu",
       "complex64", "complex128", "float4_e2m1fn_x2"]
SIZES = {"int8": 1, "int16": 2, "uint16": 2, "uint32": 4, "uint64": 8, "float8_e4m3fn": 1, "float8_e5m2": 1,
         "float8_e8m0fnu": 1, "complex64": 8, "complex128": 16, "float4_e2m1fn_x2": 1, "bool": 1, "uint8": 1,
         "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
# safetensors' names (TensorSpec takes torch's) and the cudakit dtype each loads as.
SAFETENSORS = {"bool": "bool", "uint8": "uint8", "int8": "int8", "int16": "int16", "uint16": "uint16",
               "int32": "int32", "uint32": "uint32", "int64": "int64", "uint64": "uint64", "float16": "float16",
               "bfloat16": "bfloat16", "float32": "float32", "float64": "float64", "complex64": "complex64",
               "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2", "float8_e8m0fnu": "float8_e8m0fnu",
               "float4_e2m1fn_x2": "float4_e2m1fn_x2"}


@pytest.mark.parametrize("dtype", NEW)
def test_every_new_dtype_has_factories_and_its_name(dtype):
    z = cudakit.zeros([2, 3], dtype=dtype, device="cpu")
    assert z.dtype == dtype and z.itemsize == SIZES[dtype] and z.nbytes == 6 * SIZES[dtype]
    assert _bytes(z) == bytes(6 * SIZES[dtype])
    assert repr(z) == f"cudakit.Array(shape=[2, 3], dtype={dtype}, device='cpu')"


def test_values_print_as_python_numbers():
    assert cudakit.full([2], 0.3, dtype="float8_e4m3fn", device="cpu").tolist() == [0.3125, 0.3125]
    assert cudakit.full([1], 470.0, dtype="float8_e4m3fn", device="cpu").item() != 470.0  # NaN: no saturation
    assert math.isnan(cudakit.full([1], 470.0, dtype="float8_e4m3fn", device="cpu").item())
    assert cudakit.full([1], 1e6, dtype="float8_e5m2", device="cpu").item() == math.inf
    assert cudakit.full([1], 3.0, dtype="float8_e8m0fnu", device="cpu").item() == 4.0
    assert cudakit.full([2], 1.5, dtype="complex64", device="cpu").tolist() == [1.5 + 0j, 1.5 + 0j]
    assert cudakit.full([1], 2.0**63, dtype="uint64", device="cpu").item() == 2**63
    assert cudakit.arange(3, dtype="int8", device="cpu").to("complex128").tolist() == [0j, 1 + 0j, 2 + 0j]


def test_undefined_operations_name_the_op_and_the_dtype():
    a = cudakit.zeros([2], dtype="float8_e4m3fn", device="cpu")
    with pytest.raises(ValueError, match="equal is not defined for float8_e4m3fn"):
        cudakit.equal(a, a)
    with pytest.raises(ValueError, match="float4_e2m1fn_x2 is storage only"):
        cudakit.zeros([2], dtype="float4_e2m1fn_x2", device="cpu").to("float32")


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint16", "uint32", "uint64", "complex64", "complex128"])
def test_numpy_dtypes_cross_dlpack_both_ways(dtype):
    n = (np.arange(12) * 3).astype(dtype).reshape(3, 4)
    a = cudakit.from_dlpack(n)
    assert a.dtype == dtype and a.data_ptr() == n.ctypes.data
    assert a.tolist() == n.tolist()
    back = np.from_dlpack(a)
    assert back.dtype == n.dtype and (back == n).all()


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float4_e2m1fn_x2"])
def test_numpy_refuses_what_it_lacks_clearly(dtype):
    a = cudakit.zeros([4], dtype=dtype, device="cpu")
    with pytest.raises((BufferError, TypeError, ValueError, RuntimeError)) as error:
        np.from_dlpack(a)
    assert str(error.value)  # NumPy's own words, not a crash


def test_every_dtype_safetensors_writes_loads_byte_for_byte(tmp_path):
    safetensors = pytest.importorskip("safetensors")
    rng = np.random.default_rng(37)
    buffers = {}
    specs = {}
    for name in SAFETENSORS:
        raw = rng.integers(0, 256, size=48, dtype=np.uint8)
        if name == "bool":
            raw &= 1
        buffers[name] = raw
        specs[name] = safetensors.TensorSpec(dtype=name, shape=[2, 48 // SIZES[name] // 2], data_ptr=raw.ctypes.data,
                                             data_len=48)
    path = tmp_path / "every.safetensors"
    safetensors.serialize_file(specs, str(path))
    theirs = {name: bytes(t["data"]) for name, t in safetensors.deserialize(path.read_bytes())}
    ours = cudakit.gds.load_file(path, device="cpu")
    assert set(ours) == set(theirs)
    for name, array in ours.items():
        assert array.dtype == SAFETENSORS[name], name
        assert _bytes(array) == theirs[name], name
    assert ours["float4_e2m1fn_x2"].shape == (2, 24)  # F4's header counts 96 values


def _bytes(array):
    """An array's bytes, through a uint8 view of a contiguous copy."""
    import ctypes

    c = array.contiguous()
    return ctypes.string_at(c.data_ptr(), c.nbytes)


def _file(tensors, data):
    header = json.dumps(tensors).encode()
    return struct.pack("<Q", len(header)) + header + data


def test_unknown_dtype_is_refused_by_name_or_taken_raw(tmp_path):
    path = tmp_path / "f6.safetensors"
    path.write_bytes(_file({"a": {"dtype": "F6_E2M3", "shape": [4], "data_offsets": [0, 3]},
                            "b": {"dtype": "F8_E4M3FNUZ", "shape": [2], "data_offsets": [3, 5]}}, b"\x01\x02\x03\x04\x05"))
    with pytest.raises(ValueError, match="has dtype F6_E2M3, which cudakit's tensor lacks"):
        cudakit.gds.load_file(path)
    loaded = cudakit.gds.load_safetensors(path, raw=True)
    assert _bytes(loaded.tensors["a"]) == b"\x01\x02\x03" and loaded.tensors["a"].dtype == "uint8"
    assert loaded.raw["b"]["dtype"] == "F8_E4M3FNUZ" and loaded.raw["b"]["shape"] == (2,)


def test_dtype_converts_model_floats_on_load(tmp_path):
    path = tmp_path / "m.safetensors"
    w = cudakit.arange(-2.0, 2.0, 0.5, dtype="float32", device="cpu")
    cudakit.gds.save_file({"w": w, "q": w.to("float8_e4m3fn"), "i": cudakit.arange(3, dtype="int16", device="cpu")}, path)
    loaded = cudakit.gds.load_file(path, dtype="bfloat16", dtypes={"q": "float32"})
    assert loaded["w"].dtype == "bfloat16" and loaded["w"].tolist() == w.tolist()
    assert loaded["q"].dtype == "float32" and loaded["q"].tolist() == w.tolist()
    assert loaded["i"].dtype == "int16"


def test_sharded_checkpoint_loads_as_one(tmp_path):
    cudakit.gds.save_file({"a": cudakit.full([4], 2.0, dtype="float8_e5m2", device="cpu")}, tmp_path / "s1.safetensors")
    cudakit.gds.save_file({"b": cudakit.full([2], 1.0, dtype="complex64", device="cpu")}, tmp_path / "s2.safetensors")
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {"total_size": 20}, "weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}}))
    loaded = cudakit.gds.load_safetensors(index)
    assert loaded.tensors["a"].tolist() == [2.0] * 4 and loaded.tensors["b"].tolist() == [1 + 0j] * 2
    assert loaded.metadata["total_size"] == "20"


@pytest.mark.parametrize("header", [b'{"w\xff":1}', b'{"__metadata__":{"k":"\xc0\xaf"}}', b'{}  \xed\xa0\x80'])
def test_a_header_that_is_not_utf8_raises_the_loaders_own_error(tmp_path, header):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    with pytest.raises(ValueError, match=r"not valid UTF-8: byte 0x") as error:
        cudakit.gds.load_file(path)
    assert "\\x" in str(error.value) and "bad.safetensors" in str(error.value)
    with pytest.raises(ValueError, match="not valid UTF-8"):
        cudakit.gds.read_safetensors_header(path)
