#!/usr/bin/env python3
"""bench/core_ab_table.py: scripts/device-ab.sh's core part read back, each cudakit row set beside
its raw CUDA call of the same process, and the verdicts it gives. The recorded lines are of the
2026-12-06 run on a lent H200 (6716d75 against 14dd232, then c40a480 against beea0b7).
    python3 tests/bench/core_ab_table_test.py"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import core_ab_table  # noqa: E402


def process(bundle, rows):
    lines = [f"-- /work/main/{bundle}"]
    lines += [f"{name:<50}{ns} ns {ns} ns 1000" for name, ns in rows.items()]
    return lines


def run(old_processes, new_processes):
    lines = ["== core (old, new, old, new)"]
    for old, new in zip(old_processes, new_processes):
        lines += process("gpu-bundle-old", old) + process("gpu-bundle-new", new)
    return lines


def processes(benchmark, *times):
    """One process a (cudakit ns, raw ns) pair of `benchmark`'s two rows."""
    return [{f"{benchmark}_cudakit": ours, f"{benchmark}_raw": raw} for ours, raw in times]


def verdict(rows, name):
    return next(r["verdict"] for r in rows if r["benchmark"] == name)


class ParseTest(unittest.TestCase):
    def test_processes_in_order_with_their_rows(self):
        lines = ["== core (old, new, old, new)", "-- /work/main/gpu-bundle-6716d75",
                 "BM_StreamCreateDestroy_cudakit                    7225 ns         7213 ns        40297",
                 "BM_StreamCreateDestroy_raw                        6501 ns         6474 ns        38886",
                 "-- /work/main/gpu-bundle-14dd232/",
                 "BM_StreamCreateDestroy_cudakit                    5885 ns         5885 ns        53145",
                 "a line that is not a benchmark's"]
        self.assertEqual(core_ab_table.parse(lines),
                         [("gpu-bundle-6716d75", {"StreamCreateDestroy": {"cudakit": 7225.0, "raw": 6501.0}}),
                          ("gpu-bundle-14dd232", {"StreamCreateDestroy": {"cudakit": 5885.0}})])

    def test_each_cudakit_row_has_its_raw_call(self):
        lines = process("gpu-bundle-old", {"BM_EmptyKernelLaunch_cudakit_current_stream": 4800,
                                           "BM_EmptyKernelLaunch_raw": 5247, "BM_LaunchKernel_listened": 5135,
                                           "BM_LaunchKernel_raw": 5168})
        self.assertEqual(core_ab_table.parse(lines)[0][1],
                         {"EmptyKernelLaunch": {"cudakit_current_stream": 4800.0, "raw": 5247.0},
                          "LaunchKernel": {"listened": 5135.0, "raw": 5168.0}})


class CompareTest(unittest.TestCase):
    def test_overheads_are_taken_in_the_same_process(self):
        # The raw call moves with the process (the run's noise); cudakit's overhead over it does not.
        old = processes("BM_A", (1100, 1000), (2200, 2000))
        new = processes("BM_A", (2200, 2000), (1100, 1000))
        old_name, new_name, rows = core_ab_table.compare(core_ab_table.parse(run(old, new)))
        self.assertEqual((old_name, new_name), ("gpu-bundle-old", "gpu-bundle-new"))
        self.assertEqual([round(v, 3) for v in rows[0]["old_over_raw"]], [1.1, 1.1])
        self.assertEqual(verdict(rows, "BM_A_cudakit"), "within noise")

    def test_recorded_house_run_is_within_noise(self):
        old = processes("BM_LaunchKernel", (5178, 5168), (4632, 5346))
        new = processes("BM_LaunchKernel", (5273, 5226), (5217, 5067))
        _, _, rows = core_ab_table.compare(core_ab_table.parse(run(old, new)))
        # The ranges miss each other (0.866-1.002 against 1.009-1.030), by less than old's own spread.
        self.assertEqual(verdict(rows, "BM_LaunchKernel_cudakit"), "within noise")

    def test_ranges_further_apart_than_their_spread_are_a_change(self):
        old = processes("BM_StreamCreateDestroy", (7204, 6278), (7340, 6347))
        new = processes("BM_StreamCreateDestroy", (6749, 6602), (6603, 6461))
        _, _, rows = core_ab_table.compare(core_ab_table.parse(run(old, new)))
        self.assertEqual(verdict(rows, "BM_StreamCreateDestroy_cudakit"), "new faster by 10.9% at least")
        _, _, rows = core_ab_table.compare(core_ab_table.parse(run(new, old)))
        self.assertTrue(verdict(rows, "BM_StreamCreateDestroy_cudakit").startswith("new slower by 12."))

    def test_a_row_missing_from_every_process_of_one_side_is_left_out(self):
        # A run cut short by its time limit: the last process lacks the later rows.
        old = [{"BM_A_cudakit": 10, "BM_A_raw": 10, "BM_B_cudakit": 10, "BM_B_raw": 10}]
        new = [{"BM_A_cudakit": 10, "BM_A_raw": 10}]
        _, _, rows = core_ab_table.compare(core_ab_table.parse(run(old, new)))
        self.assertEqual([r["benchmark"] for r in rows], ["BM_A_cudakit"])

    def test_one_bundle_is_refused(self):
        with self.assertRaisesRegex(SystemExit, "two bundles, found 1"):
            core_ab_table.compare(core_ab_table.parse(process("gpu-bundle-old", {"BM_A_raw": 1})))

    def test_table_names_both_bundles_and_every_row(self):
        old, new = processes("BM_A", (1100, 1000)), processes("BM_A", (1000, 1000))
        text = core_ab_table.table(*core_ab_table.compare(core_ab_table.parse(run(old, new))))
        self.assertIn("old gpu-bundle-old, new gpu-bundle-new", text)
        self.assertIn("| BM_A_cudakit | 1,100-1,100 | 1,000-1,000 | 0.909 | 1.100-1.100 | 1.000-1.000 | "
                      "new faster by 9.1% at least |", text)


if __name__ == "__main__":
    unittest.main()
