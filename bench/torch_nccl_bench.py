#!/usr/bin/env python3
"""torch.distributed's side of bench/nccl_bench.cpp, measured the same way: one process per GPU
(spawned with torch.multiprocessing, no torchrun), init_process_group("nccl") through the
environment, every operation over sizes 8 B .. 1 GiB (x4 apart), time per operation with a host
timer around `iterations` calls and one synchronize (the median of three such blocks), algbw and
busbw as nccl-tests define them.
One JSON line per (operation, size), from rank 0.
Run:  python3 bench/torch_nccl_bench.py [--processes N] [--min-bytes B] [--max-bytes B] [--ops a,b]"""
import argparse
import json
import os
import socket
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

OPS = ["all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter", "all_to_all", "send_recv"]


def bus_factor(op, n):
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return 1.0


def issue(op, rank, n, inp, out, count):
    if op == "all_reduce":
        dist.all_reduce(inp[:count])
    elif op == "reduce":
        dist.reduce(inp[:count], dst=0)
    elif op == "broadcast":
        dist.broadcast(inp[:count], src=0)
    elif op == "all_gather":
        dist.all_gather_into_tensor(out[: count // n * n], inp[: count // n])
    elif op == "reduce_scatter":
        dist.reduce_scatter_tensor(out[: count // n], inp[: count // n * n])
    elif op == "all_to_all":
        dist.all_to_all_single(out[: count // n * n], inp[: count // n * n])
    else:
        ops = [dist.P2POp(dist.isend, inp[:count], (rank + 1) % n), dist.P2POp(dist.irecv, out[:count], (rank - 1) % n)]
        for r in dist.batch_isend_irecv(ops):
            r.wait()


def worker(rank, n, port, args):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(n), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    elems = max(args.max_bytes // 4, n)
    inp = torch.ones(elems, device="cuda")
    out = torch.empty(elems, device="cuda")
    for op in args.ops.split(","):
        size = args.min_bytes
        while size <= args.max_bytes:
            count = size // 4
            if count // n == 0 and op in ("all_gather", "reduce_scatter", "all_to_all"):
                size *= 4
                continue
            iterations = args.iterations or int(min(max(4e9 / size, 20), 200))
            for _ in range(args.warmup):
                issue(op, rank, n, inp, out, count)
            torch.cuda.synchronize()
            blocks = []  # three timed blocks, their median (Note [Timed blocks of collectives], nccl_bench.cpp)
            for _ in range(3):
                start = time.perf_counter()
                for _ in range(iterations):
                    issue(op, rank, n, inp, out, count)
                torch.cuda.synchronize()
                blocks.append((time.perf_counter() - start) * 1e6 / iterations)
            us = sorted(blocks)[1]
            algbw = size / us / 1e3
            if rank == 0:
                print(json.dumps({"bench": "nccl", "impl": "torch", "mode": "multi_process", "op": op, "bytes": size, "ranks": n,
                                  "iterations": iterations, "time_us": round(us, 3), "algbw_GBps": round(algbw, 3),
                                  "busbw_GBps": round(algbw * bus_factor(op, n), 3),
                                  "nccl": ".".join(map(str, torch.cuda.nccl.version()))}), flush=True)
            size *= 4
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--processes", type=int, default=torch.cuda.device_count())
    p.add_argument("--min-bytes", type=int, default=8)
    p.add_argument("--max-bytes", type=int, default=1 << 30)
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iterations", type=int, default=0)
    args = p.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(worker, args=(args.processes, port, args), nprocs=args.processes, join=True)


if __name__ == "__main__":
    main()
