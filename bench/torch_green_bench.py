#!/usr/bin/env python3
"""PyTorch's peer of green_bench: the bf16 GEMM on the whole device and in green contexts of 64,
32 and 16 SMs (torch.cuda.green_contexts.GreenContext.create), JSON lines as green_bench's.
torch's contexts do not say how many SMs they were granted: the requested count is reported."""
import json
import sys

import torch


def emit(**line):
    line["bench"] = "green"
    print(json.dumps(line), flush=True)


def gemm_ms(a, b, reps, stream):
    with torch.cuda.stream(stream):
        a @ b
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(stream)
            a @ b
            stop.record(stream)
            stop.synchronize()
            times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    reps = 10
    a = torch.ones(n, n, dtype=torch.bfloat16, device="cuda")
    b = torch.ones(n, n, dtype=torch.bfloat16, device="cuda")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    whole = gemm_ms(a, b, reps, torch.cuda.current_stream())
    emit(case="gemm", impl="torch", sms=sms, ms=whole)
    try:
        from torch.cuda.green_contexts import GreenContext  # noqa: PLC0415
    except ImportError as error:
        emit(case="gemm", impl="torch_green", error=str(error))
        return
    for count in (64, 32, 16):
        try:
            context = GreenContext.create(count, 0)
            enter = getattr(context, "set_context", None) or context.make_current
            leave = getattr(context, "pop_context", None) or context.pop_current
            enter()
            try:
                ms = gemm_ms(a, b, reps, torch.cuda.current_stream())
            finally:
                leave()
            emit(case="gemm", impl="torch_green", sms=count, requested=count, ms=ms,
                 bound_ms=1.1 * sms / count * whole)
        except Exception as error:  # an unsupported build or driver is the result
            emit(case="gemm", impl="torch_green", sms=count, error=f"{type(error).__name__}: {error}")


if __name__ == "__main__":
    main()
