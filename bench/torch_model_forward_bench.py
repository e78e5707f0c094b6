#!/usr/bin/env python3
"""A transformers model's forward pass, plain torch beside the same model with its products routed
through cudakit's tuner (cudakit.route_torch()), in one process, interleaved per round.

Models are built from a config with random weights (nothing is downloaded), in bfloat16, eval mode,
under torch.no_grad():
  llama   transformers.LlamaModel: hidden 4096, 32 query / 8 key-value heads, MLP 14336 (the
          Llama 3 8B layer), --layers decoder layers (default 2), vocabulary 32000
  gpt2    transformers.GPT2Model: n_embd 2048, 16 heads, --layers blocks (its Conv1D layers are
          addmm with a bias: cudakit's bias epilogue)
Each model's input is --batch x --seq random token ids. First one forward of each kind: torch's,
then under route_torch() with cudakit's TunableOp tuning on (each new GEMM shape is tuned there);
tuning is then switched off, so no timed forward tunes. The two outputs are compared (relative
Frobenius norm of the difference, and the largest element difference over the largest element:
bfloat16 products in another order differ by a few units of its 2^-8 precision per layer).
Then --rounds rounds, each timing --forwards forward passes of both variants between two CUDA
events, the order alternating from round to round, so that clock, power state and data are the
same for both; the routed sample's forwards run inside one route_torch() block, as a program's
forwards do, and the host time of opening and closing a block is reported beside
(block_entry_ms). Prints one JSON line a model ({"bench": "model_forward", ...}, read by
bench/tunable_table.py and bench/report.py) and a line of text.

    PYTHONPATH=build-python python3 bench/torch_model_forward_bench.py --model llama,gpt2 [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time

import torch

import cudakit
from cudakit.matmul import route_torch, routed_calls
from torch_gemm_interleaved import time_sample  # bench/ is the script's folder, first on sys.path

# The bar the outputs must meet: see the module's docstring.
MAX_FROBENIUS = 2e-2
MAX_ELEMENT = 8e-2


def build(name, layers):
    import transformers

    torch.manual_seed(0)
    with torch.device("cuda"):  # weights made and initialised on the GPU: seconds less than on the host
        return make(transformers, name, layers)


def make(transformers, name, layers):
    if name == "llama":
        config = transformers.LlamaConfig(hidden_size=4096, intermediate_size=14336, num_attention_heads=32,
                                          num_key_value_heads=8, num_hidden_layers=layers, vocab_size=32000,
                                          max_position_embeddings=8192)
        model = transformers.LlamaModel(config)
    elif name == "gpt2":
        config = transformers.GPT2Config(n_embd=2048, n_head=16, n_layer=layers, n_positions=8192, vocab_size=32000)
        model = transformers.GPT2Model(config)
    else:
        raise SystemExit(f"torch_model_forward_bench: unknown model {name!r} (llama, gpt2)")
    return model.to(torch.bfloat16).eval(), config.vocab_size


def time_block_entry(times=200):
    """Host milliseconds to open and close an empty route_torch() block (its kernels registered with
    torch's dispatcher and taken out), the median of `times`."""
    taken = []
    for _ in range(times):
        t0 = time.perf_counter()
        with route_torch():
            pass
        taken.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(taken)


def bench_model(name, args):
    model, vocab = build(name, args.layers)
    ids = torch.randint(0, vocab, (args.batch, args.seq), device="cuda",
                        generator=torch.Generator(device="cuda").manual_seed(1))

    def forward():
        return model(input_ids=ids, use_cache=False).last_hidden_state

    def routed():
        with route_torch():
            return forward()

    cudakit.tunable.enable(True)
    cudakit.tunable.tuning_enable(True)
    with torch.no_grad():
        want = forward()
        before = routed_calls()
        t0 = time.time()
        got = routed()  # tunes each new GEMM shape
        torch.cuda.synchronize()
        tuning_s = time.time() - t0
        gemms = routed_calls() - before
        cudakit.tunable.tuning_enable(False)  # the timed forwards run what was tuned, never tune
        diff = (got.float() - want.float())
        frobenius = (diff.norm() / want.float().norm()).item()
        element = (diff.abs().max() / want.float().abs().max()).item()
        forward(), routed()  # both warm after the tuning
        torch.cuda.synchronize()
        samples = {"torch": [], "cudakit": []}
        for r in range(args.rounds):
            for variant in (("torch", "cudakit") if r % 2 == 0 else ("cudakit", "torch")):
                if variant == "torch":
                    samples[variant].append(time_sample(forward, args.forwards))
                else:
                    # A program opens the block once around its forwards (a serving loop, a training
                    # step), so the sample's forwards run in one block, opened before the sample's
                    # first event and closed after its last: opening and closing it (registering the
                    # kernels with torch's dispatcher and taking them out) is timed on its own below.
                    with route_torch():
                        samples[variant].append(time_sample(forward, args.forwards))
        entry_ms = time_block_entry()
    cudakit.tunable.enable(False)
    cudakit.tunable.tuning_enable(True)
    med = {k: statistics.median(v) for k, v in samples.items()}
    spread = {k: (max(v) - min(v)) / med[k] for k, v in samples.items()}
    row = {"bench": "model_forward", "model": name, "layers": args.layers, "batch": args.batch, "seq": args.seq,
           "dtype": "bfloat16", "rounds": args.rounds, "forwards_per_sample": args.forwards,
           "torch_ms": med["torch"], "cudakit_ms": med["cudakit"], "cudakit_vs_torch": med["torch"] / med["cudakit"],
           "torch_spread": spread["torch"], "cudakit_spread": spread["cudakit"],
           "relative_frobenius_difference": frobenius, "max_element_difference": element,
           "equal_within_tolerance": bool(frobenius <= MAX_FROBENIUS and element <= MAX_ELEMENT),
           "routed_gemms_per_forward": gemms, "tuning_s": tuning_s, "block_entry_ms": entry_ms,
           "tuned_results": len(cudakit.tunable.get_results())}
    del model, want, got
    torch.cuda.empty_cache()
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="llama,gpt2", help="comma-separated: llama, gpt2")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--forwards", type=int, default=3, help="forward passes a sample")
    ap.add_argument("--json", default="", help="also append the JSON lines to this file")
    args = ap.parse_args()
    cudakit.tunable.write_file_on_exit(False)
    status = 0
    for name in args.model.split(","):
        row = bench_model(name, args)
        print(json.dumps(row), flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(row) + "\n")
        print(f"{name} forward ({args.layers} layers, {args.batch}x{args.seq} tokens, bfloat16): torch "
              f"{row['torch_ms']:.3f} ms, through cudakit's tuner {row['cudakit_ms']:.3f} ms "
              f"({row['cudakit_vs_torch']:.3f}x), {row['routed_gemms_per_forward']} GEMMs routed a forward, tuning "
              f"{row['tuning_s']:.1f} s, opening and closing the block {row['block_entry_ms'] * 1e3:.0f} us; output difference {row['relative_frobenius_difference']:.2e} (Frobenius), "
              f"{row['max_element_difference']:.2e} (largest element) "
              f"{'within' if row['equal_within_tolerance'] else 'OUTSIDE'} bfloat16's tolerance", flush=True)
        if not row["equal_within_tolerance"] or not math.isfinite(row["cudakit_ms"]):
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
