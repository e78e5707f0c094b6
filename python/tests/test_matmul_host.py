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
    # The count is the calling thread's (the GPU tests route products on this one): a thread that
    # routed nothing has sent nothing.
    counts = []
    thread = threading.Thread(target=lambda: counts.append(routed_calls()))
    thread.start()
    thread.join()
    assert counts == [0]
