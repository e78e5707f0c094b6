"""Shared fixtures: the GPU tier skips, visibly, where there is no CUDA device."""

import pytest

import cudakit

requires_gpu = pytest.mark.skipif(not cudakit.is_available(), reason="GPU tier: no CUDA device")


def pytest_report_header(config):
    return f"cudakit {cudakit.__version__} from {cudakit.__file__}; CUDA devices: {cudakit.device_count()}"
