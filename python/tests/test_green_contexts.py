"""cudakit.green_contexts: SM counts checked and the partition arithmetic on the host; on a GPU, a
context of fewer SMs whose stream runs array operations with correct results, disjoint splits,
and torch's set_context / pop_context."""

import pytest

import cudakit
from conftest import requires_gpu
from cudakit import _cudakit
from cudakit.green_contexts import GreenContext, sm_count_of

# An H200's SM resource as its driver describes it: 132 SMs, partitions of at least 8, in 8s.
H200 = dict(sm_count=132, min_partition=8, alignment=8)


@pytest.mark.parametrize("bad", [0, -3])
def test_sm_counts_must_be_positive(bad):
    with pytest.raises(ValueError, match=f"num_sms: expected a positive number of SMs, got {bad}"):
        GreenContext.create(bad)
    with pytest.raises(ValueError, match=f"sm_counts: expected a positive number of SMs, got {bad}"):
        GreenContext.split([8, bad])


def test_split_needs_a_partition():
    with pytest.raises(ValueError, match="sm_counts: expected at least one partition"):
        GreenContext.split([])


def test_requests_are_rounded_to_the_devices_granularity():
    assert _cudakit._granted_sm_count(1, **H200) == 8
    assert _cudakit._granted_sm_count(16, **H200) == 16
    assert _cudakit._granted_sm_count(17, **H200) == 24
    with pytest.raises(ValueError, match="132"):
        _cudakit._granted_sm_count(133, **H200)
    assert _cudakit._plan_sm_split([16, 100], **H200) == [16, 104]
    with pytest.raises(ValueError, match="132"):
        _cudakit._plan_sm_split([64, 72], **H200)


@pytest.mark.skipif(cudakit.is_available(), reason="host tier: what happens without a device")
def test_without_a_device_create_fails_with_cudakits_error():
    with pytest.raises(RuntimeError):
        GreenContext.create(8)


@requires_gpu
def test_a_smaller_context_runs_array_operations_on_its_stream():
    whole = cudakit.get_device_properties(0).multi_processor_count
    resource = GreenContext.device_resource(0)
    assert resource["sm_count"] == whole
    request = resource["min_partition"] + 1  # never a multiple: rounding must happen
    ctx = GreenContext.create(request, 0)
    assert ctx.requested_sm_count == request and ctx.device_index == 0
    assert ctx.sm_count == _cudakit._granted_sm_count(request, **resource) < whole
    s = ctx.stream()
    assert isinstance(s, cudakit.Stream) and sm_count_of(s) == ctx.sm_count
    assert sm_count_of(cudakit.default_stream(0)) == whole
    n = 1 << 20
    with cudakit.stream(s):
        assert cudakit.current_stream() == s
        x = cudakit.arange(n)
        y = x.copy()
        y.fill_(3.0)
        h = x.to("float16")
    s.synchronize()
    got = x.tolist()
    assert got[:4] == [0.0, 1.0, 2.0, 3.0] and got[-1] == n - 1
    assert y.tolist()[::4096] == [3.0] * (n // 4096)
    assert h.tolist()[:3] == [0.0, 1.0, 2.0]
    extra = ctx.create_stream()
    assert sm_count_of(extra) == ctx.sm_count
    with cudakit.stream(extra):
        z = cudakit.full([1000], 2.0)
    extra.synchronize()
    assert z.tolist() == [2.0] * 1000


@requires_gpu
def test_with_and_torchs_names_set_the_current_stream():
    ctx = GreenContext.create(16, 0)
    before = cudakit.current_stream(0)
    with ctx:
        assert cudakit.current_stream(0) == ctx.stream()
        a = cudakit.full([256], 5.0)
    assert cudakit.current_stream(0) == before
    ctx.set_context()
    assert cudakit.current_stream(0) == ctx.stream()
    ctx.pop_context()
    assert cudakit.current_stream(0) == before
    with pytest.raises(cudakit.StateError):
        ctx.pop_context()
    ctx.stream().synchronize()  # not cudakit.synchronize(): the green context is a context of its own
    assert a.tolist() == [5.0] * 256


@requires_gpu
def test_split_gives_partitions_of_the_sizes_asked():
    resource = GreenContext.device_resource(0)
    unit = _cudakit._granted_sm_count(16, **resource)
    first, second = GreenContext.split([unit, 2 * unit], 0)
    assert first.sm_count >= unit and second.sm_count >= 2 * unit
    assert first.sm_count + second.sm_count <= resource["sm_count"]
    with pytest.raises(ValueError):
        GreenContext.split([resource["sm_count"], resource["sm_count"]], 0)
