#!/usr/bin/env python3
"""The TunableOp table from tunable_bench's and torch_tunable_bench.py's JSON lines (one file):
TFLOP/s of cuBLAS default, cuBLASLt's first heuristic choice and cudakit's tuned solution, the
ratios tuned/default and tuned/heuristic, torch.matmul with and without its TunableOp, the
decode-style shapes' fraction of the bandwidth bound (peak: 2 x memory clock x bus width) and of the
measured device-to-device copy bandwidth, the tuning time; then the geometric means
and the targets (tuned >= 0.99x default on every shape, geomean >= 1.20x over default and >= 1.03x
over the heuristic's first, decode >= 80% of the bound, tuning <= 2 s a shape).

    python3 bench/tunable_table.py tunable.jsonl [--write DOC]

--write DOC: the interleaved and model tables (below) replace the text between DOC's markers
(INTERLEAVED_BEGIN / INTERLEAVED_END; docs/gemm.md has them) instead of being printed.

Rows of bench/torch_gemm_interleaved.py ({"bench": "gemm_interleaved"}: cudakit and torch timed in
one process, alternating per round) get a table of their own: tuned/torch per shape and the
geometric means, with the targets (default >= 0.99x torch.matmul, tuned >= 0.99x the better of
torch and its TunableOp on every shape, geomean tuned/torch.matmul >= 1.05, float8 >= 0.99x
torch._scaled_mm). Rows of bench/torch_model_forward_bench.py ({"bench": "model_forward"}) get one
too: a model's forward pass, plain torch against cudakit.route_torch().
"""
import json
import math
import os
import sys


INTERLEAVED_BEGIN = "<!-- gemm interleaved: begin (bench/tunable_table.py FILE --write DOC writes this part) -->"
INTERLEAVED_END = "<!-- gemm interleaved: end -->"


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float('nan')


def interleaved_table(rows):
    """The markdown table of bench/torch_gemm_interleaved.py's rows (one process, alternating
    rounds) and its summary against the targets, as a string."""
    fmt = lambda v, spec='.1f': format(v, spec) if isinstance(v, (int, float)) else '-'  # noqa: E731
    out = [f"| {'shape':32} | torch | torch TunableOp | cudakit default | cudakit tuned | default/torch | "
           f"tuned/torch | tuned/best torch |", '|' + '---|' * 8]
    for r in rows:
        torch_name = ' (_scaled_mm)' if r.get('fp8') else ''
        out.append(f"| {r['shape'] + torch_name:32} | {fmt(r['torch_tflops'])} | {fmt(r.get('torch_tunableop_tflops'))} | "
                   f"{fmt(r['default_tflops'])} | {fmt(r['tuned_tflops'])} | {r['default_vs_torch']:.3f} | "
                   f"{r['tuned_vs_torch']:.3f} | {r['tuned_vs_best_torch']:.3f} |")
    if not rows:
        return "\n".join(out)
    geo = {k: geomean([r[k] for r in rows]) for k in ('tuned_vs_torch', 'default_vs_torch', 'tuned_vs_best_torch')}
    worst = lambda k: min(rows, key=lambda r: r[k])  # noqa: E731
    wd, wt = worst('default_vs_torch'), worst('tuned_vs_best_torch')
    fp8 = [r for r in rows if r.get('fp8')]
    met = lambda ok: 'met' if ok else 'MISSED'  # noqa: E731
    out += ['', f"TFLOP/s (2MNK flops a product), medians of each variant's samples, timed from graph replays "
                f"where the row says it was graphed. Over {len(rows)} shapes:", '',
            f"- geometric mean tuned/torch.matmul {geo['tuned_vs_torch']:.3f} (target >= 1.05: "
            f"{met(geo['tuned_vs_torch'] >= 1.05)}); default/torch.matmul {geo['default_vs_torch']:.3f}; "
            f"tuned/better torch {geo['tuned_vs_best_torch']:.3f}",
            f"- worst default/torch {wd['default_vs_torch']:.3f} ({wd['shape']}; target >= 0.99: "
            f"{met(wd['default_vs_torch'] >= 0.99)})",
            f"- worst tuned/better of torch and torch's TunableOp {wt['tuned_vs_best_torch']:.3f} ({wt['shape']}; "
            f"target >= 0.99: {met(wt['tuned_vs_best_torch'] >= 0.99)})"]
    if fp8:
        wf = min(fp8, key=lambda r: r['tuned_vs_torch'])
        out.append(f"- float8 against torch._scaled_mm ({fp8[0]['fp8'].split(';')[0]}): worst tuned "
                   f"{wf['tuned_vs_torch']:.3f}, default {min(r['default_vs_torch'] for r in fp8):.3f} "
                   f"({wf['shape']}; target >= 0.99: {met(wf['tuned_vs_torch'] >= 0.99)})")
    return "\n".join(out)


def model_table(rows):
    """The markdown table of bench/torch_model_forward_bench.py's rows, as a string."""
    out = ["| model | layers | tokens | torch ms | through cudakit's tuner ms | cudakit/torch speed | GEMMs routed | "
           "output difference (Frobenius, largest element) |", '|' + '---|' * 8]
    for r in rows:
        out.append(f"| {r['model']} | {r['layers']} | {r['batch']}x{r['seq']} | {r['torch_ms']:.3f} | "
                   f"{r['cudakit_ms']:.3f} | {r['cudakit_vs_torch']:.3f} | {r['routed_gemms_per_forward']} | "
                   f"{r['relative_frobenius_difference']:.1e}, {r['max_element_difference']:.1e}"
                   f"{'' if r['equal_within_tolerance'] else ' (OUTSIDE tolerance)'} |")
    return "\n".join(out)


def interleaved_section(interleaved, models, source):
    """The generated part of a document: both tables, saying where they came from."""
    parts = [f"Generated by `python3 bench/tunable_table.py {source} --write DOC` from the JSON lines of "
             f"bench/torch_gemm_interleaved.py and bench/torch_model_forward_bench.py.", '']
    if interleaved:
        parts += [interleaved_table(interleaved), '']
    if models:
        parts += ["A model's forward pass, plain torch against its products routed through cudakit's tuner "
                  "(`cudakit.route_torch()`), interleaved per round:", '', model_table(models), '']
    return "\n".join(parts)


def main():
    if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and sys.argv[2] != '--write'):
        raise SystemExit(__doc__)
    ours, torch_rows, summary, interleaved, models = {}, {}, None, [], []
    with open(sys.argv[1]) as f:
        lines = f.read().splitlines()
    for line in lines:
        line = line.strip()
        if not line.startswith('{'):
            continue
        row = json.loads(line)
        if row.get('bench') == 'gemm_interleaved' and 'error' not in row:
            interleaved.append(row)
        elif row.get('bench') == 'model_forward':
            models.append(row)
        elif row.get('bench') == 'tunable_summary':
            summary = row
        elif row.get('bench') == 'tunable' and row.get('impl') == 'cudakit':
            ours[row['shape']] = row
        elif row.get('bench') == 'tunable' and row.get('impl') == 'torch':
            torch_rows[row['shape']] = row
    if len(sys.argv) == 4:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from report import write_section
        write_section(sys.argv[3], interleaved_section(interleaved, models, sys.argv[1]), INTERLEAVED_BEGIN,
                      INTERLEAVED_END)
        return
    if interleaved:
        print("cudakit and torch in one process, alternating per round (bench/torch_gemm_interleaved.py):\n")
        print(interleaved_table(interleaved))
        print()
    if models:
        print(model_table(models))
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
