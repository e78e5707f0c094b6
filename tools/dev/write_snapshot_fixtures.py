#!/usr/bin/env python3
"""Writes the small memory snapshots of tests/data/memory/ that the what-if replay tests read,
in torch.cuda.memory._dump_snapshot's format (a pickle of plain dicts and lists), without torch.

Usage: write_snapshot_fixtures.py OUT_DIR

- whatif_small.pickle (Python's default protocol) and whatif_small_p2/p3/p5.pickle (protocols 2,
  3, 5), whatif_small.json (the same data as JSON), whatif_small.pickle.gz (compressed): two streams; a block allocated before
  recording began and freed in the trace, another still allocated in the final segments; a free
  that record_stream deferred; an empty_cache() call; Python frames on every entry.
- whatif_no_trace.pickle: a snapshot taken without _record_memory_history (empty device_traces).
- whatif_not_snapshot.pickle: a pickled dict that is not a snapshot.
- pickle_values_p2/p3/p4/p5.pickle: one value of every kind the pickle reader takes, in each
  protocol (bytes from protocol 3 on: protocol 2 pickles them through a Python function).
The trace is written by hand (it is not a run of torch): its segment events are consistent with
the final segments, so the reserved peak they imply is known (42 MiB).
"""
import gzip
import json
import os
import pickle
import sys

MiB = 1 << 20
A, B = 0x5A00, 0x5B00  # the two streams (cudaStream_t values)
BASE = 0x7F0000000000


def frames(line, name="step"):
    return [
        {"filename": "/usr/lib/python3/site-packages/torch/nn/modules/module.py", "line": 1736, "name": "_call_impl"},
        {"filename": "/home/user/train.py", "line": line, "name": name},
    ]


def snapshot():
    t = []

    def e(action, addr, size, stream, line=0):
        entry = {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": 1000 + len(t),
                 "frames": frames(line) if line else [], "compile_context": "N/A", "user_metadata": ""}
        t.append(entry)

    seg1 = BASE              # 20 MiB large segment on A (obtained before recording)
    seg2 = BASE + 64 * MiB   # 2 MiB small segment on B
    seg3 = BASE + 128 * MiB  # 20 MiB segment on B, returned by empty_cache
    seg4 = BASE + 256 * MiB  # 10 MiB segment on A
    pre_freed = seg1             # 4 MiB, allocated before recording, freed at entry 2
    pre_live = seg1 + 4 * MiB    # 3 MiB, allocated before recording, still live
    e("alloc", seg1 + 7 * MiB, 2 * MiB, A, 10)                 # 0
    e("segment_alloc", seg2, 2 * MiB, B, 11)                   # 1
    e("free_requested", pre_freed, 4 * MiB, A, 12)             # 2 (seeded)
    e("free_completed", pre_freed, 4 * MiB, A, 12)             # 3
    e("alloc", seg2, 4096, B, 13)                              # 4
    e("segment_alloc", seg3, 20 * MiB, B, 14)                  # 5
    e("alloc", seg3, 6 * MiB, B, 14)                           # 6
    e("free_requested", seg1 + 7 * MiB, 2 * MiB, A, 15)        # 7: deferred (record_stream)
    e("alloc", seg3 + 6 * MiB, 5 * MiB, B, 16)                 # 8
    e("free_completed", seg1 + 7 * MiB, 2 * MiB, A, 17)        # 9
    e("free_requested", seg3, 6 * MiB, B, 18)                  # 10
    e("free_completed", seg3, 6 * MiB, B, 18)                  # 11
    e("free_requested", seg3 + 6 * MiB, 5 * MiB, B, 19)        # 12
    e("free_completed", seg3 + 6 * MiB, 5 * MiB, B, 19)        # 13
    e("segment_free", seg3, 20 * MiB, B, 20)                   # 14: empty_cache
    e("snapshot", 0, 0, 0)                                     # 15
    e("segment_alloc", seg4, 10 * MiB, A, 21)                  # 16
    e("alloc", seg4, 10 * MiB, A, 21)                          # 17
    e("free_requested", seg2, 4096, B, 22)                     # 18
    e("free_completed", seg2, 4096, B, 22)                     # 19
    segments = [
        {"device": 0, "address": seg1, "total_size": 20 * MiB, "allocated_size": 3 * MiB, "active_size": 3 * MiB,
         "requested_size": 3 * MiB, "stream": A, "segment_type": "large", "segment_pool_id": (0, 0),
         "is_expandable": False, "frames": [],
         "blocks": [{"address": seg1, "size": 4 * MiB, "requested_size": 0, "state": "inactive", "frames": []},
                    {"address": pre_live, "size": 3 * MiB, "requested_size": 3 * MiB, "state": "active_allocated",
                     "frames": frames(5, "load_model")},
                    {"address": pre_live + 3 * MiB, "size": 13 * MiB, "requested_size": 0, "state": "inactive",
                     "frames": []}]},
        {"device": 0, "address": seg2, "total_size": 2 * MiB, "allocated_size": 0, "active_size": 0,
         "requested_size": 0, "stream": B, "segment_type": "small", "segment_pool_id": (0, 0),
         "is_expandable": False, "frames": [],
         "blocks": [{"address": seg2, "size": 2 * MiB, "requested_size": 0, "state": "inactive", "frames": []}]},
        {"device": 0, "address": seg4, "total_size": 10 * MiB, "allocated_size": 10 * MiB, "active_size": 10 * MiB,
         "requested_size": 10 * MiB, "stream": A, "segment_type": "large", "segment_pool_id": (0, 0),
         "is_expandable": False, "frames": frames(21),
         "blocks": [{"address": seg4, "size": 10 * MiB, "requested_size": 10 * MiB, "state": "active_allocated",
                     "frames": frames(21)}]},
    ]
    settings = {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:64,release_lock_on_cudamalloc:True",
                "max_split_size": 64 * MiB, "garbage_collection_threshold": 0.0, "expandable_segments": False,
                "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": True,
                "pinned_use_cuda_host_register": False,
                "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)}}
    return {"segments": segments, "device_traces": [t], "allocator_settings": settings,
            "external_annotations": []}


def values(protocol):
    shared = [7, "seven"]
    v = {"none": None, "true": True, "false": False, "int1": 7, "int2": 300, "int4": -70000,
         "long": 2 ** 40, "negative_long": -(2 ** 40), "max_int64": 2 ** 63 - 1, "huge": 2 ** 70,
         "max_uint64": 2 ** 64 - 1, "float": 1.5, "short_str": "ab", "long_str": "x" * 300,
         "list": [1, 2, 3], "list1": [1], "empty_list": [], "tuple0": (), "tuple1": (1,),
         "tuple2": (1, 2), "tuple3": (1, 2, 3), "tuple5": (1, 2, 3, 4, 5), "shared": shared,
         "shared_again": shared, "nested": {"a": {"b": [{}]}}, "many": list(range(2500))}
    # Past 256 memo entries: LONG_BINPUT and LONG_BINGET (protocols 2 and 3), 4-byte BINGET indices.
    lists = [[i] for i in range(300)]
    v["lists"] = lists
    v["last_list_again"] = lists[-1]
    if protocol >= 3:
        v["bytes"] = b"\x00\x01"
        v["long_bytes"] = b"y" * 300
    return v


def main():
    out = sys.argv[1]
    for protocol in (2, 3, 4, 5):
        with open(os.path.join(out, f"pickle_values_p{protocol}.pickle"), "wb") as f:
            pickle.dump(values(protocol), f, protocol=protocol)
    s = snapshot()
    with open(os.path.join(out, "whatif_small.pickle"), "wb") as f:
        pickle.dump(s, f)
    for protocol in (2, 3, 5):
        with open(os.path.join(out, f"whatif_small_p{protocol}.pickle"), "wb") as f:
            pickle.dump(s, f, protocol=protocol)
    with open(os.path.join(out, "whatif_small.json"), "w") as f:
        json.dump(s, f)
    with open(os.path.join(out, "whatif_small.pickle.gz"), "wb") as f:
        f.write(gzip.compress(pickle.dumps(s), mtime=0))
    empty = dict(s, device_traces=[[]])
    with open(os.path.join(out, "whatif_no_trace.pickle"), "wb") as f:
        pickle.dump(empty, f)
    with open(os.path.join(out, "whatif_not_snapshot.pickle"), "wb") as f:
        pickle.dump({"model": "gpt", "steps": [1, 2, 3]}, f)


if __name__ == "__main__":
    main()
