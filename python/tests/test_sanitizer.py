"""cudakit.sanitizer: its switches and argument checks on the host; on a GPU, a planted
cross-stream race reported (and refused in mode "throw"), and the same program with a wait not
reported."""

import pytest

import cudakit
from conftest import requires_gpu


@pytest.fixture(autouse=True)
def sanitizer_off_after():
    yield
    cudakit.sanitizer.disable()


def test_enable_disable_and_stats():
    assert not cudakit.sanitizer.is_enabled()
    cudakit.sanitizer.enable("log", stacks="off")
    assert cudakit.sanitizer.is_enabled()
    stats = cudakit.sanitizer.stats()
    assert set(stats) == {"operations", "unchecked_launches", "replayed_operations", "hazards", "streams",
                          "shadow_ranges", "stacks"}
    assert stats["hazards"] == 0 and cudakit.sanitizer.reports() == []
    cudakit.sanitizer.enable("throw")  # a new mode, the same model
    assert cudakit.sanitizer.is_enabled()
    cudakit.sanitizer.disable()
    assert not cudakit.sanitizer.is_enabled()
    assert all(v == 0 for v in cudakit.sanitizer.stats().values())


def test_torchs_name_enables_throw_mode():
    cudakit.sanitizer.enable_cuda_sanitizer()
    assert cudakit.sanitizer.is_enabled()


def test_bad_options_are_refused_and_leave_it_off():
    with pytest.raises(ValueError, match="mode: expected 'throw', 'log' or 'abort', got 'loud'"):
        cudakit.sanitizer.enable("loud")
    with pytest.raises(ValueError, match="'sometimes' is not a way to capture stacks: use fp, unwind or off"):
        cudakit.sanitizer.enable("log", stacks="sometimes")
    with pytest.raises(ValueError, match="stack_depth: expected 0..64 frames, got 65"):
        cudakit.sanitizer.enable("log", stack_depth=65)
    assert not cudakit.sanitizer.is_enabled()


def test_sanitize_refuses_to_nest():
    with cudakit.sanitizer.sanitize("log") as found:
        assert cudakit.sanitizer.is_enabled()
        with pytest.raises(RuntimeError, match="already enabled"):
            with cudakit.sanitizer.sanitize():
                pass
    assert found == [] and not cudakit.sanitizer.is_enabled()


def test_sanitizer_error_is_a_runtime_error_of_the_package():
    assert issubclass(cudakit.sanitizer.SanitizerError, RuntimeError)
    assert cudakit.SanitizerError is cudakit.sanitizer.SanitizerError


N = 1 << 16


def racy_program(wait: bool):
    """Writes `a` on s1 and reads it on s2, with or without s2 waiting for s1 first."""
    s1, s2 = cudakit.Stream(), cudakit.Stream()
    with cudakit.stream(s1):
        a = cudakit.empty([N])
        a.fill_(1.0)
    if wait:
        s2.wait_stream(s1)
    with cudakit.stream(s2):
        b = a.copy()
    cudakit.synchronize()  # before the arrays are freed: no record_stream needed
    return s1, s2, a, b


@requires_gpu
@pytest.mark.parametrize("wait", [False, True])
def test_cross_stream_read_is_reported_without_a_wait(wait):
    with cudakit.sanitizer.sanitize("log") as found:
        s1, s2, a, b = racy_program(wait)
        assert cudakit.sanitizer.stats()["operations"] >= 2
    text = "\n".join(r["text"] for r in found)
    if wait:
        assert found == [], text
        assert b.tolist()[:3] == [1.0, 1.0, 1.0]
        return
    kinds = [r["kind"] for r in found]
    assert "read_after_write" in kinds, text
    race = found[kinds.index("read_after_write")]
    assert race["current"]["stream"] == s2.cuda_stream
    assert race["previous"]["stream"] == s1.cuda_stream and race["previous"]["mode"] == "write"
    assert race["overlap_bytes"] > 0
    assert a.data_ptr() <= race["overlap_begin"] < a.data_ptr() + a.nbytes
    assert "read-after-write race" in race["text"]


@requires_gpu
def test_throw_mode_refuses_the_racy_operation_with_its_report():
    cudakit.sanitizer.enable("throw")  # first: the model knows only what runs after enable()
    s1, s2 = cudakit.Stream(), cudakit.Stream()
    with cudakit.stream(s1):
        a = cudakit.empty([N])
        a.fill_(1.0)
    with cudakit.stream(s2):
        with pytest.raises(cudakit.sanitizer.SanitizerError) as refused:
            a.copy()
    cudakit.sanitizer.disable()
    report = refused.value.report
    assert report["kind"] == "read_after_write"
    assert report["text"] in str(refused.value)
    assert report["previous"]["stream"] == s1.cuda_stream
    assert report["current"]["stream"] == s2.cuda_stream
    cudakit.synchronize()
