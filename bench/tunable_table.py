#!/usr/bin/env python3
"""The TunableOp table from tunable_bench's and torch_tunable_bench.py's JSON lines (one file):
TFLOP/s of cuBLAS default, cuBLASLt's first heuristic choice and cudakit's tuned solution, the
ratios tuned/default and tuned/heuristic, torch.matmul with and without its TunableOp, the
decode-style shapes' fraction of the bandwidth bound (peak: 2 x memory clock x bus width) and of the
measured device-to-device copy bandwidth, the tuning time; then the geometric means
and the targets (tuned >= 0.99x default on every shape, geomean >= 1.20x over default and >= 1.03x
over the heuristic's first, decode >= 80% of the bound, tuning <= 2 s a shape).

    python3 bench/tunable_table.py tunable.jsonl

Rows of bench/torch_gemm_interleaved.py ({"bench": "gemm_interleaved"}: cudakit and torch timed in
one process, alternating per round) get a table of their own: tuned/torch per shape and the
geometric means, with the targets (default >= 0.99x torch.matmul, tuned >= 0.99x the better of
torch and its TunableOp on every shape, geomean tuned/torch.matmul >= 1.05).
"""
import json
import math
import sys


def interleaved_table(rows):
    """The table of bench/torch_gemm_interleaved.py's rows (one process, alternating rounds)."""
    fmt = lambda v, spec='.1f': format(v, spec) if isinstance(v, (int, float)) else '-'  # noqa: E731
    print(f"| {'shape':32} | torch | torch TunableOp | cudakit default | cudakit tuned | default/torch | "
          f"tuned/torch | tuned/best torch |")
    print('|' + '---|' * 8)
    logs = {'tuned_vs_torch': [], 'default_vs_torch': [], 'tuned_vs_best_torch': []}
    for r in rows:
        for k in logs:
            logs[k].append(math.log(r[k]))
        print(f"| {r['shape']:32} | {fmt(r['torch_tflops'])} | {fmt(r.get('torch_tunableop_tflops'))} | "
              f"{fmt(r['default_tflops'])} | {fmt(r['tuned_tflops'])} | {r['default_vs_torch']:.3f} | "
              f"{r['tuned_vs_torch']:.3f} | {r['tuned_vs_best_torch']:.3f} |")
    if rows:
        geo = {k: math.exp(sum(v) / len(v)) for k, v in logs.items()}
        print(f"\ngeomean over {len(rows)} shapes: tuned/torch.matmul {geo['tuned_vs_torch']:.3f} (target >= 1.05), "
              f"default/torch.matmul {geo['default_vs_torch']:.3f}; worst default/torch "
              f"{min(r['default_vs_torch'] for r in rows):.3f} (target >= 0.99), worst tuned/better torch "
              f"{min(r['tuned_vs_best_torch'] for r in rows):.3f} (target >= 0.99)")


def main():
    ours, torch_rows, summary, interleaved = {}, {}, None, []
    for line in open(sys.argv[1]):
        line = line.strip()
        if not line.startswith('{'):
            continue
        row = json.loads(line)
        if row.get('bench') == 'gemm_interleaved' and 'error' not in row:
            interleaved.append(row)
        elif row.get('bench') == 'tunable_summary':
            summary = row
        elif row.get('bench') == 'tunable' and row.get('impl') == 'cudakit':
            ours[row['shape']] = row
        elif row.get('bench') == 'tunable' and row.get('impl') == 'torch':
            torch_rows[row['shape']] = row
    if interleaved:
        print("cudakit and torch in one process, alternating per round (bench/torch_gemm_interleaved.py):\n")
        interleaved_table(interleaved)
        print()
    if not ours:
        return
    print(f"| {'shape':34} | default | heur. 1st | tuned | tuned/default | tuned/heur. | torch | torch TunableOp | "
          f"tuned/torch | bound % | copy % | tuning ms | solution |")
    print('|' + '---|' * 13)
    logs = {'default': [], 'heuristic': [], 'torch': []}
    worst, decode_fractions, copy_fractions, host_issued = 1e9, [], [], []
    for name, r in ours.items():
        t = torch_rows.get(name, {})
        vs_default = r['default_ms'] / r['tuned_ms']
        vs_heuristic = r['heuristic_ms'] / r['tuned_ms']
        logs['default'].append(math.log(vs_default))
        logs['heuristic'].append(math.log(vs_heuristic))
        worst = min(worst, vs_default)
        torch_tf = t.get('default_tflops')
        vs_torch = r['tuned_tflops'] / torch_tf if torch_tf else None
        if vs_torch:
            logs['torch'].append(math.log(vs_torch))
        bound = r.get('tuned_fraction_of_peak_bandwidth')
        if bound is not None:
            decode_fractions.append(bound)
        copy = r.get('tuned_fraction_of_copy_bandwidth')
        if copy is not None:
            copy_fractions.append(copy)
        if r.get('tuned_ms_host_issued'):
            host_issued.append(f"{name} {r['tuned_ms_host_issued'] / r['tuned_ms']:.2f}x")
        fmt = lambda v, spec='.1f': format(v, spec) if isinstance(v, (int, float)) else '-'
        print(f"| {name:34} | {r['default_tflops']:7.1f} | {r['heuristic_tflops']:9.1f} | {r['tuned_tflops']:5.1f} | "
              f"{vs_default:13.2f} | {vs_heuristic:11.2f} | {fmt(torch_tf)} | {fmt(t.get('tunableop_tflops'))} | "
              f"{fmt(vs_torch, '.2f')} | {fmt(bound * 100 if bound is not None else None, '.0f')} | "
              f"{fmt(copy * 100 if copy is not None else None, '.0f')} | "
              f"{r['tuning_ms']:.0f} | {r['tuned_solution']} |")
    geo = {k: math.exp(sum(v) / len(v)) if v else float('nan') for k, v in logs.items()}
    print()
    print(f"geomean tuned/default {geo['default']:.3f} (target >= 1.20), tuned/heuristic-first {geo['heuristic']:.3f} "
          f"(target >= 1.03), tuned/torch.matmul {geo['torch']:.3f}; worst tuned/default {worst:.3f} (target >= 0.99)")
    if decode_fractions:
        print(f"decode shapes: {min(decode_fractions) * 100:.0f}% to {max(decode_fractions) * 100:.0f}% of the "
              f"peak-bandwidth bound (target >= 80%), {min(copy_fractions) * 100:.0f}% to "
              f"{max(copy_fractions) * 100:.0f}% of the measured copy bandwidth")
    if host_issued:
        print("decode shapes issued call by call from the host instead of replayed from a graph (time per call, "
              "host-issued over graph; Note [Timing decode GEMMs from a graph]): " + ", ".join(host_issued))
    if summary:
        print(f"tuning at most {summary['max_tuning_ms']:.0f} ms a shape (target <= 2000); host time of a tuned call "
              f"{summary['tuned_call_host_us']:.2f} us vs cublasGemmEx {summary['cublas_call_host_us']:.2f} us "
              f"(target <= 1 us more); bandwidth peak {summary['peak_bandwidth_tb_s']:.2f} TB/s, copy "
              f"{summary['copy_bandwidth_tb_s']:.2f} TB/s")


if __name__ == '__main__':
    main()
