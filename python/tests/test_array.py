"""cudakit.Array on host memory: shape, strides, dtypes, views, copies (no GPU needed)."""

import pytest

import cudakit


def test_arange_reshape_has_shape_strides_and_values():
    a = cudakit.arange(6, dtype="float32", device="cpu").reshape([2, 3])
    assert a.shape == (2, 3)
    assert a.strides == (12, 4)  # bytes, as NumPy and CuPy
    assert a.stride() == (3, 1)  # elements, as torch
    assert a.dtype == "float32"
    assert a.device == "cpu"
    assert not a.is_cuda
    assert a.ndim == 2 and a.size == 6 and a.nbytes == 24 and a.itemsize == 4 and len(a) == 2
    assert a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_transpose_is_a_strided_view():
    a = cudakit.arange(6, dtype="int64", device="cpu").reshape([2, 3])
    t = a.T
    assert t.shape == (3, 2) and t.stride() == (1, 3)
    assert not t.is_contiguous()
    assert t.data_ptr() == a.data_ptr()
    assert t.tolist() == [[0, 3], [1, 4], [2, 5]]
    c = t.contiguous()
    assert c.is_contiguous() and c.tolist() == t.tolist()


def test_factories_fill_and_item():
    assert cudakit.full([2], 2.5, device="cpu").tolist() == [2.5, 2.5]
    assert cudakit.zeros([3], dtype="int32", device="cpu").tolist() == [0, 0, 0]
    assert cudakit.ones([2], dtype="bool", device="cpu").tolist() == [True, True]
    a = cudakit.empty([4], dtype="float64", device="cpu").fill_(7)
    assert a.tolist() == [7.0] * 4
    assert cudakit.full([], 3, dtype="int64", device="cpu").item() == 3
    assert cudakit.arange(1, 7, 2, dtype="int32", device="cpu").tolist() == [1, 3, 5]


def test_dtype_conversion_and_comparison():
    a = cudakit.arange(4, dtype="float32", device="cpu")
    b = a.to("int64")
    assert b.dtype == "int64" and b.tolist() == [0, 1, 2, 3]
    assert cudakit.equal(a, b.to("float32"))
    assert cudakit.allclose(a, cudakit.arange(4, dtype="float32", device="cpu").fill_(0).copy_(a))
    assert not cudakit.equal(a, cudakit.zeros([4], device="cpu"))


def test_copy_does_not_share_memory():
    a = cudakit.arange(3, device="cpu")
    b = a.copy()
    assert b.data_ptr() != a.data_ptr()
    a.fill_(9)
    assert b.tolist() == [0.0, 1.0, 2.0]


def test_torch_style_dtype_names_are_accepted():
    assert cudakit.zeros([1], dtype="torch.float16", device="cpu").dtype == "float16"
    assert cudakit.zeros([1], dtype="half", device="cpu").dtype == "float16"


def test_bad_arguments_name_what_was_wrong():
    with pytest.raises(ValueError, match="unknown dtype 'complex32'"):
        cudakit.zeros([1], dtype="complex32", device="cpu")
    with pytest.raises(ValueError, match="device: expected 'cpu', 'cuda' or 'cuda:N', got 'tpu'"):
        cudakit.zeros([1], device="tpu")
    with pytest.raises(ValueError):
        cudakit.arange(6, device="cpu").view([4, 2])
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d array"):
        len(cudakit.full([], 1.0, device="cpu"))


def test_host_array_has_no_cuda_array_interface():
    assert not hasattr(cudakit.zeros([2], device="cpu"), "__cuda_array_interface__")


def test_repr_names_shape_dtype_and_device():
    assert repr(cudakit.zeros([2, 1], dtype="uint8", device="cpu")) == \
        "cudakit.Array(shape=[2, 1], dtype=uint8, device='cpu')"
