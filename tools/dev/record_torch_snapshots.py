#!/usr/bin/env python3
"""Records PyTorch memory snapshots (`torch.cuda.memory._dump_snapshot`) of real torch programs,
with the peaks torch itself reports, for validating `cudakit alloc-replay SNAPSHOT.pickle`.

Usage (on a machine with a GPU and PyTorch): record_torch_snapshots.py OUT_DIR [NAME...]

Each program runs in a process of its own, once with PyTorch's allocator defaults and once with
`expandable_segments:True`, recording from before its first allocation so that the snapshot's
trace holds every allocation. Beside each `NAME-SETTING.pickle` goes `NAME-SETTING.peaks.json`:
torch.cuda.max_memory_reserved(), max_memory_allocated() and the whole memory_stats().

Programs (the workloads of record_multistream_traces.py, smaller):
- train: four training steps of a GPT-style transformer (bf16 autocast, AdamW), changing shapes.
- serve: a serving loop of two workers on their own streams, prefill and decode with KV caches.
"""
import json
import os
import subprocess
import sys

SETTINGS = {"default": "", "expandable": "expandable_segments:True"}


def run_program(name, path):
    import random

    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import record_multistream_traces as programs

    torch.cuda.memory._record_memory_history(context="all", stacks="python", max_entries=1_000_000)
    if name == "train":
        rng = random.Random(21)
        ps = programs.transformer_params(6, 768, 32000)
        opt = torch.optim.AdamW(ps, lr=1e-4)
        for _ in range(4):
            b, t = rng.choice([(8, 512), (16, 256), (4, 1024)])
            tokens = torch.randint(0, 32000, (b, t), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = programs.forward_loss(ps, tokens, 12)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del loss, tokens
    elif name == "serve":
        # serve() starts its own recording after loading the weights: start it here instead.
        record = torch.cuda.memory._record_memory_history
        torch.cuda.memory._record_memory_history = lambda *a, **k: None
        try:
            programs.serve(2, 5, 6, 1024, 16, 32000, (16, 900), (8, 64), seed=22)
        finally:
            torch.cuda.memory._record_memory_history = record
    else:
        raise SystemExit(f"unknown program {name}")
    torch.cuda.synchronize()
    torch.cuda.memory._dump_snapshot(path + ".pickle")
    peaks = {
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "allocator_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(),
        "memory_stats": torch.cuda.memory_stats(),
    }
    with open(path + ".peaks.json", "w") as f:
        json.dump(peaks, f, indent=1)
    print(f"{path}: reserved {peaks['max_memory_reserved']} allocated {peaks['max_memory_allocated']}")


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--child":
        run_program(sys.argv[2], sys.argv[3])
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name in sys.argv[2:] or ["train", "serve"]:
        for setting, conf in SETTINGS.items():
            env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF=conf)
            subprocess.run([sys.executable, __file__, "--child", name, os.path.join(out, f"{name}-{setting}")],
                           env=env, check=False)


if __name__ == "__main__":
    main()
