#!/usr/bin/env python3
"""seed_workflow_time.py CUDAKIT_BINARY [REPS]: the wall time of the seed workflow
(`cudakit demo`) with the stream sanitizer off and on (CUDAKIT_SANITIZER=log), each the median of
REPS processes (default 5), as JSON lines {"bench":"sanitizer","case","impl","ms_per_run"}."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(binary, env, out_dir):
    start = time.perf_counter()
    subprocess.run([binary, 'demo', '-o', out_dir], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1e3


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    binary = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    for impl, value in (('off', None), ('cudakit, stacks', 'log')):
        env = dict(os.environ)
        env.pop('CUDAKIT_SANITIZER', None)
        if value:
            env['CUDAKIT_SANITIZER'] = value
        with tempfile.TemporaryDirectory() as out_dir:
            times = [run(binary, env, out_dir) for _ in range(reps)]
        print(json.dumps({'bench': 'sanitizer', 'case': 'seed workflow (cudakit demo)', 'impl': impl,
                          'ms_per_run': round(statistics.median(times), 1)}))


if __name__ == '__main__':
    main()
