#!/usr/bin/env python3
"""How low can placement alone take peak reserved on the recorded traces? A development tool
(notes/allocator.md, "2026-11-30, 5f614e5"), not part of the build; plain Python, ~2 minutes.

Every block keeps one address range for its life (no moving, no page recycling); the figure is
the address high-water rounded up to a 2 MiB page over peak live bytes, as the allocator reports
peak reserved / peak allocated. Two families:
  offline : the whole future known, blocks placed in a chosen order at the lowest (or tightest)
            gap free over their lifetime (greedy by size with tie orders; greedy by breadth).
  online  : ops in order, each allocation placed at once, but with its own and every live
            block's free time known (an oracle no allocator has): best fit, and scores that put
            a block beside neighbours that die when it does.
Each placement is checked independently (no two blocks live at once overlap).

Usage: python3 tools/dev/alloc_placement_bounds.py [serve_kv] [gpt_train]
"""
import bisect, gzip, os, sys, time

MiB = 1 << 20
W = 512            # time-bucket width of the offline planner's interval lookup
INF = float('inf')
TRACES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'data',
                      'alloc-traces', 'trace_{}.csv.gz')

def load(name):
    """Return list of blocks (id, size_rounded, start, end) and n_ops. end = free op index or n_ops."""
    path = TRACES.format(name)
    blocks = {}
    order = []
    with gzip.open(path, 'rt') as f:
        next(f)
        i = -1
        for i, line in enumerate(f):
            op, bid, size, stream = line.rstrip('\n').split(',')
            if op == 'a':
                s = (int(size) + 511) // 512 * 512
                assert bid not in blocks or blocks[bid][3] is not None
                key = (bid, len(order))
                blocks[bid] = [key, s, i, None]
                order.append(blocks[bid])
            else:
                assert op == 'f', op
                b = blocks[bid]
                assert b[3] is None
                b[3] = i
        n = i + 1
    res = []
    for k, b in enumerate(order):
        res.append((k, b[1], b[2], b[3] if b[3] is not None else n))
    return res, n

def peak_live(blocks, n):
    ev = []
    for k, s, a, e in blocks:
        ev.append((a, 1, s)); ev.append((e, 0, -s))
    ev.sort()
    cur = pk = 0
    for t, kind, d in ev:
        cur += d
        pk = max(pk, cur)
    return pk


"""Independent checker: sweep time, keep live blocks in address order, verify no address overlap
among simultaneously-live blocks. Returns high-water (max addr+size)."""
def check(blocks, off):
    # blocks: list of (k,size,start,end), off: dict/list k -> offset
    ev = []
    for k, s, a, e in blocks:
        assert off[k] is not None and off[k] >= 0 and off[k] % 512 == 0, (k, off[k])
        ev.append((e, 0, k)); ev.append((a, 1, k))
    ev.sort()
    sz = {k: s for k, s, a, e in blocks}
    starts = []  # sorted list of (offset, k) of live blocks
    hw = 0
    for t, kind, k in ev:
        o = off[k]
        if kind == 0:
            i = bisect.bisect_left(starts, (o, k)); assert starts[i] == (o, k); del starts[i]
        else:
            i = bisect.bisect_left(starts, (o, k))
            if i > 0:
                po, pk = starts[i-1]
                if po + sz[pk] > o: return False, ('overlap', pk, k, t)
            if i < len(starts):
                no, nk = starts[i]
                if o + sz[k] > no: return False, ('overlap', k, nk, t)
            starts.insert(i, (o, k))
            hw = max(hw, o + sz[k])
    return True, hw


def place(blocks, order, n, fit='first'):
    nb = n // W + 2
    buckets = [[] for _ in range(nb)]
    off = [None] * len(blocks)
    for k in order:
        _, s, a, e = blocks[k]
        seen = set(); ivs = []
        for bi in range(a // W, (e - 1) // W + 1):
            for j in buckets[bi]:
                if j in seen: continue
                seen.add(j)
                _, sj, aj, ej = blocks[j]
                if aj < e and a < ej:
                    ivs.append((off[j], off[j] + sj))
        ivs.sort()
        cur = 0; best = None; bestgap = None
        for lo, hi in ivs:
            if lo - cur >= s:
                if fit == 'first':
                    best = cur; break
                g = lo - cur
                if bestgap is None or g < bestgap: bestgap, best = g, cur
            cur = max(cur, hi)
        if best is None: best = cur
        off[k] = best
        for bi in range(a // W, (e - 1) // W + 1):
            buckets[bi].append(k)
    return off

def breadth_order(blocks, n):
    # Greedy by breadth (Pisarchyk&Lee): times by live-bytes desc, place their live tensors by size desc
    live_at = [0] * (n + 1)
    diff = [0] * (n + 2)
    for k, s, a, e in blocks:
        diff[a] += s; diff[e] -= s
    c = 0
    for t in range(n): c += diff[t]; live_at[t] = c
    # live sets per time: sweep
    starts = {}; ends = {}
    for k, s, a, e in blocks:
        starts.setdefault(a, []).append(k); ends.setdefault(e, []).append(k)
    live = set(); sets = []
    for t in range(n):
        for k in ends.get(t, ()): live.discard(k)
        for k in starts.get(t, ()): live.add(k)
        sets.append(tuple(live))
    done = [False] * len(blocks); order = []
    for t in sorted(range(n), key=lambda t: -live_at[t]):
        for k in sorted(sets[t], key=lambda k: (-blocks[k][1], -(blocks[k][3]-blocks[k][2]))):
            if not done[k]: done[k] = True; order.append(k)
    return order

ORDERS = {
 'size_desc/longer_life':  lambda b: (-b[1], -(b[3]-b[2]), b[2]),
 'size_desc/earlier_start': lambda b: (-b[1], b[2]),
 'size_desc/shorter_life': lambda b: (-b[1], (b[3]-b[2]), b[2]),
 'size_desc/later_start': lambda b: (-b[1], -b[2]),
 'life*size_desc':         lambda b: (-b[1]*(b[3]-b[2]), -b[1]),
 'life_desc':              lambda b: (-(b[3]-b[2]), -b[1]),
}

# Online with oracle free times: at each allocation the candidates are every hole that fits
# (against its lower or its upper neighbour) and the top; the policy's tuple picks one.
def run(blocks, n, policy):
    by_start = {a: k for k, s, a, e in blocks}
    by_end = {}
    for k, s, a, e in blocks: by_end.setdefault(e, []).append(k)
    off = [None] * len(blocks)
    live = []  # sorted (offset, k)
    hw = 0
    for t in range(n):
        for k in by_end.get(t, ()):
            i = bisect.bisect_left(live, (off[k], k)); del live[i]
        if t not in by_start: continue
        k = by_start[t]; _, s, a, e = blocks[k]
        cands = []  # (new_end_exceeds_hw, score..., offset)
        prev_end = 0; prev_k = None  # None = address-0 wall
        for j in range(len(live) + 1):
            if j < len(live):
                lo, nk = live[j]; hole = lo - prev_end
            else:
                lo, nk = INF, None; hole = INF
            if hole >= s:
                # bottom-aligned
                o = prev_end
                nb_free = blocks[prev_k][3] if prev_k is not None else INF
                cands.append(policy(s, e, o, hole, nb_free, 'bot', j == len(live), hw, t))
                if nk is not None and hole > s:
                    o = lo - s
                    cands.append(policy(s, e, o, hole, blocks[nk][3], 'top', False, hw, t))
            if j < len(live):
                prev_end = max(prev_end, lo + blocks[nk][1]); prev_k = nk
        best = min(cands)
        o = best[-1]
        off[k] = o; bisect.insort(live, (o, k)); hw = max(hw, o + s)
    return off

# policies return a tuple; last element is the offset.
def p_bestfit(s, e, o, hole, nbf, side, is_top, hw, t):
    return (o + s > hw, hole - s if not is_top else INF, o)

def p_freetime(s, e, o, hole, nbf, side, is_top, hw, t):
    # prefer neighbour whose free time is closest to ours; best fit tie-break
    d = abs(nbf - e) if nbf != INF else INF
    return (o + s > hw, d, hole - s if not is_top else INF, o)

def p_freetime_exact(s, e, o, hole, nbf, side, is_top, hw, t):
    # exact fits first, then free-time closeness, then best fit
    d = abs(nbf - e) if nbf != INF else INF
    return (o + s > hw, hole != s, d, hole - s if not is_top else INF, o)

def p_fit_then_freetime(s, e, o, hole, nbf, side, is_top, hw, t):
    d = abs(nbf - e) if nbf != INF else INF
    return (o + s > hw, hole - s if not is_top else INF, d, o)

def p_freetime_rel(s, e, o, hole, nbf, side, is_top, hw, t):
    # relative free-time distance (log-ish), bucketed, then best fit
    import math
    d = abs(nbf - e) if nbf != INF else INF
    r = d / max(1, e - t)
    return (o + s > hw, round(math.log2(1 + r), 0) if r != INF else INF, hole - s if not is_top else INF, o)

def p_nbdies_after(s, e, o, hole, nbf, side, is_top, hw, t):
    # prefer neighbour that outlives us (nbf >= e) with smallest margin; else closest; best-fit tiebreak
    if nbf == INF: key = (1, INF)
    elif nbf >= e: key = (0, nbf - e)
    else: key = (1, e - nbf)
    return (o + s > hw,) + key + (hole - s if not is_top else INF, o)

POLICIES = {'bestfit(baseline)': p_bestfit, 'freetime>fit': p_freetime, 'exact>freetime>fit': p_freetime_exact,
            'fit>freetime': p_fit_then_freetime, 'reltime-bucket>fit': p_freetime_rel, 'nb-outlives>fit': p_nbdies_after}

def report(label, blocks, off, peak):
    ok, hw = check(blocks, off)
    if not ok:
        print(f'{label:40s} INVALID PLACEMENT: {hw}', flush=True)
        return
    rounded = -(-hw // (2 * MiB)) * 2 * MiB
    print(f'{label:40s} high-water {hw / MiB:9.2f} MiB  ratio {rounded / peak:.4f}', flush=True)


OFFLINE = {k: ORDERS[k] for k in ('size_desc/longer_life', 'size_desc/later_start')}
def p_firstfit(s, e, o, hole, nbf, side, is_top, hw, t):
    # address-ordered first fit: the lowest hole that fits, at its low end (no oracle used)
    return (side != 'bot', o)


ONLINE = {'best fit': p_bestfit, 'first fit': p_firstfit,
          'oracle: exact > free time > fit': p_freetime_exact,
          'oracle: free time > fit': p_freetime, 'oracle: fit > free time': p_fit_then_freetime}

if __name__ == '__main__':
    for name in sys.argv[1:] or ['serve_kv', 'gpt_train']:
        blocks, n = load(name)
        peak = peak_live(blocks, n)
        print(f'== {name}: {len(blocks)} blocks, peak live {peak / MiB:.2f} MiB', flush=True)
        for label, key in OFFLINE.items():
            order = sorted(range(len(blocks)), key=lambda k: key(blocks[k]))
            report('offline ' + label, blocks, place(blocks, order, n), peak)
        report('offline greedy by breadth', blocks, place(blocks, breadth_order(blocks, n), n), peak)
        for label, policy in ONLINE.items():
            report('online ' + label, blocks, run(blocks, n, policy), peak)
