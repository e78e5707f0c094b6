"""GPU tier: devices, streams, events, the caching allocator, MemPool, graphs, generators, the
jiterator, through cudakit's own API (skips, visibly, without a GPU)."""

import json
import time

import pytest

import cudakit
from conftest import requires_gpu

pytestmark = requires_gpu


def test_device_queries_agree():
    props = cudakit.get_device_properties(0)
    assert props.name == cudakit.get_device_name(0)
    assert (props.major, props.minor) == cudakit.get_device_capability(0)
    assert props.total_memory == cudakit.mem_get_info(0)[1]
    with cudakit.device(0):
        assert cudakit.current_device() == 0


def test_stream_context_sets_and_restores_the_current_stream():
    before = cudakit.current_stream()
    s = cudakit.Stream()
    with cudakit.stream(s):
        assert cudakit.current_stream() == s
        with cudakit.stream(None):
            assert cudakit.current_stream() == s
    assert cudakit.current_stream() == before
    assert cudakit.default_stream().cuda_stream == 0


def test_events_order_streams_and_time_work():
    s1, s2 = cudakit.Stream(), cudakit.Stream()
    start, end = cudakit.Event(enable_timing=True), cudakit.Event(enable_timing=True)
    with cudakit.stream(s1):
        a = cudakit.zeros([1 << 22])
        start.record()
        for _ in range(20):
            a.fill_(1.0)
        end.record()
    s2.wait_event(end)
    with cudakit.stream(s2):
        b = a.copy()
    s2.synchronize()
    assert end.query() and s1.query()
    assert start.elapsed_time(end) > 0
    assert b.tolist()[:3] == [1.0, 1.0, 1.0]
    e = s1.record_event()
    assert isinstance(e, cudakit.Event)
    e.synchronize()
    assert e.query()


def test_external_stream_refers_without_owning():
    s = cudakit.Stream()
    ext = cudakit.ExternalStream(s.cuda_stream)
    assert ext == s and not ext.owns and ext.device_index == s.device_index


def test_memory_statistics_follow_allocations():
    cudakit.synchronize()
    cudakit.empty_cache()
    cudakit.reset_peak_memory_stats()
    base = cudakit.memory_allocated()
    ptr = cudakit.caching_allocator_alloc(1 << 20)
    assert cudakit.memory_allocated() >= base + (1 << 20)
    stats = cudakit.memory_stats()
    assert stats["allocated_bytes.all.current"] == cudakit.memory_allocated()
    assert stats["num_ooms"] == 0
    nested = cudakit.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == stats["allocated_bytes.all.current"]
    cudakit.caching_allocator_delete(ptr)
    assert cudakit.memory_allocated() == base
    assert cudakit.max_memory_allocated() >= base + (1 << 20)
    assert cudakit.memory_reserved() >= 1 << 20
    assert "allocated" in cudakit.memory_summary().lower()
    cudakit.empty_cache()


def test_snapshots_and_history(tmp_path):
    cudakit.memory._record_memory_history(max_entries=1000)
    try:
        a = cudakit.empty([1 << 18])
        snap = cudakit.memory._snapshot()
        assert any(seg["total_size"] > 0 for seg in snap["segments"])
        assert snap["device_traces"] and snap["device_traces"][0]
        path = tmp_path / "snap.json"
        cudakit.memory._dump_snapshot(str(path))
        assert json.loads(path.read_text())["segments"]
        del a
    finally:
        cudakit.memory._record_memory_history(enabled=None)


def test_mem_pool_routes_allocations():
    pool = cudakit.MemPool()
    before = pool.allocated_bytes()
    with cudakit.use_mem_pool(pool):
        assert pool.use_count() >= 2
        a = cudakit.empty([1 << 18])
        assert pool.allocated_bytes() >= before + (1 << 20)
        assert pool.snapshot()
    b = cudakit.empty([1 << 18])
    assert pool.allocated_bytes() >= before + (1 << 20)
    del a, b


def test_graph_capture_and_replay():
    src = cudakit.full([1024], 1.0)
    dst = cudakit.zeros([1024])
    g = cudakit.CUDAGraph()
    with cudakit.graph(g):
        dst.copy_(src)
    cudakit.synchronize()
    src.fill_(5.0)
    g.replay()
    cudakit.synchronize()
    assert dst.tolist()[:2] == [5.0, 5.0]
    assert isinstance(g.pool(), tuple)


def test_gpu_and_cpu_generators_agree():
    cpu = cudakit.rand([64], device="cpu", generator=cudakit.Generator("cpu", seed=99)).tolist()
    gpu = cudakit.rand([64], device="cuda", generator=cudakit.Generator("cuda", seed=99)).tolist()
    assert cpu == gpu
    cudakit.manual_seed(5)
    state = cudakit.get_rng_state()
    x = cudakit.randn([16]).tolist()
    cudakit.set_rng_state(state)
    assert cudakit.randn([16]).tolist() == x


def test_jiterator_runs_over_arrays():
    axpy = cudakit.jiterator.create_jit_fn(
        "template <typename T> T axpy(T x, T y, T alpha) { return alpha * x + y; }", alpha=1.0)
    x = cudakit.arange(4)
    y = cudakit.ones([4])
    assert axpy(x, y).tolist() == [1.0, 2.0, 3.0, 4.0]
    assert axpy(x, y, alpha=2.0).tolist() == [1.0, 3.0, 5.0, 7.0]


def test_profiler_exports_a_chrome_trace(tmp_path):
    path = tmp_path / "trace.json"
    with cudakit.profiler.profile(str(path)):
        a = cudakit.zeros([1 << 16])
        a.fill_(2.0)
        cudakit.synchronize()
    trace = json.loads(path.read_text())
    assert trace["traceEvents"]


def test_cuda_array_interface_describes_the_memory():
    a = cudakit.arange(6).reshape([2, 3])
    cai = a.__cuda_array_interface__
    assert cai["shape"] == (2, 3) and cai["typestr"] == "<f4" and cai["version"] == 3
    assert cai["data"] == (a.data_ptr(), False) and cai["strides"] is None
    assert a.T.__cuda_array_interface__["strides"] == (4, 12)
    assert cai["stream"] == 1  # the legacy default stream, as the protocol spells it


def test_unconsumed_capsules_return_their_memory():
    cudakit.synchronize()
    base = cudakit.memory_allocated()
    a = cudakit.empty([1 << 18])
    capsule = a.__dlpack__(max_version=(1, 0))
    del a
    assert cudakit.memory_allocated() > base
    del capsule
    assert cudakit.memory_allocated() == base


def test_runtime_names_of_torch_cuda():
    least, greatest = cudakit.Stream.priority_range()
    assert least >= greatest
    cudakit.init()
    assert cudakit.is_initialized()
    assert cudakit.is_bf16_supported() == (cudakit.get_device_capability()[0] >= 8)
    assert cudakit.current_blas_handle() != 0
    assert 0 < cudakit.device_memory_used() <= cudakit.mem_get_info()[1]
    assert 0 <= cudakit.utilization() <= 100 and 0 <= cudakit.memory_usage() <= 100
    assert cudakit.temperature() > 0 and cudakit.power_draw() > 0 and cudakit.clock_rate() > 0
    assert cudakit.list_gpu_processes().startswith(f"GPU:{cudakit.current_device()}")
    generators = cudakit.default_generators
    assert len(generators) == cudakit.device_count()
    generators[0].manual_seed(1234)
    assert cudakit.initial_seed() == 1234 or cudakit.current_device() != 0
    s = cudakit.Stream()
    assert cudakit.get_stream_from_external(s.cuda_stream) == s
    a = cudakit.empty([16], device="cuda:0")
    assert a.device == "cuda:0"
    with cudakit.device_of(a):
        assert cudakit.current_device() == 0
    with cudakit.device_of(cudakit.empty([16], device="cpu")):  # a host array leaves the device alone
        assert cudakit.current_device() == 0
    cudakit.ipc_collect()


def test_graph_raw_handles_and_ipc_events():
    g = cudakit.CUDAGraph()
    assert g.raw_cuda_graph() == 0 and g.raw_cuda_graph_exec() == 0
    s = cudakit.Stream()
    with cudakit.stream(s):
        g.capture_begin()
        b = cudakit.full([64], 1.0)
        g.capture_end()
    assert g.raw_cuda_graph() != 0 and g.raw_cuda_graph_exec() != 0
    g.replay()
    cudakit.synchronize()
    assert b.tolist() == [1.0] * 64
    e = cudakit.Event(interprocess=True)
    e.record()
    handle = e.ipc_handle()
    assert isinstance(handle, bytes) and len(handle) == 64
    with pytest.raises(ValueError, match="64 bytes, got 3"):
        cudakit.Event.from_ipc_handle(0, b"abc")


def test_mem_pool_with_a_pluggable_allocator():
    allocator = cudakit.CUDAPluggableAllocator(cudakit.torch.allocator_library(), cudakit.torch.MALLOC_SYMBOL,
                                               cudakit.torch.FREE_SYMBOL)
    pool = cudakit.MemPool(allocator=allocator)
    with cudakit.use_mem_pool(pool):
        a = cudakit.empty([1 << 20])
    assert pool.reserved_bytes() >= 4 << 20
    assert cudakit.memory_snapshot(mempool_id=pool.id)
    assert all(tuple(s["segment_pool_id"]) == tuple(pool.id) for s in cudakit.memory_snapshot(mempool_id=pool.id))
    del a


def test_jiterator_reductions_over_all_and_chosen_dimensions():
    sum_of_squares = cudakit.jiterator.create_jit_reduction(
        "template <typename T> T square(T x) { return x * x; }",
        "template <typename T> T add(T a, T b) { return a + b; }", "0")
    x = cudakit.arange(6.0).reshape([2, 3])
    assert sum_of_squares(x).item() == 55.0
    assert sum_of_squares(x, dim=1).tolist() == [5.0, 50.0]
    assert sum_of_squares(x, dim=[0], keepdim=True).tolist() == [[9.0, 17.0, 29.0]]
    assert sum_of_squares.num_inputs == 1
