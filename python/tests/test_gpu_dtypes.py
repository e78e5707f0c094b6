"""GPU tier of the new dtypes: every dtype through DLPack to and from torch (bytes and dtype
kept), CuPy and JAX where they have it; safetensors files written by safetensors.torch loaded on
cuda:0 byte for byte against safetensors.torch.load_file (skips without a GPU or the peers)."""

import os

import pytest

import cudakit
from conftest import requires_gpu

pytestmark = requires_gpu

DTYPES = ["int8", "int16", "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu",
          "complex64", "complex128", "float4_e2m1fn_x2", "bfloat16", "bool"]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _random_bytes(torch, dtype, shape=(4, 8), seed=0):
    """A CUDA tensor of torch dtype `dtype` whose bytes are random (valid bools)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    itemsize = torch.empty((), dtype=dtype).element_size()
    raw = torch.randint(0, 256, (shape[0], shape[1] * itemsize), dtype=torch.uint8, device="cuda", generator=g)
    if dtype == torch.bool:
        raw &= 1
    return raw.view(dtype)


@pytest.mark.parametrize("name", DTYPES)
def test_torch_round_trip_keeps_dtype_and_bytes(torch, name):
    dtype = getattr(torch, name)
    t = _random_bytes(torch, dtype)
    a = cudakit.from_dlpack(t)
    assert a.dtype == name and a.data_ptr() == t.data_ptr() and a.shape == tuple(t.shape)
    back = torch.from_dlpack(a)
    assert back.dtype == dtype and back.data_ptr() == t.data_ptr()
    assert torch.equal(back.view(torch.uint8), t.view(torch.uint8))


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu"])
def test_fp8_casts_match_torch(torch, name):
    dtype = getattr(torch, name)
    x = torch.cat([torch.randn(100_000, device="cuda") * 300,
                   torch.tensor([448, 464, 470, 480, 57344, 61440, 65536, 1e30, float("inf"), float("-inf"),
                                 float("nan"), 0.0, -0.0, 1e-40, 1.5, 3.0], device="cuda")])
    ours = torch.from_dlpack(cudakit.from_dlpack(x).to(name))
    assert torch.equal(ours.view(torch.uint8), x.to(dtype).view(torch.uint8))
    codes = torch.arange(256, dtype=torch.uint8, device="cuda").view(dtype)
    back = torch.from_dlpack(cudakit.from_dlpack(codes).to("float32"))
    assert torch.equal(back.view(torch.int32)[~back.isnan()], codes.float().view(torch.int32)[~back.isnan()])
    assert torch.equal(back.isnan(), codes.float().isnan())


def test_safetensors_torch_files_load_byte_for_byte_on_the_gpu(torch, tmp_path):
    st = pytest.importorskip("safetensors.torch")
    names = ["bool", "uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
             "bfloat16", "float32", "float64", "complex64", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu",
             "float4_e2m1fn_x2"]
    tensors = {n: _random_bytes(torch, getattr(torch, n), seed=i).cpu() for i, n in enumerate(names)}
    path = tmp_path / "every.safetensors"
    st.save_file(tensors, str(path))
    theirs = st.load_file(str(path), device="cuda:0")
    for device in ("cuda:0", "cpu"):
        ours = cudakit.gds.load_file(path, device=device)
        assert set(ours) == set(theirs)
        for n, t in theirs.items():
            mine = torch.from_dlpack(ours[n])
            assert mine.dtype == t.dtype and mine.shape == t.shape, n
            assert torch.equal(mine.cuda().view(torch.uint8), t.view(torch.uint8)), n


def test_cupy_takes_what_it_has():
    cupy = pytest.importorskip("cupy")
    for name in ["int8", "int16", "uint16", "uint32", "uint64", "complex64", "complex128"]:
        a = cudakit.arange(6, dtype="int16", device="cuda").to(name)
        c = cupy.from_dlpack(a)
        assert str(c.dtype) == name and int(c.data.ptr) == a.data_ptr()
        back = cudakit.from_dlpack(c * 2)
        assert back.dtype == name and back.tolist() == [2 * v for v in a.tolist()]
    with pytest.raises((BufferError, TypeError, ValueError, RuntimeError)) as error:  # CuPy has no FP8
        cupy.from_dlpack(cudakit.zeros([4], dtype="float8_e4m3fn", device="cuda"))
    assert str(error.value)


def test_jax_both_ways_for_its_dtypes():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    for name in ["int8", "int16", "uint16", "uint32", "complex64", "bfloat16", "float8_e4m3fn", "float8_e5m2"]:
        a = cudakit.arange(4, dtype="int16", device="cuda").to(name)
        j = jnp.from_dlpack(a)
        assert str(j.dtype) == name
        back = cudakit.from_dlpack(j)
        assert back.dtype == name and back.to("float64" if "complex" not in name else "complex128").tolist() == \
            a.to("float64" if "complex" not in name else "complex128").tolist()
