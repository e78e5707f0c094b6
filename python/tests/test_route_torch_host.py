"""route_torch()'s registrations with torch's dispatcher, on the host: the kernels registered at
torch's CPU key instead of CUDA, where every product is one they hand back to torch's own kernel
(CPU tensors), so the registration, the fallbacks and the removal are checked without a GPU. Both
kernels: libcudakit_torch's C++ ones (where the module was built with torch importable) and the
Python ones."""

import sys
import threading

import pytest

import cudakit  # noqa: F401  (cudakit.matmul below is the module)

torch = pytest.importorskip("torch")
matmul_module = sys.modules["cudakit.matmul"]


def cpu_kernel_of(op):
    """The line of torch's dispatch table that says who serves `op` at the CPU key."""
    lines = [line for line in torch._C._dispatch_dump(op).splitlines() if line.startswith("CPU:")]
    assert len(lines) == 1, lines
    return lines[0]


def products():
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(6, 8, generator=g), torch.randn(5, 8, generator=g)
    bias, batch = torch.randn(5, generator=g), torch.randn(3, 8, 4, generator=g)
    out = torch.empty(6, 5)
    return {
        "mm": lambda: x @ w.t(),
        "linear": lambda: torch.nn.functional.linear(x, w, bias),
        "bmm": lambda: torch.bmm(x.reshape(3, 2, 8), batch),
        "addmm_beta": lambda: torch.addmm(bias, x, w.t(), beta=0.5),
        "float64": lambda: x.double() @ w.double().t(),
        "out": lambda: torch.mm(x, w.t(), out=out).clone(),
    }


def test_the_kernels_serve_while_registered_and_torch_after(route_kernels):
    source = "routed_products.cpp" if route_kernels == "cpp" else "matmul.py"
    cases = products()
    want = {name: fn() for name, fn in cases.items()}
    before = matmul_module.routed_calls()
    registration = matmul_module._register_routing("CPU")
    try:
        for op in ("aten::mm", "aten::bmm", "aten::addmm"):
            assert source in cpu_kernel_of(op), cpu_kernel_of(op)
        got = {name: fn() for name, fn in cases.items()}
    finally:
        registration._destroy()
    for op in ("aten::mm", "aten::bmm", "aten::addmm"):
        assert source not in cpu_kernel_of(op), cpu_kernel_of(op)
    for name, value in got.items():
        torch.testing.assert_close(value, want[name], rtol=0, atol=0, msg=name)
    assert matmul_module.routed_calls() == before, "CPU tensors are torch's"


def test_products_from_threads_under_one_registration(route_kernels):
    cases = products()
    want = {name: fn() for name, fn in cases.items()}
    errors = []

    def work():
        try:
            for _ in range(50):
                for name, fn in cases.items():
                    torch.testing.assert_close(fn(), want[name], rtol=0, atol=0, msg=name)
        except Exception as e:  # noqa: BLE001  (reported by the main thread)
            errors.append(e)

    registration = matmul_module._register_routing("CPU")
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        registration._destroy()
    assert not errors, errors[0]


def test_the_cpp_registration_refuses_a_second_one_and_a_bad_key():
    native = matmul_module._native_route()
    if native is None:
        pytest.skip("libcudakit_torch is not built here (torch was not importable when the module was built)")
    first = matmul_module._NativeRouting(native, "CPU")
    try:
        with pytest.raises(RuntimeError, match="at CPU failed: the products are already routed"):
            matmul_module._NativeRouting(native, "CPU")
    finally:
        first._destroy()
    with pytest.raises(RuntimeError, match="at NoSuchKey failed: could not parse dispatch key: NoSuchKey") as error:
        matmul_module._NativeRouting(native, "NoSuchKey")
    assert "Exception raised from" not in str(error.value)
    assert native.cudakit_torch_built_for().decode() == torch.__version__
