"""The CUPTI profiler with Chrome/Perfetto export, and torch.cuda.profiler's start/stop."""

from __future__ import annotations

import contextlib

from . import _cudakit
from ._cudakit import Profiler
from ._runtime import check_error, cudart  # noqa: F401 (torch.cuda.profiler has them in its namespace)

__all__ = ["Profiler", "init", "profile", "start", "stop"]


def init(output_file=None, flags=None, output_mode=None) -> None:
    """torch.cuda.profiler.init: cudaProfilerInitialize, which CUDA 12 removed; torch raises for
    it on CUDA 12 and later, and so does cudakit (use start/stop, or cudakit.profiler.profile)."""
    raise RuntimeError("profiler.init: cudaProfilerInitialize does not exist in CUDA 12 and later; "
                       "use cudakit.profiler.start()/stop() or cudakit.profiler.profile()")


def start() -> None:
    """cudaProfilerStart (torch.cuda.profiler.start)."""
    _cudakit._cuda_profiler_start()


def stop() -> None:
    """cudaProfilerStop (torch.cuda.profiler.stop)."""
    _cudakit._cuda_profiler_stop()


@contextlib.contextmanager
def profile(trace_path: str | None = None, **options):
    """`with cudakit.profiler.profile("trace.json") as p:` — records CUPTI activity inside the
    block and, given a path, writes the Chrome/Perfetto trace there at the end."""
    p = Profiler(start=True, **options)
    try:
        yield p
    finally:
        p.stop()
        if trace_path is not None:
            p.export_chrome_trace(trace_path)
