#!/usr/bin/env python3
"""bench/python_bench.py's summary of torch.empty + del over processes: which processes count as
running at the machine's full speed (Note [A process's own speed]) and the figures each kind gets.
The per-process figures are the ones of the 2026-12-02 edff19e run on the lent H200.
    python3 tests/bench/python_bench_test.py"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import python_bench  # noqa: E402


def process(pair, loop, cpu=0.85):
    return {"pair_us": pair, "python_loop_us": loop, "cpu_tensor_us": cpu}


# (kind, pair us, pure-Python loop us) per process, the kinds alternating as the bench runs them.
RECORDED = [("cudakit", 3.14, 0.155), ("torch", 4.65, 0.217), ("pass_through", 2.12, 0.108),
            ("cudakit", 4.19, 0.216), ("torch", 2.79, 0.105), ("pass_through", 1.93, 0.105),
            ("cudakit", 2.00, 0.101), ("torch", 4.64, 0.182), ("pass_through", 3.35, 0.102),
            ("cudakit", 5.20, 0.168), ("torch", 2.18, 0.095), ("pass_through", 1.83, 0.093)]


class FullSpeedTest(unittest.TestCase):
    def test_processes_within_the_factor_of_the_fastest_loop_count(self):
        processes = [process(1, 0.100), process(2, 0.125), process(3, 0.126), process(4, 0.2)]
        self.assertEqual([p["pair_us"] for p in python_bench.full_speed(processes, 1.25)], [1, 2])

    def test_no_processes_give_none(self):
        self.assertEqual(python_bench.full_speed([]), [])


class AllocationsTest(unittest.TestCase):
    def setUp(self):
        self.saved = python_bench.allocation_process
        queue = list(RECORDED)

        def replay(kind):
            recorded_kind, pair, loop = queue.pop(0)
            self.assertEqual(kind, recorded_kind, "the kinds alternate in the recorded order")
            return process(pair, loop)
        python_bench.allocation_process = replay

    def tearDown(self):
        python_bench.allocation_process = self.saved

    def test_each_kind_gets_its_median_its_full_speed_median_and_its_fastest(self):
        with open(os.devnull, "w") as devnull:
            saved, sys.stderr = sys.stderr, devnull
            try:
                figures = python_bench.allocations(["cudakit", "torch", "pass_through"], processes=4)
            finally:
                sys.stderr = saved
        # The fastest loop is 0.093 us: 0.116 and below is full speed.
        self.assertEqual(figures["cudakit"], {"median": 3.665, "full_speed": 2.00, "full_speed_count": 1,
                                              "fastest": 2.00})
        self.assertEqual(figures["torch"]["full_speed_count"], 2)
        self.assertAlmostEqual(figures["torch"]["full_speed"], (2.79 + 2.18) / 2)
        self.assertEqual(figures["pass_through"]["full_speed_count"], 4)
        self.assertAlmostEqual(figures["pass_through"]["full_speed"], (1.93 + 2.12) / 2)
        self.assertAlmostEqual(figures["pass_through"]["median"], (1.93 + 2.12) / 2)


class TurnsTest(unittest.TestCase):
    def test_the_row_is_the_process_of_the_median_ratio_not_each_sides_median(self):
        # Per process (cudakit us, pass-through us), as three turns processes of a 2026-12-05
        # lease printed them: each side's median would pair 3.342 with 2.716 (0.81).
        figures = [{"cudakit_us": 4.511, "pass_through_us": 4.326}, {"cudakit_us": 2.357, "pass_through_us": 2.304},
                   {"cudakit_us": 3.342, "pass_through_us": 2.716}]
        self.assertEqual(python_bench.median_ratio_process(figures), (4.511, 4.326))

    def test_an_even_count_takes_the_lower_middle(self):
        figures = [{"cudakit_us": 1.0, "pass_through_us": r} for r in (1.1, 0.9, 1.0, 0.8)]
        self.assertEqual(python_bench.median_ratio_process(figures), (1.0, 0.9))


class PairedTest(unittest.TestCase):
    def test_each_side_runs_after_its_own_enter_in_alternate_blocks(self):
        calls, entered = [], [None]
        python_bench.paired_us(lambda: calls.append(("ours", entered[0])), lambda: calls.append(("peer", entered[0])),
                               n=3, rounds=2, enter=(lambda: entered.__setitem__(0, "ours"),
                                                     lambda: entered.__setitem__(0, "peer")))
        self.assertTrue(all(side == state for side, state in calls), calls)
        # A warm-up call each, then blocks of three in turn.
        self.assertEqual([side for side, _ in calls], ["ours", "peer"] + (["ours"] * 3 + ["peer"] * 3) * 2)


class WorkloadPairTest(unittest.TestCase):
    def run_pairs(self, loops):
        """workload_pair over processes whose pure-Python loops are `loops` (cudakit's, torch's
        per pair); each process's "ms" is its loop, so the chosen pair shows which it was."""
        queue = [(which, loop) for pair in loops for which, loop in zip(("cudakit", "torch"), pair)]
        asked = []

        def replay(kind, which):
            recorded, loop = queue.pop(0)
            self.assertEqual(which, recorded)
            asked.append(which)
            return {"checksum": 1.0, "ms": loop, "peak_reserved": 0, "python_loop_us": loop}
        saved, python_bench.workload = python_bench.workload, replay
        saved_err, sys.stderr = sys.stderr, open(os.devnull, "w")
        try:
            return python_bench.workload_pair("serve"), len(asked)
        finally:
            sys.stderr.close()
            python_bench.workload, sys.stderr = saved, saved_err

    def test_a_pair_at_the_same_speed_is_taken_at_once(self):
        (mine, theirs), asked = self.run_pairs([(0.10, 0.11)])
        self.assertEqual((mine["ms"], theirs["ms"], asked), (0.10, 0.11, 2))

    def test_a_pair_at_different_speeds_is_run_again(self):
        (mine, theirs), asked = self.run_pairs([(0.20, 0.10), (0.10, 0.105)])
        self.assertEqual((mine["ms"], theirs["ms"], asked), (0.10, 0.105, 4))

    def test_the_closest_pair_when_none_matches(self):
        (mine, theirs), asked = self.run_pairs([(0.20, 0.10), (0.10, 0.14), (0.21, 0.10)])
        self.assertEqual((mine["ms"], theirs["ms"], asked), (0.10, 0.14, 6))


if __name__ == "__main__":
    unittest.main()
