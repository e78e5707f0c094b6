#!/usr/bin/env python3
"""The turns_ functions of bench/torch/pass_through_cache.cpp (Note [The pluggable path's floor in
turns] in bench/python_bench.py), on the host: side 1 bound to Python functions that hand out
fake pointers, so that no CUDA call is made. The switch is refused while the side serving has live
allocations, and every free reaches the side that made its block.
    python3 tests/bench/turns_allocator_test.py LIBRARY   (CTest gives the built one)
    CUDAKIT_PASS_THROUGH_CACHE=LIBRARY python3 -m pytest tests/bench"""
import ctypes
import os
import sys
import unittest

LIBRARY = os.environ.get("CUDAKIT_PASS_THROUGH_CACHE")
ALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p)
FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p)


@unittest.skipIf(LIBRARY is None and __name__ != "__main__",
                 "no library named: CTest runs this with build/bin/libpass_through_cache.so")
class TurnsTest(unittest.TestCase):
    def setUp(self):
        self.lib = ctypes.CDLL(LIBRARY)
        self.lib.turns_alloc.restype = ctypes.c_void_p
        self.lib.turns_alloc.argtypes = [ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
        self.lib.turns_free.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
        self.lib.turns_bind.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.made, self.freed = [], []

        def alloc(size, device, stream):
            self.made.append(size)
            return 0x1000 * len(self.made)

        def free(ptr, size, device, stream):
            self.freed.append(ptr)
        self.alloc, self.free = ALLOC(alloc), FREE(free)  # kept alive while bound
        self.lib.turns_bind(ctypes.cast(self.alloc, ctypes.c_void_p), ctypes.cast(self.free, ctypes.c_void_p))

    def tearDown(self):
        self.assertEqual(self.lib.turns_use(0), 0, "side 0 serves again once side 1 has nothing live")

    def test_the_bound_side_serves_and_frees_its_blocks(self):
        self.assertEqual(self.lib.turns_use(1), 0)
        ptr = self.lib.turns_alloc(1 << 20, 0, None)
        self.assertEqual((ptr, self.made), (0x1000, [1 << 20]))
        self.lib.turns_free(ptr, 1 << 20, 0, None)
        self.assertEqual(self.freed, [0x1000])

    def test_a_switch_is_refused_while_the_serving_side_has_live_blocks(self):
        self.assertEqual(self.lib.turns_use(1), 0)
        first, second = self.lib.turns_alloc(512, 0, None), self.lib.turns_alloc(512, 0, None)
        self.assertEqual(self.lib.turns_use(0), -1)
        self.lib.turns_free(first, 512, 0, None)
        self.assertEqual(self.lib.turns_use(0), -1, "one block is still live")
        self.lib.turns_free(second, 512, 0, None)
        self.assertEqual(self.freed, [first, second], "frees reach the side that made the blocks")

    def test_an_unknown_side_is_refused(self):
        self.assertEqual(self.lib.turns_use(2), -1)
        self.assertEqual(self.lib.turns_use(-1), -1)


if __name__ == "__main__":
    LIBRARY = sys.argv.pop(1)
    unittest.main()
