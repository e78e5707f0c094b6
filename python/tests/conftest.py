"""Shared fixtures: the GPU tier skips, visibly, where there is no CUDA device."""

import pytest

import cudakit

requires_gpu = pytest.mark.skipif(not cudakit.is_available(), reason="GPU tier: no CUDA device")


def pytest_report_header(config):
    return f"cudakit {cudakit.__version__} from {cudakit.__file__}; CUDA devices: {cudakit.device_count()}"


@pytest.fixture(params=["cpp", "python"])
def route_kernels(request):
    """route_torch()'s kernels for the test: libcudakit_torch's C++ ones (skipped, visibly, where the
    module was built without torch importable), then the Python ones (what such a build registers)."""
    import sys

    module = sys.modules["cudakit.matmul"]
    if request.param == "cpp" and module._native_route() is None:
        pytest.skip("libcudakit_torch is not built here (torch was not importable when the module was built)")
    saved = module._ROUTE_IN_CPP
    module._ROUTE_IN_CPP = request.param == "cpp"
    yield request.param
    module._ROUTE_IN_CPP = saved
