(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const body = document.body;

  function fail(message) {
    body.dataset.rendered = 'error';
    body.dataset.error = message;
    $('failure').style.display = 'block';
    $('failure').textContent = 'This snapshot could not be drawn: ' + message;
  }

  // ---- formatting ------------------------------------------------------------------------
  const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  function unitOf(n) {
    let u = 0;
    while (u < UNITS.length - 1 && Math.abs(n) >= Math.pow(1024, u + 1)) u++;
    return u;
  }
  function bytes(n) {
    if (n == null || !isFinite(n)) return '?';
    const u = unitOf(n);
    if (u === 0) return n + ' B';
    const v = n / Math.pow(1024, u);
    return (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + ' ' + UNITS[u];
  }
  const exact = (n) => Number(n).toLocaleString('en-US') + ' B';
  const hex = (n) => (n == null ? '?' : '0x' + Number(n).toString(16));
  const esc = (s) => String(s).replace(/[&<>"']/g,
      (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
  const streamName = (s) => (s == null ? '?' : s === 0 ? '0 (default)' : hex(s));
  // A share as a whole percentage, where a small but nonzero one reads "<1%" rather than "0%".
  const percent = (part, whole) => {
    const p = whole ? 100 * part / whole : 0;
    return (p > 0 && p < 1 ? '<1' : Math.round(p)) + '%';
  };
  const f1 = (x) => (Math.round(x * 10) / 10).toString();
  function duration(us) {
    const a = Math.abs(us);
    if (a < 1000) return f1(us) + ' µs';
    if (a < 1e6) return f1(us / 1000) + ' ms';
    return f1(us / 1e6) + ' s';
  }
  function niceStep(span, target) {
    const raw = span / Math.max(1, target);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const norm = raw / mag;
    return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  }

  // Frames that say how memory was allocated rather than who asked for it: the allocators' own
  // (cudakit's, and torch's unwinder and caching allocator) and the Python interpreter's. A hover
  // leaves them out; a pinned tooltip shows them dimmed.
  const INTERNAL_FRAME = new RegExp('^(cudakit::memory::(detail|DeviceCachingAllocator)|torch::unwind|' +
      'torch::CapturedTraceback|torch::cuda::\\(anonymous namespace\\)::gather|c10::cuda::CUDACachingAllocator|' +
      '_?Py[A-Z_]|__libc_|_start$)');
  const isInternal = (f) => typeof f.name === 'string' && INTERNAL_FRAME.test(f.name);
  function framesHtml(frames, pinnedView) {
    if (!frames || frames.length === 0) return '<div class="muted">no stack frames recorded</div>';
    const limit = 10;
    const clip = (text) => (!pinnedView && text.length > 140 ? text.slice(0, 137) + '…' : text);
    const own = frames.filter((f) => !isInternal(f));
    const list = pinnedView ? frames : own.slice(0, limit);
    let h = '<ol class="frames">';
    for (const f of list) {
      // Frames without debug information come as "??", line 0.
      const known = f.filename && f.filename !== '??';
      const loc = known ? f.filename + (f.line ? ':' + f.line : '') : '';
      h += '<li' + (isInternal(f) ? ' class="internal"' : '') + '>' + esc(clip(f.name != null ? String(f.name) : '?')) +
          (loc ? ' <span class="loc">' + esc(loc) + '</span>' : '') + '</li>';
    }
    h += '</ol>';
    const notes = [];
    if (!pinnedView && own.length > list.length) notes.push((own.length - list.length) + ' more frames');
    if (!pinnedView && frames.length > own.length) notes.push((frames.length - own.length) + ' allocator/interpreter frames hidden');
    if (notes.length) h += '<div class="hint">' + notes.join(', ') + ': click to pin and see all</div>';
    return h;
  }
  const row = (label, value) => '<div class="row">' + label + ' <b>' + value + '</b></div>';

  // ---- the snapshot ----------------------------------------------------------------------
  let S;
  try {
    S = JSON.parse($('memviz-data').textContent);
  } catch (e) {
    fail('the embedded data is not JSON (' + e.message + ')');
    return;
  }
  const segmentsAll = Array.isArray(S.segments) ? S.segments : [];
  const traces = Array.isArray(S.device_traces) ? S.device_traces : [];
  const stats = S.device_stats || {};
  const devOf = (seg) => (seg.device != null ? seg.device : 0);

  // Blocks without an address tile their segment in order (older torch snapshots).
  for (const seg of segmentsAll) {
    let at = seg.address;
    for (const b of seg.blocks || []) {
      if (b.address == null) b.address = at;
      at = b.address + b.size;
    }
  }

  const devices = (() => {
    const set = new Set(segmentsAll.map(devOf));
    traces.forEach((t, i) => { if (t && t.length) set.add(i); });
    const list = Array.from(set).sort((a, b) => a - b);
    return list.length ? list : [0];
  })();

  // ---- timeline model --------------------------------------------------------------------
  // Note [Timeline model]
  // Allocations are matched by address: "alloc" opens a band, "free_completed" (or the older
  // "free") closes it; "free_requested" only marks when the program let go of it (the memory
  // stays active until the streams that used it are done). A free with no earlier alloc, and a
  // block still active at the end with no alloc in the trace, were allocated before recording
  // began: their bands start at the left edge, the ones that live longest at the bottom so that
  // frees shift as little as possible. Beyond MAX_BANDS allocations the smallest are merged into
  // one grey band on top of the others, so that huge traces still draw quickly: on top, its
  // changes move no other band (at the bottom, each would add a step to every band above it).
  const MAX_BANDS = 3000;

  function buildModel(device) {
    const trace = traces[device] || [];
    const N = trace.length;
    const elements = [];
    const live = new Map();
    const changes = [];
    const earlyFreeRequest = new Map();
    const ooms = [];
    const newElement = (fields) => {
      const el = Object.assign({id: elements.length, end: null, freeRequested: null}, fields);
      elements.push(el);
      return el;
    };
    trace.forEach((e, i) => {
      switch (e.action) {
        case 'alloc': {
          const old = live.get(e.addr);
          if (old) { old.end = i; changes.push({i, el: old, alloc: false}); }
          const el = newElement({addr: e.addr, size: e.size, stream: e.stream, frames: e.frames, start: i, initial: false});
          live.set(e.addr, el);
          changes.push({i, el, alloc: true});
          break;
        }
        case 'free_requested': {
          const el = live.get(e.addr);
          if (el) el.freeRequested = i; else earlyFreeRequest.set(e.addr, i);
          break;
        }
        case 'free':
        case 'free_completed': {
          let el = live.get(e.addr);
          if (el) {
            live.delete(e.addr);
          } else {
            const req = earlyFreeRequest.get(e.addr);
            el = newElement({addr: e.addr, size: e.size, stream: e.stream, frames: e.frames, start: -1, initial: true,
                             freeRequested: req != null ? req : null});
          }
          el.end = i;
          if (e.action === 'free' && el.freeRequested == null) el.freeRequested = i;
          changes.push({i, el, alloc: false});
          break;
        }
        case 'oom':
          ooms.push(i);
          break;
        default:
          break;
      }
    });
    for (const seg of segmentsAll) {
      if (devOf(seg) !== device) continue;
      for (const b of seg.blocks || []) {
        if (b.state === 'inactive' || live.has(b.address)) continue;
        newElement({addr: b.address, size: b.requested_size || b.size, stream: seg.stream, frames: b.frames,
                    start: -1, initial: true, freeRequested: b.state === 'active_pending_free' ? -1 : null});
      }
    }
    // Reserved memory over time: the final reserved size minus what the trace added later.
    const finalReserved = segmentsAll.filter((s) => devOf(s) === device).reduce((a, s) => a + s.total_size, 0);
    const reservedDelta = trace.map((e) => (e.action === 'segment_alloc' || e.action === 'segment_map' ? e.size
        : e.action === 'segment_free' || e.action === 'segment_unmap' ? -e.size : 0));
    const initialReserved = finalReserved - reservedDelta.reduce((a, d) => a + d, 0);
    const hasTime = N > 0 && trace.every((e) => typeof e.time_us === 'number');
    return {trace, N, elements, changes, ooms, reservedDelta, initialReserved, hasTime};
  }

  // Lays the bands out on an x scale: each element gets pts = [[x, offset], ...] (offset from x on)
  // and x0/x1; `total` is the active memory after each change.
  function layout(model, X, xStart, xEnd) {
    const {elements, changes} = model;
    const big = new Set(elements.length > MAX_BANDS
        ? elements.slice().sort((a, b) => b.size - a.size).slice(0, MAX_BANDS)
        : elements);
    const stack = [];
    let stackTotal = 0;
    let small = 0;
    const smallPts = [];  // [x, bottom, top] of the merged band
    const total = [];
    const restack = (x, from) => {
      let off = 0;
      for (let j = 0; j < stack.length; j++) {
        const el = stack[j];
        if (j >= from && el.off !== off) { el.pts.push([x, off]); el.off = off; }
        off += el.size;
      }
    };
    const push = (x) => {
      smallPts.push([x, stackTotal, stackTotal + small]);
      total.push([x, stackTotal + small]);
    };
    const initial = elements.filter((el) => el.initial)
        .sort((a, b) => (b.end == null ? Infinity : b.end) - (a.end == null ? Infinity : a.end));
    for (const el of initial) {
      el.x0 = xStart;
      if (big.has(el)) {
        el.pts = [[xStart, stackTotal]];
        el.off = stackTotal;
        stack.push(el);
        stackTotal += el.size;
      } else {
        small += el.size;
      }
    }
    push(xStart);
    for (const c of changes) {
      const x = X(c.i);
      const el = c.el;
      if (!big.has(el)) {
        small += c.alloc ? el.size : -el.size;
      } else if (c.alloc) {
        el.x0 = x;
        el.off = stackTotal;
        el.pts = [[x, el.off]];
        stack.push(el);
        stackTotal += el.size;
      } else {
        const at = stack.indexOf(el);
        stack.splice(at, 1);
        stackTotal -= el.size;
        el.x1 = x;
        restack(x, at);
      }
      push(x);
    }
    for (const el of stack) el.x1 = xEnd;
    return {big, smallPts, total, smallCount: elements.length - big.size};
  }

  // ---- drawing helpers -------------------------------------------------------------------
  function bytesTicks(max, count) {
    const unit = Math.pow(1024, unitOf(max));
    const step = niceStep(max / unit, count) * unit;
    const ticks = [];
    for (let v = 0; v <= max + step * 1e-9; v += step) ticks.push(v);
    const label = (v) => (v === 0 ? '0' : parseFloat((v / unit).toFixed(2)) + ' ' + UNITS[unitOf(max)]);
    return {ticks, label};
  }

  function hueFor(el) {
    // Golden-angle steps keep neighbours apart; starting at blue keeps red for out-of-memory.
    return (215 + el.id * 137.508) % 360;
  }

  // What each hoverable mark shows; filled per render, keyed by data-tip.
  let tips = {};

  // ---- the timeline ----------------------------------------------------------------------
  function renderTimeline(device, xMode, showReserved) {
    const host = $('timeline');
    const model = buildModel(device);
    const {trace, N} = model;
    const counts = {bands: 0, summarized: 0, ooms: 0};
    if (model.elements.length === 0 && model.ooms.length === 0) {
      host.innerHTML = '<div class="empty">No allocations in this device\'s trace' +
          (N === 0 ? ' (memory history was not recorded)' : '') + '.</div>';
      return counts;
    }
    const useTime = xMode === 'time' && model.hasTime;
    let X, xStart, xEnd, xLabel;
    if (useTime) {
      const t0 = trace[0].time_us;
      const span = Math.max(1, trace[N - 1].time_us - t0);
      X = (i) => trace[i].time_us - t0;
      xStart = -span * 0.02;
      xEnd = span * 1.02;
      xLabel = (v) => (v < 0 ? '' : '+' + duration(v));
    } else {
      X = (i) => i;
      xStart = -1;
      xEnd = Math.max(N, 1);
      xLabel = (v) => (v < 0 ? '' : '#' + v);
    }
    const L = layout(model, X, xStart, xEnd);
    const reservedPts = [[xStart, model.initialReserved]];
    let reserved = model.initialReserved;
    model.reservedDelta.forEach((d, i) => {
      if (d !== 0) { reserved += d; reservedPts.push([X(i), reserved]); }
    });
    const activePeak = Math.max(0, ...L.total.map((p) => p[1]));
    const reservedPeak = Math.max(0, ...reservedPts.map((p) => p[1]));
    // Unless asked, reserved memory is left out where it would flatten the allocations (a cache
    // many times larger than what is in use) and said so in the legend instead.
    const reservedFits = reservedPeak <= 4 * activePeak;
    const drawReserved = reservedPeak > 0 && (showReserved === 'auto' ? reservedFits : showReserved);
    $('show-reserved').checked = drawReserved;
    let yMax = Math.max(1, activePeak);
    if (drawReserved) yMax = Math.max(yMax, reservedPeak);
    yMax *= 1.06;

    const W = Math.max(640, host.clientWidth);
    const H = 380;
    const m = {l: 76, r: 18, t: 18, b: 34};
    const px = (x) => (m.l + (x - xStart) / (xEnd - xStart) * (W - m.l - m.r)).toFixed(1);
    const py = (y) => (H - m.b - y / yMax * (H - m.t - m.b)).toFixed(1);
    let svg = '<svg width="' + W + '" height="' + H + '" viewBox="0 0 ' + W + ' ' + H + '">' +
        '<defs><pattern id="freeing" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' +
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#fff" stroke-opacity=".6" stroke-width="2.5"/></pattern></defs>';
    let pending = '';
    let small = '';

    const yt = bytesTicks(yMax / 1.06, 5);
    for (const v of yt.ticks) {
      svg += '<line class="gridline" x1="' + m.l + '" x2="' + (W - m.r) + '" y1="' + py(v) + '" y2="' + py(v) + '"/>' +
          '<text x="' + (m.l - 8) + '" y="' + py(v) + '" dy="4" text-anchor="end">' + yt.label(v) + '</text>';
    }
    const xs = useTime ? niceStep(xEnd, 10) : Math.max(1, niceStep(xEnd, 10));
    for (let v = 0; v <= xEnd; v += xs) {
      svg += '<line class="axis" x1="' + px(v) + '" x2="' + px(v) + '" y1="' + (H - m.b) + '" y2="' + (H - m.b + 4) + '"/>' +
          '<text x="' + px(v) + '" y="' + (H - m.b + 16) + '" text-anchor="middle">' + xLabel(v) + '</text>';
    }
    svg += '<line class="axis" x1="' + m.l + '" x2="' + (W - m.r) + '" y1="' + (H - m.b) + '" y2="' + (H - m.b) + '"/>';

    // The outline of an area whose bottom and top step at given x: pts = [[x, bottom, top], ...]
    // from pts[0][0] to xb. The top edge goes right, the bottom edge comes back.
    const stepArea = (pts, xb) => {
      const last = pts.length - 1;
      let d = 'M' + px(pts[0][0]) + ',' + py(pts[0][2]);
      for (let k = 1; k <= last; k++) d += 'H' + px(pts[k][0]) + 'V' + py(pts[k][2]);
      d += 'H' + px(xb) + 'V' + py(pts[last][1]);
      for (let k = last; k > 0; k--) d += 'H' + px(pts[k][0]) + 'V' + py(pts[k - 1][1]);
      return d + 'H' + px(pts[0][0]) + 'Z';
    };
    // A band between xa and xb: its offset steps down where allocations below it were freed.
    const bandPath = (el, xa, xb) => {
      let first = el.pts[0][1];
      for (const [x, off] of el.pts) if (x <= xa) first = off;
      const pts = [[xa, first, first + el.size]];
      for (const [x, off] of el.pts) if (x > xa && x < xb) pts.push([x, off, off + el.size]);
      return stepArea(pts, xb);
    };
    const evLabel = (i) => (i < 0 ? 'before the trace' : 'event #' + i +
        (model.hasTime ? ' (+' + duration(trace[i].time_us - trace[0].time_us) + ')' : ''));
    if (L.smallCount > 0) {
      const lastSmall = L.smallPts[L.smallPts.length - 1];
      tips['s'] = '<h3>' + L.smallCount + ' smaller allocations</h3>' +
          row('merged into one band to keep the plot fast; the largest', MAX_BANDS + ' are drawn individually') +
          row('at the end', bytes(lastSmall[2] - lastSmall[1]));
      small = '<path class="band small-sum" data-tip="s" d="' + stepArea(L.smallPts, xEnd) + '"/>';
      counts.summarized = L.smallCount;
    }
    for (const el of model.elements) {
      if (!L.big.has(el)) continue;
      const d = bandPath(el, el.x0, el.x1);
      const key = 'a' + el.id;
      const requested = el.freeRequested != null && el.freeRequested !== el.end
          ? 'free requested ' + evLabel(el.freeRequested) : '';
      const freed = el.end != null ? evLabel(el.end) + (requested ? ' (' + requested + ')' : '')
          : requested ? 'not yet: ' + requested + ', waiting for other streams' : 'no, still allocated at the end';
      tips[key] = '<h3>Allocation ' + bytes(el.size) + '</h3>' +
          row('size', exact(el.size)) +
          row('address', '<span class="mono">' + hex(el.addr) + '</span>') +
          row('stream', '<span class="mono">' + streamName(el.stream) + '</span>') +
          row('allocated', el.initial ? 'before the trace began' : evLabel(el.start)) +
          row('freed', freed) + '@@FRAMES@@';
      tips[key + '.frames'] = el.frames;
      svg += '<path class="band" data-tip="' + key + '" data-addr="' + hex(el.addr) + (el.end == null ? '" data-live="1' : '') +
          '" fill="hsl(' + hueFor(el).toFixed(0) + ',58%,' + (el.stream ? 56 : 64) + '%)" d="' + d + '"/>';
      counts.bands++;
      if (el.freeRequested != null && el.freeRequested !== el.end) {
        const xa = el.freeRequested < 0 ? el.x0 : X(el.freeRequested);
        pending += '<path class="pending-free" d="' + bandPath(el, xa, el.x1) + '"/>';
      }
    }
    svg += small + pending;
    if (drawReserved) {
      let d = 'M' + px(reservedPts[0][0]) + ',' + py(reservedPts[0][1]);
      for (let k = 1; k < reservedPts.length; k++) d += 'H' + px(reservedPts[k][0]) + 'V' + py(reservedPts[k][1]);
      d += 'H' + px(xEnd);
      svg += '<path class="reserved" d="' + d + '"/>';
    }
    for (const i of model.ooms) {
      const e = trace[i];
      const key = 'o' + i;
      tips[key] = '<h3 style="color:var(--oom)">Out of memory</h3>' +
          row('requested', bytes(e.size) + ' (' + exact(e.size) + ')') +
          row('device free at the time', bytes(e.device_free != null ? e.device_free : e.addr)) +
          row('stream', '<span class="mono">' + streamName(e.stream) + '</span>') +
          row('at', evLabel(i)) + '@@FRAMES@@';
      tips[key + '.frames'] = e.frames;
      const x = px(X(i));
      svg += '<g class="oom-marker" data-tip="' + key + '"><line x1="' + x + '" x2="' + x + '" y1="' + m.t + '" y2="' + (H - m.b) + '"/>' +
          '<line class="hit" x1="' + x + '" x2="' + x + '" y1="' + m.t + '" y2="' + (H - m.b) + '"/>' +
          // The label goes left of a marker near the right edge, where it would be cut off.
          (Number(x) > W - m.r - 130 ? '<text text-anchor="end" x="' + (Number(x) - 5) : '<text x="' + (Number(x) + 5)) +
          '" y="' + (m.t + 10) + '">OOM ' + esc(bytes(e.size)) + '</text></g>';
      counts.ooms++;
    }
    svg += '</svg>';
    host.innerHTML = svg;

    let legend = '<span><span class="sw" style="background:linear-gradient(90deg,hsl(200,58%,64%),hsl(30,58%,64%),hsl(290,58%,64%))"></span>' +
        counts.bands + ' allocations</span>';
    if (counts.summarized) legend += '<span><span class="sw" style="background:#aab2bd"></span>' + counts.summarized + ' merged</span>';
    if (model.elements.some((el) => el.freeRequested != null && el.freeRequested !== el.end)) {
      legend += '<span><span class="sw" style="background:repeating-linear-gradient(45deg,#9ab 0 2px,#dde3ea 2px 4px)"></span>free requested, not yet completed</span>';
    }
    if (drawReserved) legend += '<span><span class="sw" style="border-top:2px dashed var(--reserved);height:0;vertical-align:3px"></span>reserved</span>';
    else if (reservedPeak > 0) legend += '<span>reserved peak ' + bytes(reservedPeak) + ' not drawn (' + (activePeak ? Math.round(reservedPeak / activePeak) + '× the active peak' : 'nothing active') + ')</span>';
    if (counts.ooms) legend += '<span style="color:var(--oom)">▍ ' + counts.ooms + ' out-of-memory event' + (counts.ooms > 1 ? 's' : '') + '</span>';
    $('timeline-legend').innerHTML = legend;
    $('x-time').disabled = !model.hasTime;
    $('x-time').title = model.hasTime ? '' : 'this trace has no time_us on every event';
    return counts;
  }

  // ---- the segment map -------------------------------------------------------------------
  // Block widths along a segment's bar: proportional to size, except that a live block gets at
  // least MIN_BLOCK_PX (a 512 B block in a 2 MiB segment would be a quarter of a pixel); the
  // width it gains is taken from the larger pieces, so the bar keeps its length and its order.
  const MIN_BLOCK_PX = 3;
  function fitBlocks(seg, barW) {
    const blocks = seg.blocks || [];
    const scale = seg.total_size ? barW / seg.total_size : 0;
    // Pieces along the bar in address order: blocks, and the unmapped gaps between them.
    const pieces = [];
    let prevEnd = seg.address;
    blocks.forEach((b, i) => {
      if (b.address > prevEnd) pieces.push({block: -1, raw: (b.address - prevEnd) * scale, bump: false});
      pieces.push({block: i, raw: b.size * scale, bump: b.state !== 'inactive' && b.size * scale < MIN_BLOCK_PX});
      prevEnd = Math.max(prevEnd, b.address + b.size);
    });
    const gained = pieces.reduce((a, p) => a + (p.bump ? MIN_BLOCK_PX - p.raw : 0), 0);
    const room = pieces.reduce((a, p) => a + (p.bump ? 0 : Math.max(0, p.raw - MIN_BLOCK_PX)), 0);
    const shrink = gained > 0 && room > gained ? gained / room : 0;
    const x = [];
    const w = [];
    let at = 0;
    for (const p of pieces) {
      const width = !shrink ? p.raw : p.bump ? MIN_BLOCK_PX : p.raw - Math.max(0, p.raw - MIN_BLOCK_PX) * shrink;
      if (p.block >= 0) {
        x[p.block] = Math.min(at, barW);
        w[p.block] = Math.max(0, Math.min(width, barW - x[p.block]));
      }
      at += width;
    }
    return {x, w};
  }

  function renderSegments(device) {
    const host = $('segments');
    const segs = segmentsAll.filter((s) => devOf(s) === device).sort((a, b) => a.address - b.address);
    const counts = {segments: segs.length, blocks: 0};
    if (segs.length === 0) {
      host.innerHTML = '<div class="empty">No segments on this device.</div>';
      return counts;
    }
    const W = Math.max(640, host.clientWidth);
    const labelW = 300;
    const rowH = 40;
    const barH = 24;
    const barX = labelW;
    const barW = W - labelW - 8;
    let svg = '<svg width="' + W + '" height="' + (segs.length * rowH + 4) + '">' +
        '<defs><pattern id="unmapped" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' +
        '<rect width="6" height="6" fill="var(--unmapped)"/><line x1="0" y1="0" x2="0" y2="6" stroke="var(--line)" stroke-width="2"/></pattern>' +
        '<pattern id="pending" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' +
        '<rect width="8" height="8" fill="var(--pending)"/><line x1="0" y1="0" x2="0" y2="8" stroke="#f3c877" stroke-width="3"/></pattern></defs>';
    segs.forEach((seg, si) => {
      const y = si * rowH + 4;
      const blocks = seg.blocks || [];
      const allocated = blocks.filter((b) => b.state === 'active_allocated').reduce((a, b) => a + b.size, 0);
      const pending = blocks.filter((b) => b.state === 'active_pending_free').reduce((a, b) => a + b.size, 0);
      const pct = percent(allocated, seg.total_size);
      const segKey = 'g' + si;
      const segDesc = (seg.segment_type || 'segment') + ' segment ' + hex(seg.address) + ', ' + bytes(seg.total_size) +
          ', stream ' + streamName(seg.stream);
      tips[segKey] = '<h3>Segment ' + bytes(seg.total_size) + (seg.segment_type ? ' (' + esc(seg.segment_type) + ' pool)' : '') + '</h3>' +
          row('address', '<span class="mono">' + hex(seg.address) + '</span>') +
          row('size', exact(seg.total_size)) +
          row('stream', '<span class="mono">' + streamName(seg.stream) + '</span>') +
          row('allocated', bytes(allocated) + ' in ' + blocks.filter((b) => b.state === 'active_allocated').length + ' blocks (' + pct + ')') +
          (pending ? row('pending free', bytes(pending)) : '') +
          row('blocks', blocks.length) +
          (seg.segment_pool_id ? row('pool id', '<span class="mono">(' + seg.segment_pool_id.join(', ') + ')</span>') : '') +
          (seg.is_expandable ? row('expandable', 'yes') : '') + '@@FRAMES@@';
      tips[segKey + '.frames'] = seg.frames;
      svg += '<text class="seg-title" x="0" y="' + (y + 11) + '">' + esc(seg.segment_type || 'segment') + ' · ' + bytes(seg.total_size) +
          ' · ' + pct + ' allocated' + (seg.is_expandable ? ' · expandable' : '') + '</text>' +
          '<text class="seg-sub" x="0" y="' + (y + 27) + '">' + hex(seg.address) + ' · stream ' + esc(streamName(seg.stream)) + '</text>' +
          '<rect class="seg-bg" data-tip="' + segKey + '" x="' + barX + '" y="' + y + '" width="' + barW + '" height="' + barH + '" rx="2"/>';
      const fit = fitBlocks(seg, barW);
      blocks.forEach((b, bi) => {
        const x = barX + fit.x[bi];
        const w = fit.w[bi];
        const key = 'k' + si + '.' + bi;
        tips[key] = '<h3>Block ' + bytes(b.size) + ' · ' + esc(b.state.replace(/_/g, ' ')) + '</h3>' +
            row('size', exact(b.size)) +
            (b.requested_size != null && b.state !== 'inactive'
                ? row('requested', exact(b.requested_size) + (b.size > b.requested_size ? ' (' + bytes(b.size - b.requested_size) + ' rounding)' : '')) : '') +
            row('address', '<span class="mono">' + hex(b.address) + '</span> (+' + bytes(b.address - seg.address) + ')') +
            row('in', esc(segDesc)) + '@@FRAMES@@';
        tips[key + '.frames'] = b.frames;
        svg += '<rect class="block ' + esc(b.state) + '" data-tip="' + key + '" data-addr="' + hex(b.address) +
            '" x="' + x.toFixed(2) + '" y="' + y + '" width="' + Math.max(0, w).toFixed(2) + '" height="' + barH + '"/>';
        counts.blocks++;
      });
    });
    svg += '</svg>';
    host.innerHTML = svg;
    return counts;
  }

  // ---- summary ---------------------------------------------------------------------------
  function renderSummary(device) {
    const segs = segmentsAll.filter((s) => devOf(s) === device);
    const blocks = segs.flatMap((s) => s.blocks || []);
    const sumOf = (state) => blocks.filter((b) => b.state === state).reduce((a, b) => a + b.size, 0);
    const trace = traces[device] || [];
    // device_stats describes the snapshot's device; with several devices, compute from the segments.
    const st = devices.length === 1 ? stats : {};
    const stat = (name) => (typeof st[name] === 'number' ? st[name] : null);
    const allocated = sumOf('active_allocated');
    const active = allocated + sumOf('active_pending_free');
    const reserved = segs.reduce((a, s) => a + s.total_size, 0);
    const model = buildModel(device);
    const L = layout(model, (i) => i, -1, model.N);
    const tracePeak = Math.max(0, ...L.total.map((p) => p[1]));
    let r = model.initialReserved;
    let reservedPeak = r;
    for (const d of model.reservedDelta) { r += d; reservedPeak = Math.max(reservedPeak, r); }
    const ooms = trace.filter((e) => e.action === 'oom').length;
    const card = (k, v, n, bad) => '<div class="card' + (bad ? ' bad' : '') + '"><div class="k">' + k + '</div><div class="v">' + v +
        '</div><div class="n">' + (n || '&nbsp;') + '</div></div>';
    const peakAlloc = stat('allocated_bytes.all.peak');
    const peakRes = stat('reserved_bytes.all.peak');
    const large = segs.filter((s) => s.segment_type === 'large').length;
    const streams = new Set(segs.map((s) => s.stream).concat(trace.map((e) => e.stream)).filter((s) => s != null));
    $('cards').innerHTML =
        card('Allocated', bytes(allocated), exact(allocated)) +
        card('Active', bytes(active), active > allocated ? bytes(active - allocated) + ' pending' : 'no pending frees') +
        card('Reserved', bytes(reserved), reserved ? percent(allocated, reserved) + ' of it allocated' : '') +
        card('Peak allocated', bytes(peakAlloc != null ? peakAlloc : tracePeak), peakAlloc != null ? 'since the last reset' : 'within the trace') +
        card('Peak reserved', bytes(peakRes != null ? peakRes : reservedPeak), peakRes != null ? 'since the last reset' : 'within the trace') +
        card('Segments', segs.length, large + ' large, ' + (segs.length - large) + ' small') +
        card('Blocks', blocks.length, blocks.filter((b) => b.state === 'inactive').length + ' inactive') +
        card('Trace events', trace.length, streams.size + ' stream' + (streams.size === 1 ? '' : 's')) +
        (ooms || stat('num_ooms') ? card('Out of memory', ooms || stat('num_ooms'), ooms ? 'in the trace' : 'since start', true) : '');
    const version = typeof S.cudakit_version === 'string' ? 'cudakit ' + S.cudakit_version : 'PyTorch-format snapshot';
    $('subtitle').textContent = version + ' · device ' + device;
    document.title = 'Memory snapshot · device ' + device + ' · ' + bytes(allocated) + ' allocated of ' + bytes(reserved) + ' reserved';
  }

  function renderTables() {
    const table = (obj) => '<table class="kv">' + Object.keys(obj).sort().map((k) =>
        '<tr><td>' + esc(k) + '</td><td>' + esc(typeof obj[k] === 'object' ? JSON.stringify(obj[k]) : obj[k]) + '</td></tr>').join('') + '</table>';
    let h = '';
    if (S.device_stats && Object.keys(S.device_stats).length) {
      h += '<details><summary>Statistics (device_stats, torch.cuda.memory_stats names)</summary>' + table(S.device_stats) + '</details>';
    }
    if (S.allocator_settings && Object.keys(S.allocator_settings).length) {
      h += '<details><summary>Allocator settings</summary>' + table(S.allocator_settings) + '</details>';
    }
    $('extra').innerHTML = h;
  }

  // ---- tooltip ---------------------------------------------------------------------------
  const tip = $('tip');
  let pinned = false;
  function tipHtml(key, allFrames) {
    return (tips[key] || '').replace('@@FRAMES@@', framesHtml(tips[key + '.frames'], allFrames));
  }
  function place(ev) {
    const pad = 14;
    const r = tip.getBoundingClientRect();
    let x = ev.clientX + pad;
    let y = ev.clientY + pad;
    if (x + r.width > window.innerWidth - 4) x = Math.max(4, ev.clientX - r.width - pad);
    if (y + r.height > window.innerHeight - 4) y = Math.max(4, window.innerHeight - r.height - 4);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function link(target, on) {
    // A band still alive at the end and its block in the segment map are the same memory.
    const addr = target.getAttribute('data-addr');
    if (!addr || (target.classList.contains('band') && !target.hasAttribute('data-live'))) return;
    const other = target.classList.contains('band') ? '.block[data-addr="' + addr + '"]' : '.band[data-live][data-addr="' + addr + '"]';
    document.querySelectorAll(other).forEach((n) => n.classList.toggle('linked', on));
  }
  let hovered = null;
  document.addEventListener('mousemove', (ev) => {
    if (pinned) return;
    const target = ev.target.closest ? ev.target.closest('[data-tip]') : null;
    if (target !== hovered) {
      if (hovered) link(hovered, false);
      hovered = target;
      if (target) {
        link(target, true);
        tip.innerHTML = tipHtml(target.getAttribute('data-tip'), false);
      }
    }
    tip.style.display = target ? 'block' : 'none';
    if (target) place(ev);
  });
  document.addEventListener('click', (ev) => {
    if (pinned && tip.contains(ev.target) && !ev.target.classList.contains('close')) return;
    const target = ev.target.closest ? ev.target.closest('[data-tip]') : null;
    pinned = !!target;
    tip.classList.toggle('pinned', pinned);
    if (target) {
      tip.innerHTML = '<button class="close" title="close (Esc)">×</button>' + tipHtml(target.getAttribute('data-tip'), true);
      tip.style.display = 'block';
      place(ev);
    } else {
      tip.style.display = 'none';
    }
  });
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') { pinned = false; tip.classList.remove('pinned'); tip.style.display = 'none'; }
  });

  // ---- controls --------------------------------------------------------------------------
  const state = {device: devices[0], xMode: 'index', reserved: 'auto'};
  function render() {
    try {
      tips = {};
      renderSummary(state.device);
      const t = renderTimeline(state.device, state.xMode, state.reserved);
      const s = renderSegments(state.device);
      // Read by the headless-browser test: proof that the script ran and what it drew.
      Object.assign(body.dataset, {
        rendered: 'ok', device: state.device, timelineBands: t.bands, timelineSummarized: t.summarized,
        oomMarkers: t.ooms, segments: s.segments, segmentBlocks: s.blocks,
      });
    } catch (e) {
      fail(e && e.message ? e.message : String(e));
    }
  }
  if (devices.length > 1) {
    $('device-pick').hidden = false;
    $('device').innerHTML = devices.map((d) => '<option value="' + d + '">' + d + '</option>').join('');
    $('device').addEventListener('change', (ev) => { state.device = Number(ev.target.value); render(); });
  }
  const setX = (mode) => {
    state.xMode = mode;
    $('x-index').classList.toggle('on', mode === 'index');
    $('x-time').classList.toggle('on', mode === 'time');
    render();
  };
  $('x-index').addEventListener('click', () => setX('index'));
  $('x-time').addEventListener('click', () => setX('time'));
  $('show-reserved').addEventListener('change', (ev) => { state.reserved = ev.target.checked; render(); });
  let resizeTimer = 0;
  window.addEventListener('resize', () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(render, 150); });
  renderTables();
  render();
})();
