"""Snapshots for torch's tools: _dump_snapshot writes torch's pickle (what pytorch.org/memory_viz
and torch.cuda._memory_viz read), and memory history records Python frames (stacks="python" and
"all")."""

import json
import pickle
import sys

import pytest

import cudakit
from conftest import requires_gpu


# The interpreter's own stack at the last allocation below, innermost first: (name, file) of each
# frame, as sys._getframe walks it.
_stack_at_allocation = []


def _allocate_in_a_named_function():
    frame = sys._getframe()
    _stack_at_allocation.clear()
    while frame is not None:
        _stack_at_allocation.append((frame.f_code.co_name, frame.f_code.co_filename))
        frame = frame.f_back
    return cudakit.empty([1 << 16])


def _frames_of_an_allocation(stacks):
    """The frames recorded, under `stacks`, for an allocation made in a named function."""
    cudakit.memory._record_memory_history(stacks=stacks, max_entries=1000)
    try:
        a = _allocate_in_a_named_function()
        traces = [e for trace in cudakit.memory._snapshot()["device_traces"] for e in trace]
        allocs = [e for e in traces if e["action"] == "alloc" and e["size"] >= 1 << 18]
        assert allocs, "no allocation was recorded"
        del a
        return allocs[-1]["frames"]
    finally:
        cudakit.memory._record_memory_history(enabled=None)


@requires_gpu
def test_python_frames_name_the_function_file_and_line():
    frames = _frames_of_an_allocation("python")
    names = [f["name"] for f in frames]
    assert names[0] == "_allocate_in_a_named_function", names
    assert "_frames_of_an_allocation" in names and "test_python_frames_name_the_function_file_and_line" in names
    assert frames[0]["filename"] == __file__
    assert frames[0]["line"] > 0
    # Only Python frames, all of them: the interpreter's stack, frame for frame. (Not every one is
    # in a .py file: `python -m` runs under the frozen runpy module, "<frozen runpy>".)
    assert [(f["name"], f["filename"]) for f in frames] == _stack_at_allocation


@requires_gpu
def test_all_stacks_give_cpp_then_python_frames():
    frames = _frames_of_an_allocation("all")
    names = [f["name"] for f in frames]
    assert names.index("_allocate_in_a_named_function") > 0, "no C++ frame before the Python ones"
    assert not frames[0]["filename"].endswith(".py")


@requires_gpu
def test_cpp_stacks_give_no_python_frames():
    frames = _frames_of_an_allocation("cpp")
    assert frames and "_allocate_in_a_named_function" not in [f["name"] for f in frames]


@requires_gpu
def test_dump_snapshot_writes_torchs_pickle_by_default_and_json_by_name(tmp_path):
    cudakit.memory._record_memory_history(stacks="python", max_entries=1000)
    try:
        a = _allocate_in_a_named_function()
        path = tmp_path / "dump_snapshot.pickle"
        cudakit.memory._dump_snapshot(str(path))
        with open(path, "rb") as f:
            snap = pickle.load(f)
        assert type(snap) is dict and snap["segments"] and snap["device_traces"]
        segment = snap["segments"][0]
        for key in ("device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream",
                    "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks"):
            assert key in segment, key
        assert isinstance(segment["segment_pool_id"], tuple)
        block = next(b for s in snap["segments"] for b in s["blocks"] if b["state"] == "active_allocated")
        assert set(block) >= {"address", "size", "requested_size", "state", "frames"}
        entry = snap["device_traces"][cudakit.current_device()][-1]
        assert set(entry) >= {"action", "addr", "size", "stream", "time_us", "frames"}
        json_path = tmp_path / "snap.json"
        cudakit.memory._dump_snapshot(str(json_path))
        assert json.loads(json_path.read_text())["segments"]
        with pytest.raises(ValueError, match="'xml'"):
            cudakit.memory._dump_snapshot(str(tmp_path / "x"), format="xml")
        del a
    finally:
        cudakit.memory._record_memory_history(enabled=None)


@requires_gpu
def test_torchs_memory_viz_reads_the_pickle(tmp_path):
    memory_viz = pytest.importorskip("torch.cuda._memory_viz")
    cudakit.memory._record_memory_history(stacks="all", max_entries=1000)
    try:
        a = _allocate_in_a_named_function()
        b = cudakit.empty([1 << 20])
        del b
        path = tmp_path / "snap.pickle"
        cudakit.memory._dump_snapshot(str(path))
        with open(path, "rb") as f:
            snap = pickle.load(f)
        # torch's own readers: the HTML of pytorch.org/memory_viz's trace view and the segment view.
        html = memory_viz.trace_plot(snap)
        assert "_allocate_in_a_named_function" in html or len(html) > 1000
        assert memory_viz.segment_plot(snap)
        assert "Total" in memory_viz.segsum(snap) or memory_viz.segsum(snap)
        del a
    finally:
        cudakit.memory._record_memory_history(enabled=None)
