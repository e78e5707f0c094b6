#!/usr/bin/env python3
"""Simulator of cudakit's expandable-arena caching allocator on a recorded trace: today's
policy (baseline) and page-recycling variants studied for trace_serve_kv's fragmentation
(notes/allocator.md, "2026-11-30, cefe5ac: a lead for serve_kv"). A development tool, not part of the build.

Models
  baseline : best fit (smallest hole, tie lowest addr) + top extension, pages never unmapped.
  sparse   : unlimited VA, each 2 MiB page mapped or not, reserved = mapped pages * 2 MiB,
             page cap = floor(ratio * peak_requested_so_far / 2 MiB) enforced by unmapping
             fully-free pages before mapping new ones.

Usage: python3 sim.py            (runs the whole variant table)
       python3 sim.py --trace PATH
"""
import bisect, csv, gzip, os, sys, time, argparse

P = 2 << 20          # page size
ROUND = 512
INF = 1 << 62
TRACE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'data',
                     'alloc-traces', 'trace_serve_kv.csv.gz')


def load(path):
    ops = []
    with gzip.open(path, 'rt') as f:
        r = csv.reader(f)
        next(r)
        for op, id_, sz, st in r:
            ops.append((op == 'a', int(id_), int(sz)))
    return ops


class Holes:
    """Free VA below the frontier F; [F, inf) is free fresh VA."""
    def __init__(self, base=0):
        self.starts = []      # sorted hole starts
        self.end = {}         # start -> end
        self.bysize = []      # sorted (size, start)
        self.F = base

    def _add(self, s, e):
        bisect.insort(self.starts, s)
        self.end[s] = e
        bisect.insort(self.bysize, (e - s, s))

    def _rm(self, s):
        e = self.end.pop(s)
        i = bisect.bisect_left(self.starts, s)
        del self.starts[i]
        i = bisect.bisect_left(self.bysize, (e - s, s))
        del self.bysize[i]
        return e

    def fitting(self, req):
        """iterate (size,start) of holes with size >= req, smallest first"""
        i = bisect.bisect_left(self.bysize, (req, -1))
        return self.bysize[i:]

    def take(self, hs, a, req):
        """allocate [a, a+req) inside hole starting at hs (hs may be 'F' for tail)"""
        if hs is None:  # tail
            if a > self.F:
                self._add(self.F, a)
            self.F = a + req
            return
        e = self._rm(hs)
        if a > hs:
            self._add(hs, a)
        if a + req < e:
            self._add(a + req, e)

    def free(self, a, req):
        s, e = a, a + req
        i = bisect.bisect_left(self.starts, s)
        if i > 0:
            ps = self.starts[i - 1]
            if self.end[ps] == s:
                self._rm(ps)
                s = ps
        if e in self.end:
            e = self._rm(e)
        if e == self.F:
            self.F = s
        else:
            self._add(s, e)


def rnd(sz):
    return max(ROUND, (sz + ROUND - 1) // ROUND * ROUND)


def baseline(ops):
    H = Holes()
    live = {}
    req_live = 0; peak_req = 0; top_pages = 0; growth = 0
    for op, id_, sz in ops:
        if op:
            r = rnd(sz)
            f = H.fitting(r)
            if f:
                hsz, hs = f[0]
                a = hs
                H.take(hs, a, r)
            else:
                a = H.F
                H.take(None, a, r)
            live[id_] = (a, r, sz)
            req_live += sz
            peak_req = max(peak_req, req_live)
            np_ = -(-(a + r) // P)
            if np_ > top_pages:
                growth += 1
                top_pages = np_
        else:
            a, r, sz = live.pop(id_)
            req_live -= sz
            H.free(a, r)
    return dict(peak_res=top_pages * P, peak_req=peak_req, maps=top_pages, growth_calls=growth)


def nextfit(H, mapped, r, rover):
    """first position at/after rover (wrapping once) where [a,a+r) is free and fully mapped.
    returns (hole_start or None for tail, a) or None"""
    st = H.starts
    n = len(st)
    i = bisect.bisect_right(st, rover) - 1
    order = []
    if i >= 0 and H.end[st[i]] > rover:
        order.append((st[i], max(st[i], rover)))
    j = i + 1
    seq = list(range(j, n)) + ['T'] + list(range(0, j))
    for k in seq:
        if k == 'T':
            order.append((None, max(H.F, rover)))
        else:
            order.append((st[k], st[k]))
    for hs, a in order:
        e = INF if hs is None else H.end[hs]
        # within the hole, slide a upward over unmapped pages
        while a + r <= e:
            p0 = a // P; p1 = (a + r - 1) // P
            bad = -1
            for p in range(p1, p0 - 1, -1):
                if not mapped[p]:
                    bad = p; break
            if bad < 0:
                return (hs, a)
            a = (bad + 1) * P
            if hs is None and a > H.F + (1 << 34):
                break
            if hs is None and not any(mapped[q] for q in range(a // P, min(len(mapped), a // P + 64))):
                break
    return None


def _check(live, mapped, cnt, nmapped, HS, HL, freemapped):
    """invariants: blocks disjoint, not inside holes, all their pages mapped; counters consistent"""
    iv = sorted((a, a + r) for a, r, _ in live.values())
    for (a1, e1), (a2, e2) in zip(iv, iv[1:]):
        assert e1 <= a2, ('overlap', a1, e1, a2)
    for H in (HS, HL):
        hv = sorted((s, H.end[s]) for s in H.starts)
        for s, e in hv:
            i = bisect.bisect_left(iv, (s, -1))
            if i < len(iv): assert iv[i][0] >= e, ('hole overlaps block', s, e, iv[i])
            if i > 0: assert iv[i - 1][1] <= s, ('hole overlaps block', s, e, iv[i - 1])
        i = bisect.bisect_left(iv, (H.F, -1))
        if H is HS:
            assert all(x[1] <= H.F for x in iv if x[0] < (1 << 39)), 'block above small frontier'
    c = {}
    for a, e in iv:
        for p in range(a // P, (e - 1) // P + 1):
            assert mapped[p], ('unmapped page under block', p)
            c[p] = c.get(p, 0) + 1
    assert sum(mapped) == nmapped
    for p in range(len(mapped)):
        if cnt[p] != c.get(p, 0):
            raise AssertionError(('cnt', p))
    assert freemapped == {p for p in range(len(mapped)) if mapped[p] and cnt[p] == 0}


def sparse(ops, ratio=1.10, place='bestfit', victim='lru', tail_align=False,
           kv_special=False, spare=0, lead=0, fixed_cap=None, both_ends=False,
           nf_class='growth', nf_min=1 << 20, seg=None,
           align_min=0, span_first=False, check=0):
    """place: 'bestfit' | 'mapaware' (fewest unmapped pages, tie best fit; tail = fresh VA
              is also a candidate)
       victim: 'lru' (page free longest) | 'mru' | 'high' | 'low'
       tail_align: place tail (fresh VA) allocations >= 1 page at a page boundary
       both_ends: in mapaware, also consider placing at the high end of a hole
       spare: hysteresis -- when unmapping is needed, unmap `spare` extra pages so the
              next few maps need no unmapping (does not reduce op count by itself, kept for study)
       fixed_cap: use this cap in pages instead of ratio * peak-so-far
    """
    HS = Holes(0)
    HL = Holes(1 << 39)
    live = {}
    mapped = bytearray(1 << 20)
    cnt = [0] * (1 << 20)
    freetime = [0] * (1 << 20)
    freemapped = set()
    nmapped = 0
    maps = unmaps = 0
    req_live = 0; peak_req = 0; peak_res = 0
    over = 0
    ev = []           # (op_index, kind) for page ops
    sizes_live = {}   # rounded size -> count of live blocks (for kv_special)
    t = 0
    rover = 0
    for t, (op, id_, sz) in enumerate(ops):
        if op:
            r = rnd(sz)
            req_live += sz
            if req_live > peak_req:
                peak_req = req_live
            if fixed_cap is not None:
                cap = fixed_cap
            else:
                cap = int(ratio * peak_req) // P
            # ---- placement ----
            H = HL if (seg is not None and r >= seg) else HS
            if place == 'bestfit':
                f = H.fitting(r)
                if f:
                    hs = f[0][1]; a = hs
                else:
                    hs = None; a = H.F
                    if tail_align and r >= P and a % P:
                        a = (a + P - 1) // P * P
            else:
                best = None
                if place == 'nextfit' and (nf_class == 'all' or (nf_class == 'large' and r >= nf_min)
                                           or (nf_class == 'growth' and sizes_live.get(sz - 2048, 0) > 0)):
                    got = nextfit(H, mapped, r, rover)
                    if got is not None:
                        best = ((0,), got[0], got[1])
                cands = H.fitting(r) if best is None else []
                for hsz, hs0 in cands:
                    e0 = hs0 + hsz
                    poss = [hs0]
                    if align_min and r >= align_min and hs0 % P:
                        pa = (hs0 + P - 1) // P * P
                        if pa + r <= e0:
                            poss.append(pa)
                    if both_ends:
                        poss.append(e0 - r)
                        # page-aligned position inside hole
                        pa = (hs0 + P - 1) // P * P
                        if pa + r <= e0:
                            poss.append(pa)
                    for a0 in poss:
                        p0 = a0 // P; p1 = (a0 + r - 1) // P
                        need = 0
                        for p in range(p0, p1 + 1):
                            if not mapped[p]:
                                need += 1
                        key = (need, p1 - p0, hsz, a0) if span_first else (need, hsz, p1 - p0, a0)
                        if best is None or key < best[0]:
                            best = (key, hs0, a0)
                    if best[0][0] == 0 and not span_first and best[0][1] < hsz:
                        break  # sizes ascending: can't beat need 0 with a smaller hole
                # tail / fresh VA candidate
                a0 = H.F
                if (tail_align and r >= P or align_min and r >= align_min) and a0 % P:
                    a0 = (a0 + P - 1) // P * P
                p0 = a0 // P; p1 = (a0 + r - 1) // P
                need = sum(1 for p in range(p0, p1 + 1) if not mapped[p])
                key = (need, INF, p1 - p0, a0)
                if best is None or key < best[0]:
                    best = (key, None, a0)
                hs, a = best[1], best[2]
                rover = a + r
            H.take(hs, a, r)
            p0 = a // P; p1 = (a + r - 1) // P
            need = [p for p in range(p0, p1 + 1) if not mapped[p]]
            # ---- enforce cap ----
            excess = nmapped + len(need) - cap
            if excess > 0:
                cand = [p for p in freemapped if not (p0 <= p <= p1)]
                k = min(len(cand), excess + (spare if excess > 0 else 0))
                if victim == 'lru':
                    cand.sort(key=lambda p: (freetime[p], p))
                elif victim == 'mru':
                    cand.sort(key=lambda p: (-freetime[p], p))
                elif victim == 'high':
                    cand.sort(key=lambda p: -p)
                elif victim == 'far':
                    rp = rover // P
                    cand.sort(key=lambda p: -abs(p - rp))
                elif victim == 'behind':
                    # cyclic distance ahead of rover inside the mapped span; unmap pages the
                    # ring reaches last (just behind the rover) first
                    rp = rover // P
                    cand.sort(key=lambda p: (p - rp) % (1 << 20), reverse=True)
                elif victim == 'ahead':
                    rp = rover // P
                    cand.sort(key=lambda p: (p - rp) % (1 << 20))
                else:
                    cand.sort()
                for p in cand[:k]:
                    mapped[p] = 0; freemapped.discard(p); nmapped -= 1; unmaps += 1
                    ev.append((t, 'u'))
            for p in need:
                mapped[p] = 1; nmapped += 1; maps += 1
                ev.append((t, 'm'))
            if nmapped > cap:
                over = max(over, nmapped - cap)
            for p in range(p0, p1 + 1):
                if cnt[p] == 0:
                    freemapped.discard(p)
                cnt[p] += 1
            if nmapped > peak_res:
                peak_res = nmapped
            live[id_] = (a, r, sz)
            if check and (t % check == 0 or t < 5000):
                _check(live, mapped, cnt, nmapped, HS, HL, freemapped)
            sizes_live[sz] = sizes_live.get(sz, 0) + 1
        else:
            a, r, sz = live.pop(id_)
            sizes_live[sz] -= 1
            req_live -= sz
            (HL if a >= (1 << 39) else HS).free(a, r)
            p0 = a // P; p1 = (a + r - 1) // P
            for p in range(p0, p1 + 1):
                cnt[p] -= 1
                if cnt[p] == 0 and mapped[p]:
                    freemapped.add(p); freetime[p] = t
    return dict(peak_res=peak_res * P, peak_req=peak_req, maps=maps, unmaps=unmaps,
                over=over, ev=ev)


def fmt(name, d, split=4000):
    pr = d['peak_res'] / 2**20
    ratio = d['peak_res'] / d['peak_req']
    ev = d.get('ev')
    if ev is not None:
        before = sum(1 for t, k in ev if t < split)
        ops = d['maps'] + d['unmaps']
        return (f"| {name} | {pr:.0f} | {ratio:.4f} | {d['maps']} | {d['unmaps']} | {ops} | "
                f"{before} / {ops - before} | {d.get('over', 0)} |")
    return f"| {name} | {pr:.0f} | {ratio:.4f} | {d['maps']} | 0 | {d['maps']} | - | - |"


BEST = dict(place='nextfit', nf_class='growth', align_min=2 << 20, span_first=True)
VARIANTS = [
    ('a  bestfit, unmap LRU-free pages', dict(place='bestfit', victim='lru')),
    ('a  bestfit, unmap highest pages', dict(place='bestfit', victim='high')),
    ('b  mapaware (fewest unmapped pages, tie best fit, fresh VA allowed)', dict(place='mapaware', victim='lru')),
    ('b  mapaware + page-align blocks>=2MiB, key=(need,span,size)', dict(place='mapaware', victim='lru', align_min=2 << 20, span_first=True)),
    ('c  next-fit ring for growth blocks (s+2KiB of a live s), else mapaware', dict(place='nextfit', victim='lru')),
    ('c  ring + page-align blocks>=2MiB (key need,size,span)', dict(place='nextfit', victim='lru', align_min=2 << 20)),
    ('c  ring + page-align>=2MiB + span-first, unmap LRU', dict(BEST, victim='lru')),
    ('c  ring + page-align>=2MiB + span-first, unmap highest  [BEST]', dict(BEST, victim='high')),
    ('c  BEST with cap ratio 1.09 (cliff)', dict(BEST, victim='high', ratio=1.09)),
    ('c  BEST with oracle cap 107 pages', dict(BEST, victim='high', fixed_cap=107)),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--trace', default=TRACE)
    args = ap.parse_args()
    ops = load(args.trace)
    t0 = time.time()
    b = baseline(ops)
    print(f"baseline: peak_req={b['peak_req']} peak_res={b['peak_res']} ({b['peak_res']/2**20:.0f} MiB)"
          f" ratio={b['peak_res']/b['peak_req']:.4f} growth calls={b['growth_calls']}  [{time.time()-t0:.1f}s]")
    print("| variant | peak reserved MiB | ratio | map ops | unmap ops | total | before/after op 4000 | max over cap (pages) |")
    print("|---|---|---|---|---|---|---|---|")
    print("(total - peak pages = page ops beyond the unavoidable first mapping of the peak)")
    print(fmt('baseline best fit + top', b))
    for name, kw in VARIANTS:
        t0 = time.time()
        d = sparse(ops, **kw)
        print(fmt(name, d), f"[{time.time()-t0:.1f}s]", flush=True)


if __name__ == '__main__':
    main()
