"""cudakit.matmul's checks and its host path: no GPU, no torch needed."""

import threading

import pytest

import cudakit


def host(shape, value=1.0):
    return cudakit.full(shape, value, dtype="float32", device="cpu")


def test_host_arrays_multiply_through_the_tensor_layer():
    got = cudakit.matmul(host([4, 3], 2.0), host([3, 2], 0.5))
    assert got.shape == (4, 2)
    assert got.tolist() == [[3.0, 3.0]] * 4


def test_refusals_name_the_shapes_and_values():
    with pytest.raises(ValueError, match=r"inner dimensions differ"):
        cudakit.matmul(host([4, 3]), host([4, 2]))
    with pytest.raises(ValueError, match="activation must be None, 'relu' or 'gelu', got 'tanh'"):
        cudakit.matmul(host([4, 3]), host([3, 2]), bias=host([2]), activation="tanh")
    with pytest.raises(ValueError, match="1 dims"):
        cudakit.matmul(host([3]), host([3, 2]), bias=host([2]))
    with pytest.raises(ValueError, match="scale_a / scale_b are for float8 operands, not float32"):
        cudakit.matmul(host([4, 3]), host([3, 2]), scale_a=host([1]), scale_b=host([1]))
    with pytest.raises(ValueError, match="unknown GEMM op code 9"):
        cudakit._cudakit._gemm(9, "n", "n", 1, 1, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1.0, 0.0, 0, 0, 0, 0, 0, -1,
                               False)


def test_the_function_carries_the_module_names():
    from cudakit.matmul import prepare, route_torch, routed_calls

    assert cudakit.matmul.prepare is prepare
    assert cudakit.matmul.route_torch is route_torch is cudakit.route_torch
    assert cudakit.matmul.routed_calls is routed_calls
    # The count is the process's (the routing is process-wide; a backward pass's products run on
    # torch's autograd threads): another thread reads the same count.
    counts = []
    thread = threading.Thread(target=lambda: counts.append(routed_calls()))
    thread.start()
    thread.join()
    assert counts == [routed_calls()]


def test_float8_scale_layouts_are_read_as_torch_scaled_mm_reads_them():
    from cudakit.matmul import _BLK128x128, _OUTER_VEC, _SCALAR, _VEC128, _scale_mode

    # a: [256, 512] (m = 256); b = w.T: [512, 320] (n = 320), scales described as their .T for b.
    assert _scale_mode(host([1]), 256, 512, "scale_a", False) == _SCALAR
    assert _scale_mode(host([256, 1]), 256, 512, "scale_a", False) == _OUTER_VEC
    assert _scale_mode(host([1, 320]), 320, 512, "scale_b", True) == _OUTER_VEC
    # Per token in 1x128 groups: [256, 4] with strides (1, 256), the .T of a contiguous [4, 256].
    assert _scale_mode(host([4, 256]).T, 256, 512, "scale_a", False) == _VEC128
    # A checkpoint's weight_scale_inv [ceil(320/128), 4] row-major, passed as its .T with w.T.
    assert _scale_mode(host([3, 4]).T, 320, 512, "scale_b", True) == _BLK128x128
    # The same scales row-major per token ([256, 4] contiguous) are not what cuBLASLt reads.
    with pytest.raises(ValueError, match=r"scale_a is \(256, 4\) with strides \(4, 1\); for 256 x 512 it must be"):
        _scale_mode(host([256, 4]), 256, 512, "scale_a", False)
    # 640 columns: 5 groups, whose rows cuBLASLt reads 8 apart; an unpadded [3, 5] is refused, the
    # first 5 columns of a [3, 8] are taken.
    with pytest.raises(ValueError, match=r"with strides \(8, 1\) \(128x128 blocks, rows 8 apart"):
        _scale_mode(host([3, 5]).T, 320, 640, "scale_b", True)
    assert _scale_mode(host([3, 8]).slice(1, 0, 5).T, 320, 640, "scale_b", True) == _BLK128x128
    # cuBLASLt is given no stride: 4 groups whose rows lie 8 apart would be read 4 apart.
    with pytest.raises(ValueError, match=r"\(3, 4\) with strides \(8, 1\); .* with strides \(4, 1\)"):
        _scale_mode(host([3, 8]).slice(1, 0, 4).T, 320, 512, "scale_b", True)
    with pytest.raises(ValueError, match="scale_a must be float32, got float16"):
        _scale_mode(cudakit.full([1], 1.0, dtype="float16", device="cpu"), 256, 512, "scale_a", False)


def test_float8_scales_go_with_their_operands_in_cublas_terms():
    from cudakit.matmul import _OUTER_VEC, _SCALAR, _cublas_scales

    # cuBLAS's A is b (n = 320 rows), its B is a (m = 256): b's scale is A's, pointer and mode alike.
    scale_a, scale_b = host([256, 1]), host([1, 320])
    assert _cublas_scales(scale_a, scale_b, 256, 320, 512) == (scale_b.data_ptr(), scale_a.data_ptr(), _OUTER_VEC,
                                                                _OUTER_VEC)
    one_a, one_b = host([]), host([1])
    assert _cublas_scales(one_a, one_b, 256, 320, 512) == (one_b.data_ptr(), one_a.data_ptr(), _SCALAR, _SCALAR)


def test_float8_scales_off_the_gpu_are_refused():
    from cudakit.matmul import _check_scale_device

    # cuBLASLt would read a host pointer on the GPU.
    with pytest.raises(ValueError, match="scale_b is on cpu; the operands are on cuda:0"):
        _check_scale_device(host([]), "scale_b", 0)
