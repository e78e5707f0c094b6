#!/usr/bin/env python3
"""Records allocation traces with several streams from real PyTorch programs, with torch's memory
history, and writes them in the allocator traces' CSV format (tests/data/alloc-traces/README.md).

Usage (on a machine with a GPU and PyTorch): record_multistream_traces.py OUT_DIR [NAME...]

Programs (each a real workload run on the GPU, not a synthetic size list):
- serve_2w: two serving workers, one stream each, sharing one model's weights; each request
  prefills a prompt of random length and decodes token by token into its own key/value cache,
  the workers' steps interleaved as an event loop runs them.
- serve_4w: the same with four workers and a different request mix (shorter prompts, longer
  generations, a larger model).
- serve_8t: eight serving threads, each a Python thread with a stream of its own, taking
  requests from one shared queue (prefill, then decode into the request's own key/value cache)
  as a threaded inference server does; the trace has a fifth column, the thread.
- train_copy: training steps of a transformer whose next batch is copied in on a copy stream
  (pinned host memory, record_stream onto the compute stream) while the step runs.
- train_comm: training steps whose gradients are bucketed on a communication stream as
  data-parallel training does (flattened buckets, an in-place reduction standing in for the
  all-reduce, unflattened back), overlapping the next step's forward.

Frees are taken at `free_requested` (when the program released the memory), in program order.
"""
import gzip
import math
import os
import random
import sys

import torch
import torch.nn.functional as F


def make_weights(layers, d, vocab, dtype):
    g = torch.Generator(device="cuda").manual_seed(1)
    w = {"emb": torch.randn(vocab, d, device="cuda", dtype=dtype, generator=g) * 0.02}
    for i in range(layers):
        w[f"qkv{i}"] = torch.randn(d, 3 * d, device="cuda", dtype=dtype, generator=g) * 0.02
        w[f"o{i}"] = torch.randn(d, d, device="cuda", dtype=dtype, generator=g) * 0.02
        w[f"up{i}"] = torch.randn(d, 4 * d, device="cuda", dtype=dtype, generator=g) * 0.02
        w[f"down{i}"] = torch.randn(4 * d, d, device="cuda", dtype=dtype, generator=g) * 0.02
    return w


def attention_step(w, i, x, cache, heads):
    # x: [tokens, d]; cache: (k, v) of [past, d] or None. Returns the output and the new cache.
    t, d = x.shape
    qkv = x @ w[f"qkv{i}"]
    q, k, v = qkv.split(d, dim=-1)
    if cache is not None:
        k = torch.cat([cache[0], k])  # a new, longer cache each token, as HF's DynamicCache
        v = torch.cat([cache[1], v])
    hd = d // heads
    qh = q.view(t, heads, hd).transpose(0, 1)
    kh = k.view(-1, heads, hd).transpose(0, 1)
    vh = v.view(-1, heads, hd).transpose(0, 1)
    a = F.scaled_dot_product_attention(qh, kh, vh, is_causal=cache is None)
    x = x + a.transpose(0, 1).reshape(t, d) @ w[f"o{i}"]
    x = x + F.gelu(x @ w[f"up{i}"]) @ w[f"down{i}"]
    return x, (k, v)


class Request:
    def __init__(self, rng, prompt_range, gen_range):
        self.prompt = rng.randint(*prompt_range)
        self.remaining = rng.randint(*gen_range)
        self.caches = None
        self.x = None


def serve(workers, requests_per_worker, layers, d, heads, vocab, prompt_range, gen_range, seed):
    rng = random.Random(seed)
    w = make_weights(layers, d, vocab, torch.bfloat16)
    streams = [torch.cuda.Stream() for _ in range(workers)]
    queues = [[Request(rng, prompt_range, gen_range) for _ in range(requests_per_worker)] for _ in range(workers)]
    active = [None] * workers
    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(context=None, stacks="python", max_entries=2_000_000)
    while any(active) or any(queues):
        for k in range(workers):
            with torch.cuda.stream(streams[k]):
                r = active[k]
                if r is None:
                    if not queues[k]:
                        continue
                    r = active[k] = queues[k].pop()
                    tokens = torch.randint(0, vocab, (r.prompt,), device="cuda")
                    x = w["emb"][tokens]
                    caches = []
                    for i in range(layers):
                        x, c = attention_step(w, i, x, None, heads)
                        caches.append(c)
                    r.caches, r.x = caches, x[-1:]
                    continue
                x = r.x
                for i in range(layers):
                    x, r.caches[i] = attention_step(w, i, x, r.caches[i], heads)
                logits = x @ w["emb"].t()
                nxt = logits.argmax(-1)
                r.x = w["emb"][nxt]
                r.remaining -= 1
                if r.remaining == 0:
                    active[k] = None  # the request's caches are dropped here
        # An event loop with several workers in flight syncs now and then (results to clients).
        if rng.random() < 0.05:
            torch.cuda.synchronize()
    torch.cuda.synchronize()


def serve_threads(threads, requests, layers, d, heads, vocab, prompt_range, gen_range, seed):
    """Worker threads, each with its own stream, serve requests from one queue until it is empty."""
    import queue
    import threading
    rng = random.Random(seed)
    w = make_weights(layers, d, vocab, torch.bfloat16)
    todo = queue.Queue()
    for _ in range(requests):
        todo.put(Request(rng, prompt_range, gen_range))
    streams = [torch.cuda.Stream() for _ in range(threads)]
    errors = []

    def worker(k):
        try:
            with torch.cuda.stream(streams[k]):
                while True:
                    try:
                        r = todo.get_nowait()
                    except queue.Empty:
                        break
                    tokens = torch.randint(0, vocab, (r.prompt,), device="cuda")
                    x = w["emb"][tokens]
                    caches = []
                    for i in range(layers):
                        x, c = attention_step(w, i, x, None, heads)
                        caches.append(c)
                    x = x[-1:]
                    for _ in range(r.remaining):
                        for i in range(layers):
                            x, caches[i] = attention_step(w, i, x, caches[i], heads)
                        nxt = (x @ w["emb"].t()).argmax(-1)
                        x = w["emb"][nxt]
                    # the result goes back to the client: this worker waits for its stream only
                    streams[k].synchronize()
                    del caches, x, tokens
        except Exception as e:  # reported by the main thread
            errors.append(e)

    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(context=None, stacks="python", max_entries=4_000_000)
    pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    torch.cuda.synchronize()
    if errors:
        raise errors[0]
    # Each worker allocates and frees on its own stream only, so the stream names the thread.
    return {streams[k].cuda_stream: k + 1 for k in range(threads)}


def transformer_params(layers, d, vocab):
    torch.manual_seed(2)
    ps = [torch.nn.Parameter(torch.randn(vocab, d, device="cuda") * 0.02)]
    for _ in range(layers):
        for shape in ((d, 3 * d), (d, d), (d, 4 * d), (4 * d, d)):
            ps.append(torch.nn.Parameter(torch.randn(*shape, device="cuda") * 0.02))
    return ps


def forward_loss(ps, tokens, heads):
    emb = ps[0]
    x = emb[tokens]  # [b, t, d]
    b, t, d = x.shape
    for i in range(1, len(ps), 4):
        qkv, o, up, down = ps[i:i + 4]
        h = F.layer_norm(x, (d,))
        q, k, v = (h @ qkv).split(d, dim=-1)
        q, k, v = (y.view(b, t, heads, d // heads).transpose(1, 2) for y in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + a @ o
        x = x + F.gelu(F.layer_norm(x, (d,)) @ up) @ down
    logits = F.layer_norm(x, (d,)) @ emb.t()
    return F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), tokens.view(-1))


def train_copy(steps, layers, d, heads, vocab, seed):
    rng = random.Random(seed)
    ps = transformer_params(layers, d, vocab)
    opt = torch.optim.AdamW(ps, lr=1e-4)
    copy_stream = torch.cuda.Stream()
    main = torch.cuda.current_stream()

    def host_batch():
        b, t = rng.choice([(8, 512), (16, 256), (4, 1024), (12, 384)])
        return torch.randint(0, vocab, (b, t), dtype=torch.long).pin_memory()

    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(context=None, stacks="python", max_entries=2_000_000)
    with torch.cuda.stream(copy_stream):
        nxt = host_batch().to("cuda", non_blocking=True)
    for _ in range(steps):
        main.wait_stream(copy_stream)
        tokens = nxt
        tokens.record_stream(main)
        with torch.cuda.stream(copy_stream):  # the next batch arrives while this step runs
            nxt = host_batch().to("cuda", non_blocking=True)
            # the loader also keeps a device-side augmented copy for a few steps
            aug = (nxt + 1) % vocab
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = forward_loss(ps, tokens, heads)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del tokens, aug, loss
    torch.cuda.synchronize()


def train_comm(steps, layers, d, heads, vocab, bucket_mb, seed):
    rng = random.Random(seed)
    ps = transformer_params(layers, d, vocab)
    opt = torch.optim.SGD(ps, lr=1e-3, momentum=0.9)
    comm = torch.cuda.Stream()
    main = torch.cuda.current_stream()
    bucket_bytes = bucket_mb << 20
    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(context=None, stacks="python", max_entries=2_000_000)
    for _ in range(steps):
        b, t = rng.choice([(8, 512), (16, 256), (4, 1024)])
        tokens = torch.randint(0, vocab, (b, t), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = forward_loss(ps, tokens, heads)
        loss.backward()
        # Buckets of gradients in reverse order, reduced on the communication stream.
        bucket, size, reduced = [], 0, []
        for p in reversed(ps):
            bucket.append(p)
            size += p.grad.numel() * p.grad.element_size()
            if size >= bucket_bytes or p is ps[0]:
                comm.wait_stream(main)
                with torch.cuda.stream(comm):
                    flat = torch.cat([q.grad.reshape(-1) for q in bucket])
                    for q in bucket:
                        q.grad.record_stream(comm)
                    flat.mul_(0.5).add_(flat)  # stands in for the all-reduce
                    parts = flat.split([q.grad.numel() for q in bucket])
                    for q, part in zip(bucket, parts):
                        q.grad.copy_(part.view_as(q.grad))
                    reduced.append(flat)
                bucket, size = [], 0
        main.wait_stream(comm)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del reduced, loss, tokens
    torch.cuda.synchronize()


PROGRAMS = {
    "serve_2w": lambda: serve(2, 12, 8, 1024, 16, 32000, (16, 1500), (16, 128), seed=11),
    "serve_4w": lambda: serve(4, 6, 6, 1536, 12, 32000, (8, 400), (32, 160), seed=12),
    "serve_8t": lambda: serve_threads(8, 64, 6, 1024, 16, 32000, (16, 600), (8, 64), seed=15),
    "train_copy": lambda: train_copy(8, 8, 768, 12, 32000, seed=13),
    "train_comm": lambda: train_comm(8, 8, 1024, 16, 32000, 25, seed=14),
}


def write_trace(path, threads=None):
    """Writes the trace; with `threads` (stream -> thread number, 0 for any other stream), the
    fifth column names each operation's thread."""
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    events = snap["device_traces"][0]

    def thread_column(e):
        return "" if threads is None else f",{threads.get(e['stream'], 0)}"

    live, next_id, lines = {}, 0, []
    for e in events:
        a = e["action"]
        if a == "alloc":
            live[e["addr"]] = (next_id, e["size"])
            lines.append(f"a,{next_id},{e['size']},{e['stream']}" + thread_column(e))
            next_id += 1
        elif a == "free_requested" and e["addr"] in live:
            i, size = live.pop(e["addr"])
            lines.append(f"f,{i},{size},{e['stream']}" + thread_column(e))
    with gzip.open(path, "wt") as f:
        f.write("op,id,size,stream" + ("" if threads is None else ",thread") + "\n")
        f.write("\n".join(lines) + "\n")
    streams = {l.split(",")[3] for l in lines}
    print(f"{path}: {len(lines)} ops, {len(streams)} streams, {len(live)} live at the end")


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or list(PROGRAMS)
    os.makedirs(out, exist_ok=True)
    for name in names:
        torch.cuda.empty_cache()
        try:
            threads = PROGRAMS[name]()
            write_trace(os.path.join(out, f"trace_{name}.csv.gz"), threads)
        except Exception as e:  # the other programs still run
            import traceback
            traceback.print_exc()
            torch.cuda.memory._record_memory_history(enabled=None)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
