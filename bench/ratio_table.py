#!/usr/bin/env python3
"""ratio_table.py FILE.jsonl VALUE REFERENCE [BENCH]: a table of the JSON lines' VALUE by case
(rows) and impl (columns), each impl's ratio to REFERENCE's value in the same case beside it.
Lines that are not JSON (tables, warnings) are skipped."""
import json
import sys


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    path, value, reference = sys.argv[1:4]
    bench = sys.argv[4] if len(sys.argv) > 4 else None
    rows, impls = {}, []
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if not isinstance(r, dict) or value not in r or (bench and r.get('bench') != bench):
                continue
            rows.setdefault(r['case'], {})[r['impl']] = r[value]
            if r['impl'] not in impls:
                impls.append(r['impl'])
    print(f"{'case':40s}" + ''.join(f"{i:>16s}" for i in impls) + f"   (ratio to {reference})")
    for case, by_impl in rows.items():
        ref = by_impl.get(reference)
        cells = []
        for i in impls:
            v = by_impl.get(i)
            if v is None:
                cells.append(f"{'-':>16s}")
            elif ref:
                cells.append(f"{v:>9.2f} ({v / ref:4.2f})")
            else:
                cells.append(f"{v:>16.2f}")
        print(f"{case:40s}" + ''.join(cells))


if __name__ == '__main__':
    main()
