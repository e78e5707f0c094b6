"""The seed's graph-annotation workflow, in Python, as the torch.cuda reference writes it: only the
module names change (torch.cuda.graph, torch.cuda.CUDAGraph, torch.cuda.graph_annotations and
torch.profiler become cudakit's). torch's operators are captured into a cudakit graph, the
replay is profiled by cudakit's profiler, the Chrome trace exported and annotated by the seed's
own merge loop, and every kernel of the replay must carry its annotation. Works on CUDA 13.0
drivers, which have no cudaGraphNodeGetToolsId (node ids come from CUPTI there)."""

import json
import pickle

import pytest

import cudakit
from cudakit import graph_annotations

from conftest import requires_gpu

# The seed's two snippets, verbatim but for the module names (torch.cuda.graph -> cudakit.graph,
# torch.cuda.CUDAGraph -> cudakit.CUDAGraph, torch.cuda.graph_annotations ->
# cudakit.graph_annotations, torch.profiler.profile -> cudakit.profiler.profile).
SEED_CAPTURE = '''
import torch
import cudakit
from cudakit.graph_annotations import mark_kernels, get_kernel_annotations

x = torch.randn(1024, 1024, device="cuda")

# Warmup: run the workload once outside capture so lazy initialization
# (e.g. cuBLAS handles) does not end up in -- or invalidate -- the capture.
y = x @ x.t()
z = torch.relu(y) @ x
torch.cuda.synchronize()

g = cudakit.CUDAGraph()
with cudakit.graph(g, enable_annotations=True):
    with mark_kernels("attention"):
        y = x @ x.t()
    with mark_kernels({"name": "mlp", "layer": 3}):
        z = torch.relu(y) @ x

with cudakit.profiler.profile() as prof:
    g.replay()
    torch.cuda.synchronize()
prof.export_chrome_trace("trace.json")
'''

SEED_MERGE = '''
import json

annotations = get_kernel_annotations()
with open("trace.json") as f:
    trace = json.load(f)
for event in trace["traceEvents"]:
    node_id = event.get("args", {}).get("graph node id")
    for ann in annotations.get(node_id, []):
        event["args"].update(ann)
with open("trace_annotated.json", "w") as f:
    json.dump(trace, f)
'''


@requires_gpu
def test_the_seeds_workflow_annotates_every_kernel_of_the_replay(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    if not graph_annotations.is_available():
        pytest.fail(f"annotations unavailable (mechanism {graph_annotations.annotation_mechanism()}): "
                    "CUPTI could not be loaded")
    monkeypatch.chdir(tmp_path)
    graph_annotations.clear_kernel_annotations()
    scope = {}
    exec(compile(SEED_CAPTURE, "seed_capture", "exec"), scope)
    exec(compile(SEED_MERGE, "seed_merge", "exec"), scope)

    # The replay computed what eager torch computes.
    x, y, z = scope["x"], scope["y"], scope["z"]
    torch.testing.assert_close(y, x @ x.t())
    torch.testing.assert_close(z, torch.relu(y) @ x)

    trace = json.loads((tmp_path / "trace_annotated.json").read_text())
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    assert kernels, "the profiler recorded no kernel of the replay"
    names = {}
    for event in kernels:
        args = event["args"]
        assert "graph node id" in args, f"kernel {event['name']} has no graph node id"
        assert args.get("name") in ("attention", "mlp"), (
            f"kernel {event['name']} (node {args['graph node id']}) carries no annotation; "
            f"mechanism {graph_annotations.annotation_mechanism()}")
        if args["name"] == "mlp":
            assert args.get("layer") == 3, event
        names.setdefault(args["name"], []).append(event["name"])
    # Both regions have kernels: the first matmul, then relu and the second matmul.
    assert len(names.get("attention", [])) >= 1 and len(names.get("mlp", [])) >= 2, names
    print(f"mechanism {graph_annotations.annotation_mechanism()}: "
          f"{len(kernels)} of {len(kernels)} kernels annotated: {names}")

    # dict(get_kernel_annotations()) pickles, and the copy merges the same way offline.
    annotations = scope["get_kernel_annotations"]()
    restored = pickle.loads(pickle.dumps(dict(annotations)))
    assert restored == annotations
    for event in kernels:
        assert restored[event["args"]["graph node id"]]


@requires_gpu
def test_torch_memory_of_a_cudakit_capture_stays_the_graphs(tmp_path):
    """torch's allocations inside the capture come from the graph's torch pool, so eager
    tensors made after it never share the memory the replays write."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    x = torch.ones(256, 256, device="cuda")
    (x * 2).sum()
    torch.cuda.synchronize()
    g = cudakit.CUDAGraph()
    with cudakit.graph(g):
        y = x * 2
    del y  # the graph still writes that memory at each replay
    eager = [torch.full((256, 256), 7.0, device="cuda") for _ in range(8)]
    for _ in range(3):
        g.replay()
    cudakit.synchronize()
    for t in eager:
        assert torch.equal(t, torch.full_like(t, 7.0))
    assert getattr(g, "_torch_mem_pool", None) is not None or torch.cuda.get_allocator_backend() != "native"


def test_mark_kernels_outside_a_capture_records_nothing_and_checks_its_values():
    before = graph_annotations.get_kernel_annotations()
    with graph_annotations.mark_kernels("attention"):
        with graph_annotations.mark_kernels({"name": "mlp", "layer": 3, "scale": 0.5}):
            pass
    assert graph_annotations.get_kernel_annotations() == before
    with pytest.raises(TypeError, match="'flag' is a bool"):
        with graph_annotations.mark_kernels({"flag": True}):
            pass
    with pytest.raises(TypeError, match="'shape' is a list"):
        with graph_annotations.mark_kernels({"shape": [1, 2]}):
            pass
    with pytest.raises(TypeError, match="expected a name"):
        with graph_annotations.mark_kernels(3):
            pass


def test_a_region_nests_and_is_reentered_once_left():
    region = graph_annotations.mark_kernels("outer")
    with region:
        with pytest.raises(ValueError, match="already open"):
            region.__enter__()
    with region:  # left, so it may be entered again
        pass


def test_mark_kernels_keeps_its_annotation_and_decorates():
    fields = {"name": "mlp", "layer": 3}
    region = graph_annotations.mark_kernels(fields)
    fields["layer"] = 4  # the region copied the dict
    assert region.annotation == {"name": "mlp", "layer": 3}
    assert graph_annotations.mark_kernels("attention").annotation == "attention"

    @graph_annotations.mark_kernels("decorated")
    def step(a, b=2):
        return a + b

    assert step(1) == 3 and step.__name__ == "step"


def test_get_kernel_annotations_is_a_fresh_plain_dict():
    a = graph_annotations.get_kernel_annotations()
    assert type(a) is dict
    a[12345] = [{"name": "injected"}]
    assert 12345 not in graph_annotations.get_kernel_annotations()
    assert pickle.loads(pickle.dumps(dict(a))) == a


def test_the_mechanism_is_named_and_a_bad_one_is_refused():
    assert graph_annotations.annotation_mechanism() in ("tools_id", "cupti", "none")
    assert graph_annotations.is_available() == (graph_annotations.annotation_mechanism() != "none")
    with pytest.raises(ValueError, match="'sideways'"):
        graph_annotations.set_annotation_mechanism("sideways")
    graph_annotations.set_annotation_mechanism("none")
    try:
        assert graph_annotations.annotation_mechanism() == "none"
    finally:
        graph_annotations.set_annotation_mechanism(None)
