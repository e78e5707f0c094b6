"""GPU tier: DLPack and __cuda_array_interface__ with PyTorch, CuPy, JAX and NumPy, the stream
protocol, and cudakit's allocator inside PyTorch (skips, visibly, without a GPU or the library)."""

import contextlib
import os
import subprocess
import sys
import time

import pytest

import cudakit
from conftest import requires_gpu

pytestmark = requires_gpu

# Cycles of torch.cuda._sleep that keep a stream busy for tens of milliseconds on any current GPU.
_BUSY_CYCLES = 200_000_000


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _streams(torch):
    """Two torch streams whose first allocation is behind them (a fresh stream's first one may
    reach cudaMalloc, which the timing-sensitive tests must not wait on)."""
    streams = torch.cuda.Stream(), torch.cuda.Stream()
    for s in streams:
        with torch.cuda.stream(s):
            torch.ones(1, device="cuda")
    torch.cuda.synchronize()
    return streams


def test_torch_reads_cudakit_memory_and_back(torch):
    a = cudakit.arange(6).reshape([2, 3])
    t = torch.from_dlpack(a)
    assert t.device.type == "cuda" and t.shape == (2, 3) and t.data_ptr() == a.data_ptr()
    t.mul_(2)
    torch.cuda.synchronize()
    assert a.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    back = cudakit.from_dlpack(t.T)
    assert back.data_ptr() == a.data_ptr() and back.stride() == (1, 3)
    for dtype in (torch.float16, torch.bfloat16, torch.int64, torch.bool, torch.uint8):
        x = torch.ones(3, dtype=dtype, device="cuda")
        assert cudakit.from_dlpack(x).dtype == str(dtype).removeprefix("torch.")
        assert torch.equal(torch.from_dlpack(cudakit.from_dlpack(x)), x)


def test_torch_keeps_cudakit_memory_alive(torch):
    a = cudakit.full([1024], 3.0)
    t = torch.from_dlpack(a)
    del a
    import gc
    gc.collect()
    assert t.sum().item() == 3.0 * 1024


@contextlib.contextmanager
def _busy_producer(torch):
    """A cudakit array, and inside the block cudakit's current stream a torch stream kept busy
    (the producer), beside an idle one (the consumer)."""
    producer, consumer = _streams(torch)
    a = cudakit.zeros([1024])
    torch.cuda.synchronize()
    with cudakit.stream(cudakit.ExternalStream(producer.cuda_stream)):
        with torch.cuda.stream(producer):
            torch.cuda._sleep(_BUSY_CYCLES)
        yield producer, consumer, a


def test_producer_orders_the_consumers_stream_without_a_host_sync(torch):
    with _busy_producer(torch) as (producer, consumer, a):
        started = time.perf_counter()
        capsule = a.__dlpack__(stream=consumer.cuda_stream, max_version=(1, 0))
        took = time.perf_counter() - started
    with torch.cuda.stream(consumer):
        torch.ones(1, device="cuda")
    assert not consumer.query()  # waits on the producer's event
    assert not producer.query()  # and the call did not wait for the producer
    assert took < 0.01
    consumer.synchronize()
    assert producer.query()  # the consumer's work came after the producer's
    del capsule


def test_stream_minus_one_asks_for_no_synchronization(torch):
    with _busy_producer(torch) as (producer, consumer, a):
        a.__dlpack__(stream=-1, max_version=(1, 0))
    with torch.cuda.stream(consumer):
        torch.ones(1, device="cuda")
    consumer.synchronize()
    assert not producer.query()
    producer.synchronize()


def test_stream_values_of_the_protocol(torch):
    a = cudakit.zeros([4])
    with pytest.raises(ValueError, match="stream=0 is ambiguous"):
        a.__dlpack__(stream=0)
    for value in (None, 1, 2):
        cudakit.from_dlpack(a.__dlpack__(stream=value, max_version=(1, 0)))
    s = cudakit.Stream()
    cudakit.from_dlpack(a.__dlpack__(stream=s.cuda_stream, max_version=(1, 0)))


def test_consumer_passes_its_current_stream(torch):
    producer, consumer = _streams(torch)
    with torch.cuda.stream(producer):
        t = torch.zeros(1024, device="cuda")
        torch.cuda._sleep(_BUSY_CYCLES)
        with cudakit.stream(cudakit.ExternalStream(consumer.cuda_stream)):
            a = cudakit.from_dlpack(t)
            a.fill_(1.0)  # queued on the consumer stream, after torch's event
    assert not consumer.query()
    consumer.synchronize()
    assert producer.query()
    assert a.tolist()[:2] == [1.0, 1.0]


def test_the_fast_torch_exchange_keeps_memory_values_and_order(torch):
    from cudakit.torch import from_torch, to_torch

    a = cudakit.arange(6).reshape([2, 3])
    t = to_torch(a)
    assert t.shape == (2, 3) and t.data_ptr() == a.data_ptr() and t.stride() == (3, 1)
    back = from_torch(t.T)
    assert back.data_ptr() == a.data_ptr() and back.stride() == (1, 3) and back.dtype == "float32"
    h = torch.arange(4, dtype=torch.float16)
    assert from_torch(h).tolist() == [0.0, 1.0, 2.0, 3.0]  # host memory: no stream involved
    # to_torch: torch's current stream waits for cudakit's (busy) one, the host does not. The
    # kernel torch runs there is loaded first: a kernel's first launch in a process loads its
    # module (lazy loading), which waits for the device and would end the busy stretch.
    torch.ones(4, device="cuda").add_(1)
    torch.cuda.synchronize()
    with _busy_producer(torch) as (producer, consumer, z):
        with torch.cuda.stream(consumer):
            started = time.perf_counter()
            tz = to_torch(z)
            took = time.perf_counter() - started
            tz.add_(1)
        assert took < 0.01 and not consumer.query()
    consumer.synchronize()
    assert producer.query() and z.tolist()[:2] == [1.0, 1.0]
    # from_torch: cudakit's current stream waits for torch's (busy) one.
    producer, consumer = _streams(torch)
    with torch.cuda.stream(producer):
        t = torch.zeros(1024, device="cuda")
        torch.cuda._sleep(_BUSY_CYCLES)
        with cudakit.stream(cudakit.ExternalStream(consumer.cuda_stream)):
            x = from_torch(t)
            x.fill_(2.0)
    assert not consumer.query()
    consumer.synchronize()
    assert producer.query() and x.tolist()[:2] == [2.0, 2.0]


def test_cupy_both_ways():
    cupy = pytest.importorskip("cupy")
    a = cudakit.arange(5)
    c = cupy.from_dlpack(a)
    assert int(c.data.ptr) == a.data_ptr() and c.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    via_cai = cupy.asarray(a)
    assert int(via_cai.data.ptr) == a.data_ptr()
    back = cudakit.from_dlpack(cupy.arange(8, dtype=cupy.int32)[1::3])
    assert back.tolist() == [1, 4, 7] and back.stride() == (3,)
    # Negative strides: CuPy's capsule has them right only from its fix of issue 10172 (a byte
    # stride divided by an unsigned itemsize); a wrong one is refused with the stride named.
    flipped = cupy.arange(4, dtype=cupy.int32)[::-1]
    if _cupy_dlpack_strides(flipped) == (-1,):
        assert cudakit.from_dlpack(flipped).tolist() == [3, 2, 1, 0]
    else:
        with pytest.raises(BufferError, match="has stride 4611686018427387903"):
            cudakit.from_dlpack(flipped)


def _cupy_dlpack_strides(array):
    """The element strides in CuPy's own DLPack capsule of `array`, read with ctypes."""
    import ctypes

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device", ctypes.c_int32 * 2), ("ndim", ctypes.c_int32),
                    ("dtype", ctypes.c_uint8 * 4), ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]

    capsule = array.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    tensor = DLTensor.from_address(get(capsule, b"dltensor"))  # the legacy capsule: DLTensor first
    return tuple(tensor.strides[i] for i in range(tensor.ndim))


def test_jax_both_ways():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    a = cudakit.arange(4)
    j = jnp.from_dlpack(a)
    assert j.tolist() == [0.0, 1.0, 2.0, 3.0]
    back = cudakit.from_dlpack(jnp.arange(3, dtype=jnp.int32))
    assert back.device.startswith("cuda") and back.tolist() == [0, 1, 2]


def test_numpy_through_the_host():
    np = pytest.importorskip("numpy")
    n = np.arange(4.0)
    a = cudakit.from_dlpack(n).cuda()
    assert a.is_cuda and a.tolist() == [0.0, 1.0, 2.0, 3.0]
    host = np.from_dlpack(a, device="cpu")  # dl_device=(1, 0): cudakit copies to the host
    assert host.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(BufferError, match="copy=False forbids"):
        a.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)


_ALLOCATOR_SCRIPT = r"""
import cudakit, cudakit.torch
{install}
import torch
cudakit.synchronize()
base = cudakit.memory_allocated()
x = torch.zeros(1 << 20, dtype=torch.uint8, device="cuda")
assert cudakit.memory_allocated() >= base + (1 << 20), (cudakit.memory_allocated(), base)
y = (x.float() + 1).sum()
assert y.item() == float(1 << 20)
del x, y
torch.cuda.synchronize()
assert cudakit.memory_allocated() == base, (cudakit.memory_allocated(), base)
stats = cudakit.memory_stats()
assert stats["num_alloc_retries"] == 0 and stats["allocation.all.allocated"] >= 2
m = torch.nn.Linear(64, 64).cuda()
loss = m(torch.randn(8, 64, device="cuda")).square().sum()
loss.backward()
torch.cuda.synchronize()
assert cudakit.max_memory_allocated() > 0
print("ALLOCATOR-OK", torch.cuda.memory.get_allocator_backend() if hasattr(torch.cuda.memory, "get_allocator_backend") else "")
"""


def _startup_dir():
    import cudakit.torch

    return cudakit.torch.startup_dir()


def _run(script, env=None):
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def test_cudakits_allocator_inside_torch(torch):
    result = _run(_ALLOCATOR_SCRIPT.format(install="cudakit.torch.use_cudakit_allocator()"))
    assert result.returncode == 0, result.stderr
    assert "ALLOCATOR-OK" in result.stdout


_ALLOCATOR_HOOKS_SCRIPT = r"""
import cudakit, cudakit.torch
cudakit.torch.use_cudakit_allocator()
import torch
# A request no device holds raises torch's error, not a tensor without memory, and loses nothing.
for elements, text in ((1 << 30) * 800000000, "Tried to allocate 800000000.00 GiB"), ((1 << 30) * 8000000000, "more than 1EB"):
    try:
        torch.empty(elements, dtype=torch.int8, device="cuda")
        raise SystemExit("no error for %d bytes" % elements)
    except RuntimeError as e:
        assert "CUDA out of memory. " in str(e) and text in str(e), str(e)
assert torch.ones(3, device="cuda").sum().item() == 3
# torch.cuda.empty_cache() returns cudakit's cached memory.
x = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
del x
cached = cudakit.memory_reserved()
torch.cuda.empty_cache()
assert cudakit.memory_reserved() < cached, (cudakit.memory_reserved(), cached)
# set_per_process_memory_fraction limits cudakit's reservations.
total = torch.cuda.get_device_properties(0).total_memory
torch.cuda.set_per_process_memory_fraction(0.01)
try:
    torch.empty(total // 20, dtype=torch.uint8, device="cuda")
    raise SystemExit("no error under the fraction")
except RuntimeError as e:
    assert "memory fraction 0.01" in str(e), str(e)
torch.cuda.set_per_process_memory_fraction(1.0)
# Tensor.record_stream: a block used on a busy side stream is not handed out again at its free.
side = torch.cuda.Stream()
x = torch.empty(4 << 20, dtype=torch.uint8, device="cuda")
first = x.data_ptr()
with torch.cuda.stream(side):
    torch.cuda._sleep(200_000_000)
x.record_stream(side)
del x
y = torch.empty(4 << 20, dtype=torch.uint8, device="cuda")
assert y.data_ptr() != first, "reused while the side stream may still use it"
side.synchronize()
del y
z = torch.empty(4 << 20, dtype=torch.uint8, device="cuda")
# A backward pass captured into a graph records its gradients' streams (record_stream on the
# capturing stream): the capture survives it and the replay computes the gradient.
w = torch.ones(16, device="cuda", requires_grad=True)
static_in = torch.full((16,), 2.0, device="cuda")
graph = torch.cuda.CUDAGraph()
warm = torch.cuda.Stream()
warm.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(warm):
    (w * static_in).sum().backward()
torch.cuda.current_stream().wait_stream(warm)
w.grad = None
with torch.cuda.graph(graph):
    (w * static_in).sum().backward()
static_in.fill_(3.0)
graph.replay()
torch.cuda.synchronize()
assert w.grad.tolist() == [3.0] * 16, w.grad.tolist()
print("HOOKS-OK", z.data_ptr() == first)
"""


def test_torch_reaches_cudakits_allocator_through_its_hooks(torch):
    result = _run(_ALLOCATOR_HOOKS_SCRIPT)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "HOOKS-OK" in result.stdout


_GRAPH_POOL_SCRIPT = r"""
import cudakit, cudakit.torch
cudakit.torch.use_cudakit_allocator()
import torch
# Memory freed inside a capture stays the graph's (its private pool): eager allocations after the
# capture never get it, so replays cannot overwrite them. See Note [Graph pools under torch].
x = torch.full((1 << 20,), 1.0, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(2):
        (x * 2 + 1).sum()
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    y = x * 2          # freed inside the capture, written by every replay
    out = y + 1
    del y
reserved_in_graph = cudakit.memory_reserved()
eager = [torch.full((1 << 20,), 7.0, device="cuda") for _ in range(4)]
x.fill_(3.0)
graph.replay()
torch.cuda.synchronize()
assert out[0].item() == 7.0 and out[-1].item() == 7.0, out[:4].tolist()
assert all(bool((e == 7.0).all()) for e in eager), "a replay overwrote eager memory"
# A second graph sharing the first's pool, then both reset: the pool's cached memory goes back.
graph2 = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph2, pool=graph.pool()):
    out2 = out * 2
graph2.replay()
torch.cuda.synchronize()
assert out2[0].item() == 14.0
del out, out2
graph.reset()
graph2.reset()
torch.cuda.empty_cache()
print("GRAPH-POOLS-OK", reserved_in_graph, cudakit.memory_reserved())
"""


def test_torch_graphs_get_private_pools(torch):
    result = _run(_GRAPH_POOL_SCRIPT)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "GRAPH-POOLS-OK" in result.stdout


def test_the_environment_recipe_installs_the_allocator(torch):
    env = {"CUDAKIT_TORCH_ALLOCATOR": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [_startup_dir(), os.environ.get("PYTHONPATH")]))}
    result = _run(_ALLOCATOR_SCRIPT.format(install="assert cudakit.torch.is_installed()"), env)
    assert result.returncode == 0, result.stderr
    assert "ALLOCATOR-OK" in result.stdout
