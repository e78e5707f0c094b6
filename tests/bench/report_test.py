#!/usr/bin/env python3
"""bench/report.py on a run folder written here: what each area reads, the direction of every
ratio, the skipped parts, the markdown, and `compare` telling movement from noise.
    python3 tests/bench/report_test.py"""
import json
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import report  # noqa: E402
import tunable_table  # noqa: E402


def write(folder, name, lines):
    with open(os.path.join(folder, name), "w") as f:
        for line in lines:
            f.write((json.dumps(line) if isinstance(line, dict) else line) + "\n")


def alloc_line(allocator, workload, value, unit="ns"):
    return {"allocator": allocator, "workload": workload, "value": value, "unit": unit}


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.out = self.dir.name
        write(self.out, "alloc.jsonl", [
            "a table line, not JSON",
            alloc_line("cudakit", "pair_512B", 70), alloc_line("cudakit", "pair_512B", 90),
            alloc_line("cudakit", "pair_512B", 80), alloc_line("torch", "pair_512B", 320),
            alloc_line("cudakit", "serve.ns_per_op", 100, "ns/op"), alloc_line("torch", "serve.ns_per_op", 250, "ns/op"),
            alloc_line("cudakit", "serve.peak_reserved_MiB", 550, "MiB"),
            alloc_line("torch", "serve.peak_reserved_MiB", 1100, "MiB"),
            alloc_line("cudaMallocAsync", "serve.peak_reserved_MiB", 500, "MiB"),
            alloc_line("cudakit", "serve.peak_requested_MiB", 500, "MiB"),
            alloc_line("cudakit", "threads_16.pairs_per_s", 2e8, "1/s"),
            alloc_line("torch", "threads_16.pairs_per_s", 4e5, "1/s"),
            {"allocator": "cudakit", "workload": "serve.timeline", "unit": "MiB", "op": [0, 1],
             "allocated": [1.0, 2.0], "reserved": [2.0, 2.0]},
        ])
        write(self.out, "jiterator.jsonl", [
            {"bench": "jiterator", "impl": "cudakit", "case": "copy_2^28_float32_GBps", "value": 4000, "unit": "GB/s"},
            {"bench": "jiterator", "impl": "cudakit", "case": "axpy_2^28_float32_GBps", "value": 3900, "unit": "GB/s"},
            {"bench": "jiterator", "impl": "torch_jiterator", "case": "axpy_2^28_float32_GBps", "value": 3000,
             "unit": "GB/s"},
            {"bench": "jiterator", "impl": "cudakit", "case": "cached_call_host_us", "value": 2.0, "unit": "us"},
            {"bench": "jiterator", "impl": "torch_jiterator", "case": "cached_call_host_us", "value": 10.0,
             "unit": "us"},
        ])
        write(self.out, "skipped.txt", ["nccl bandwidth: 1 GPU here"])
        write(self.out, "machine.json", ['{"gpu": "NVIDIA H200", "driver": "580", "gpus": 1}'])

    def tearDown(self):
        self.dir.cleanup()

    def area(self, built, name):
        return next(a for a in built["areas"] if a["name"] == name)

    def test_ratios_say_cudakit_is_better_above_one_whichever_way_the_unit_runs(self):
        built = report.build(self.out, "abc1234", "2026-12-01")
        rows = {r["case"]: r for r in self.area(built, "alloc")["rows"]}
        pair = rows["pair_512B (ns per op)"]
        self.assertEqual(pair["cudakit"], 80)  # the median of the three processes
        self.assertAlmostEqual(pair["vs_peer"], 4.0)
        self.assertAlmostEqual(pair["noise"], 0.125)  # (90 - 70) / 2 / 80
        reserved = rows["serve: peak reserved"]
        self.assertAlmostEqual(reserved["vs_peer"], 2.0)  # less memory is better
        self.assertAlmostEqual(reserved["of_limit"], 500 / 550)
        self.assertAlmostEqual(rows["serve: peak reserved vs cudaMallocAsync"]["vs_peer"], 500 / 550)
        threads = rows["threads_16 pairs_per_s"]
        self.assertTrue(threads["higher_is_better"])
        self.assertAlmostEqual(threads["vs_peer"], 500)
        jit = {r["case"]: r for r in self.area(built, "jiterator")["rows"]}
        self.assertAlmostEqual(jit["axpy_2^28_float32_GBps"]["vs_peer"], 1.3)
        self.assertAlmostEqual(jit["axpy_2^28_float32_GBps"]["of_limit"], 3900 / 4000)
        self.assertAlmostEqual(jit["cached_call_host_us"]["vs_peer"], 5.0)

    def test_a_trace_replayed_in_turn_with_torch_is_its_row(self):
        with open(os.path.join(self.out, "alloc.jsonl"), "a") as f:
            for allocator, ns in (("cudakit", 120), ("torch", 360)):
                f.write(json.dumps(alloc_line(allocator, "serve.ns_per_op.in_turn_cudakit_torch", ns, "ns/op")) + "\n")
        rows = {r["case"]: r for r in self.area(report.build(self.out, "abc1234", "2026-12-01"), "alloc")["rows"]}
        self.assertNotIn("serve: ns per op", rows)  # the two processes' figures (100 and 250) are not the row
        in_turn = rows["serve: ns per op, in turn with torch in one process"]
        self.assertEqual((in_turn["cudakit"], in_turn["peer_value"]), (120, 360))
        self.assertAlmostEqual(in_turn["vs_peer"], 3.0)

    def test_parts_without_output_and_announced_skips_are_listed(self):
        built = report.build(self.out)
        skipped = {s["part"]: s["why"] for s in built["skipped"]}
        self.assertEqual(skipped["nccl bandwidth"], "1 GPU here")
        self.assertIn("tunable", skipped)
        self.assertNotIn("alloc", skipped)
        self.assertEqual(built["machine"]["gpu"], "NVIDIA H200")

    def test_markdown_has_one_table_per_area_with_the_run_named(self):
        md = report.markdown(report.build(self.out, "abc1234", "2026-12-01"))
        self.assertIn("Commit abc1234, 2026-12-01; NVIDIA H200", md)
        self.assertEqual(md.count("| case | unit | cudakit |"), 2)
        self.assertIn("| pair_512B (ns per op) | ns | 80 | torch | 320 | 4.00x |", md)
        self.assertIn("- nccl bandwidth: 1 GPU here", md)

    def test_an_area_from_another_commit_says_so(self):
        built = report.build(self.out, "abc1234", "2026-12-01", {"jiterator": "def5678", "alloc": "abc1234"})
        self.assertEqual(self.area(built, "jiterator")["commit"], "def5678")
        self.assertNotIn("commit", self.area(built, "alloc"))
        md = report.markdown(built)
        self.assertEqual(md.count("This area: commit def5678 (the other areas: abc1234)."), 1)
        with self.assertRaises(SystemExit):
            report.build(self.out, "abc1234", "2026-12-01", {"no_such_area": "def5678"})

    def test_core_rows_take_the_medians_of_interleaved_repetitions(self):
        write(self.out, "core.txt", [
            "BM_EventTiming_cudakit_mean                 9000 ns         9000 ns            7",
            "BM_EventTiming_cudakit_median               8000 ns         8000 ns            7",
            "BM_EventTiming_cudakit_stddev                900 ns          900 ns            7",
            "BM_EventTiming_cudakit_cv                  10.00 %         10.00 %             7",
            "BM_EventTiming_raw_mean                     7900 ns         7900 ns            7",
            "BM_EventTiming_raw_median                   8400 ns         8400 ns            7",
            "BM_EmptyKernelLaunch_cudakit_current_stream_median  3000 ns  3000 ns            7",
            "BM_EmptyKernelLaunch_raw_median             3300 ns         3300 ns            7",
            "BM_LaunchKernel_listened_median             3500 ns         3500 ns            7",
        ])
        rows = {r["case"]: r for r in self.area(report.build(self.out), "core")["rows"]}
        self.assertEqual(set(rows), {"EventTiming (cudakit vs the raw CUDA call)",
                                     "EmptyKernelLaunch (cudakit vs the raw CUDA call)"})
        timing = rows["EventTiming (cudakit vs the raw CUDA call)"]
        self.assertEqual((timing["cudakit"], timing["peer_value"]), (8000, 8400))
        self.assertAlmostEqual(rows["EmptyKernelLaunch (cudakit vs the raw CUDA call)"]["vs_peer"], 1.1)
        # One repetition each (no aggregates): the plain rows.
        write(self.out, "core.txt", ["BM_EventTiming_cudakit         8583 ns         8582 ns        30258",
                                     "BM_EventTiming_raw             7496 ns         7494 ns        36427"])
        rows = {r["case"]: r for r in self.area(report.build(self.out), "core")["rows"]}
        self.assertEqual(rows["EventTiming (cudakit vs the raw CUDA call)"]["cudakit"], 8583)

    def test_graph_host_times_are_each_sides_median_process(self):
        write(self.out, "graph.txt", [
            "replay() host time, 8-kernel graph:                     5.06 us (median of 400)",
            "1000-kernel replay, GPU time per tiny dependent kernel:  0.746 us (torch: 1.14 us)",
            "torch 2.11.0 on NVIDIA H200",
            "torch replay() host time, 8-kernel graph:                       2.52 us (median of 400)",
            "torch 1000-kernel replay, GPU time per tiny dependent kernel:  1.013 us",
            "replay() host time, 8-kernel graph:                     2.60 us (median of 400)",
            "torch 2.11.0 on NVIDIA H200",
            "torch replay() host time, 8-kernel graph:                       4.90 us (median of 400)",
            "replay() host time, 8-kernel graph:                     2.80 us (median of 400)",
            "torch 2.11.0 on NVIDIA H200",
            "torch replay() host time, 8-kernel graph:                       2.70 us (median of 400)",
        ])
        rows = {r["case"]: r for r in self.area(report.build(self.out), "graphs")["rows"]}
        eight = rows["replay host time, 8-kernel graph"]
        self.assertEqual(eight["cudakit"], 2.80)
        self.assertEqual(eight["peer_value"], 2.70)
        self.assertAlmostEqual(eight["noise"], (5.06 - 2.60) / 2 / 2.80)
        one = rows["1000-kernel replay, GPU time per tiny kernel"]
        self.assertEqual((one["cudakit"], one["peer_value"], one["noise"]), (0.746, 1.013, 0.05))

    def test_the_same_graph_replayed_in_turn_is_the_replay_comparison(self):
        write(self.out, "graph.txt", [
            "replay() host time, 8-kernel graph:                     4.47 us (median of 400)",
            "replay() host time, the same 8 torch kernels, one process in turn:   3.10 us (median of 1000)",
            "torch replay() host time, the same 8 torch kernels, one process in turn:   3.30 us (median of 1000)",
            "torch 2.11.0 on NVIDIA H200",
            "torch replay() host time, 8-kernel graph:                       4.26 us (median of 400)",
            "replay() host time, 8-kernel graph:                     3.20 us (median of 400)",
            "replay() host time, the same 8 torch kernels, one process in turn:   2.90 us (median of 1000)",
            "torch replay() host time, the same 8 torch kernels, one process in turn:   3.00 us (median of 1000)",
            "torch 2.11.0 on NVIDIA H200",
            "torch replay() host time, 8-kernel graph:                       2.76 us (median of 400)",
        ])
        rows = {r["case"]: r for r in self.area(report.build(self.out), "graphs")["rows"]}
        same = rows["replay host time, the same 8 torch kernels, one process in turn"]
        self.assertEqual((same["cudakit"], same["peer_value"]), (3.0, 3.15))  # each side's median process
        self.assertAlmostEqual(same["vs_peer"], 1.05)
        eight = rows["replay host time, 8-kernel graph"]  # two graphs, two processes: cudakit's figure alone
        self.assertEqual((eight["cudakit"], eight["peer_value"], eight["vs_peer"]), (3.835, None, None))

    def test_compare_reports_movement_beyond_noise_only(self):
        before = report.build(self.out, "aaa", "2026-12-01")
        a = os.path.join(self.out, "a.json")
        with open(a, "w") as f:
            json.dump(before, f)
        # The same run: nothing moved.
        _, moved = report.compare(a, a)
        self.assertEqual(moved, [])
        # cudakit's cached call 2.0 -> 3.0 us (+50%, beyond 5%); axpy 3900 -> 3950 (+1.3%, within).
        with open(os.path.join(self.out, "jiterator.jsonl")) as f:
            lines = [json.loads(x) for x in f]
        for r in lines:
            if r["impl"] == "cudakit" and r["case"] == "cached_call_host_us":
                r["value"] = 3.0
            if r["impl"] == "cudakit" and r["case"] == "axpy_2^28_float32_GBps":
                r["value"] = 3950
        write(self.out, "jiterator.jsonl", lines)
        b = os.path.join(self.out, "b.json")
        with open(b, "w") as f:
            json.dump(report.build(self.out, "bbb", "2026-12-02"), f)
        text, moved = report.compare(a, b)
        self.assertEqual([(m[0], m[1]) for m in moved], [("jiterator", "cached_call_host_us")])
        self.assertFalse(moved[0][5])  # slower: worse
        self.assertIn("WORSE", text)
        self.assertIn("1 moved beyond noise", text)

    def test_performance_section_replaces_only_the_marked_part(self):
        built = report.build(self.out, "abc1234", "2026-12-01")
        section = report.performance_section(built, "docs/perf/run/report.json", "docs/performance.md")
        # Links are relative to the document (docs/), not to the repository root.
        self.assertIn("](perf/run/report.md)", section)
        self.assertNotIn("docs/perf/run/report.md", section)
        self.assertIn("--write docs/performance.md", section)
        self.assertIn("\n### ", section)
        self.assertNotIn("\n## ", section)
        self.assertNotIn("](plots/", section)
        if built["areas"][0]["plots"]:
            self.assertIn("](perf/run/plots/", section)
        # From the repository root (printed), the same links keep the docs/ prefix.
        self.assertIn("](docs/perf/run/report.md)", report.performance_section(built, "docs/perf/run/report.json", "."))
        document = os.path.join(self.out, "performance.md")
        with open(document, "w") as f:
            f.write(f"# title\n\n## Tables\n{report.REPORT_BEGIN}\nold tables\n{report.REPORT_END}\n\n## After\n")
        report.write_section(document, section)
        with open(document) as f:
            text = f.read()
        self.assertNotIn("old tables", text)
        self.assertIn("abc1234", text)
        self.assertTrue(text.startswith("# title\n\n## Tables\n"))
        self.assertTrue(text.endswith(f"{report.REPORT_END}\n\n## After\n"))
        # No markers: refused, the file unchanged.
        with open(document, "w") as f:
            f.write("# no markers\n")
        with self.assertRaises(SystemExit):
            report.write_section(document, section)
        with open(document) as f:
            self.assertEqual(f.read(), "# no markers\n")

    def interleaved_rows(self):
        def shape(name, torch_tf, default_tf, tuned_tf, tunableop_tf=None, fp8=False):
            r = {"bench": "gemm_interleaved", "shape": name, "torch_tflops": torch_tf, "default_tflops": default_tf,
                 "tuned_tflops": tuned_tf, "tuned_ms": 1 / tuned_tf, "default_vs_torch": default_tf / torch_tf,
                 "tuned_vs_torch": tuned_tf / torch_tf,
                 "tuned_vs_best_torch": tuned_tf / max(torch_tf, tunableop_tf or 0)}
            if tunableop_tf:
                r["torch_tunableop_tflops"] = tunableop_tf
            if fp8:
                r["fp8"] = "e4m3 x e4m3, tensor-wise float32 scales, bfloat16 out, no fast accumulation; x"
            return r
        model = {"bench": "model_forward", "model": "llama", "layers": 2, "batch": 4, "seq": 2048, "torch_ms": 12.0,
                 "cudakit_ms": 10.0, "cudakit_vs_torch": 1.2, "torch_spread": 0.02, "cudakit_spread": 0.04,
                 "relative_frobenius_difference": 3e-3, "max_element_difference": 1e-2,
                 "equal_within_tolerance": True, "routed_gemms_per_forward": 14}
        return [shape("a", 700, 700, 770, 690), shape("b", 600, 590, 660), shape("fp8_c", 1200, 1210, 1190, fp8=True),
                {"bench": "gemm_interleaved", "shape": "broken", "error": "x"}, model]

    def test_interleaved_gemms_and_model_forwards_become_rows_tables_and_a_section(self):
        lines = self.interleaved_rows()
        write(self.out, "tunable.jsonl", lines)
        rows = {r["case"]: r for r in self.area(report.build(self.out), "tunable")["rows"]}
        forward = rows["llama forward, 2 layers, 4x2048 tokens: through cudakit's tuner (route_torch) vs torch"]
        self.assertAlmostEqual(forward["vs_peer"], 1.2)  # fewer ms is better
        self.assertAlmostEqual(forward["noise"], 0.02)
        geo = rows["geometric mean over 3 shapes, tuned over torch.matmul (one process)"]
        self.assertAlmostEqual(geo["cudakit"], (1.1 * 1.1 * (1190 / 1200)) ** (1 / 3))
        table = tunable_table.interleaved_table([r for r in lines[:3]])
        self.assertIn("| fp8_c (_scaled_mm)", table)
        self.assertIn("worst default/torch 0.983 (b; target >= 0.99: MISSED)", table)
        self.assertIn("worst tuned/better of torch and torch's TunableOp 0.992 (fp8_c; target >= 0.99: met)", table)
        self.assertIn("float8 against torch._scaled_mm (e4m3 x e4m3, tensor-wise float32 scales, bfloat16 out, no "
                      "fast accumulation): worst tuned 0.992", table)
        document = os.path.join(self.out, "gemm.md")
        with open(document, "w") as f:
            f.write(f"# GEMMs\n{tunable_table.INTERLEAVED_BEGIN}\nold\n{tunable_table.INTERLEAVED_END}\nafter\n")
        source = os.path.join(self.out, "tunable.jsonl")
        argv = sys.argv
        try:
            sys.argv = ["tunable_table.py", source, "--write", document]
            tunable_table.main()
        finally:
            sys.argv = argv
        with open(document) as f:
            text = f.read()
        self.assertNotIn("\nold\n", text)
        self.assertIn("geometric mean tuned/torch.matmul 1.063 (target >= 1.05: met)", text)
        self.assertIn("| llama | 2 | 4x2048 | 12.000 | 10.000 | 1.200 | 14 | 3.0e-03, 1.0e-02 |", text)
        self.assertTrue(text.endswith(f"{tunable_table.INTERLEAVED_END}\nafter\n"))

    def test_rows_behind_their_peer_are_listed_with_their_bound_or_as_not_bounded(self):
        def line(impl, case, value):
            return {"bench": "jiterator", "impl": impl, "case": case, "value": value, "unit": "GB/s"}
        write(self.out, "jiterator.jsonl", [
            line("cudakit", "transposed_add_16384x16384_GBps", 970),
            line("torch_native", "transposed_add_16384x16384_GBps", 1000),
            line("cudakit", "broadcast_add_16384x16384_GBps", 900),
            line("torch_native", "broadcast_add_16384x16384_GBps", 1000),
            line("cudakit", "axpy_2^28_float32_GBps", 981), line("torch_jiterator", "axpy_2^28_float32_GBps", 1000),
        ])
        bounds = [("jiterator", re.compile("transposed_add_.*"), "a strided read"),
                  ("alloc", re.compile("broadcast_add_.*"), "another area's bound")]
        built = report.build(self.out, bounds=bounds)
        behind = [(b["case"], b["bound"]) for b in built["behind"] if b["area"] == "jiterator"]
        self.assertEqual(behind, [("broadcast_add_16384x16384_GBps", None),
                                  ("transposed_add_16384x16384_GBps", "a strided read")])
        rows = {r["case"]: r for r in self.area(built, "jiterator")["rows"]}
        self.assertEqual(rows["transposed_add_16384x16384_GBps"]["bound"], "a strided read")
        self.assertNotIn("bound", rows["axpy_2^28_float32_GBps"], "0.981 is not behind")
        text = report.markdown(built)
        self.assertIn("transposed_add_16384x16384_GBps: 0.970x; bounded: a strided read", text)
        self.assertIn("broadcast_add_16384x16384_GBps: 0.900x; **not bounded**", text)

    def test_the_project_bounds_file_reads_and_every_entry_names_an_area(self):
        names = {name for name, _, _ in report.AREAS}
        for area, pattern, bound in report.load_bounds():
            self.assertIn(area, names)
            self.assertTrue(bound)

    def test_compare_refuses_a_file_of_another_schema(self):
        bad = os.path.join(self.out, "bad.json")
        with open(bad, "w") as f:
            json.dump({"schema": "something else"}, f)
        with self.assertRaises(SystemExit) as e:
            report.compare(bad, bad)
        self.assertIn("schema 'something else'", str(e.exception))

    def test_unreadable_output_is_a_skipped_part_not_a_crash(self):
        write(self.out, "tunable.jsonl", [{"bench": "tunable", "impl": "cudakit", "shape": "s", "tuned_ms": 1.0}])
        built = report.build(self.out)
        skipped = {s["part"]: s["why"] for s in built["skipped"]}
        self.assertIn("could not be read", skipped["tunable"])


if __name__ == "__main__":
    unittest.main()
