// parscope's viewer: one page, plain JavaScript, ECharts and echarts-gl.
// It only formats: every number it shows comes from a report bundle that
// the Go package report computed. It works two ways: in a report written by
// `parscope analyze` the bundles are inlined (window.PARSCOPE_DATA); under
// `parscope serve` they come from the JSON endpoints api/traces/...
'use strict';

// The pages run under a Content-Security-Policy without 'unsafe-eval'.
// echarts-gl compiles the sizes of its post-processing buffers, fixed
// strings of its own such as "expr([width * 1.0 / 2, height / 2])", with
// new Function('width', 'height', 'dpr', 'return ' + expr). This wrapper
// of the Function constructor evaluates exactly that form (numbers, width,
// height, dpr, + - * /, parentheses and one list) without eval; any other
// use goes to the real constructor, which the policy refuses.
window.Function = (function (RealFunction) {
  function compile(src) {
    const toks = src.match(/\d+(?:\.\d+)?|[A-Za-z_]\w*|\S/g) || [];
    let i = 0;
    const peek = () => toks[i], take = () => toks[i++];
    const fail = () => { throw new SyntaxError('unsupported expression: ' + src); };
    function factor() {
      const t = take();
      if (t === '(') { const e = sum(); if (take() !== ')') fail(); return e; }
      if (t === '-') { const f = factor(); return env => -f(env); }
      if (t === 'width' || t === 'height' || t === 'dpr') return env => env[t];
      if (/^\d/.test(t || '')) { const v = parseFloat(t); return () => v; }
      return fail();
    }
    function product() {
      let a = factor();
      while (peek() === '*' || peek() === '/') {
        const op = take(), l = a, r = factor();
        a = op === '*' ? env => l(env) * r(env) : env => l(env) / r(env);
      }
      return a;
    }
    function sum() {
      let a = product();
      while (peek() === '+' || peek() === '-') {
        const op = take(), l = a, r = product();
        a = op === '+' ? env => l(env) + r(env) : env => l(env) - r(env);
      }
      return a;
    }
    let f;
    if (peek() === '[') {
      take();
      const items = [sum()];
      while (peek() === ',') { take(); items.push(sum()); }
      if (take() !== ']') fail();
      f = env => items.map(g => g(env));
    } else f = sum();
    if (i !== toks.length) fail();
    return f;
  }
  return new Proxy(RealFunction, {
    construct(target, args, newTarget) {
      if (args.length === 4 && args[0] === 'width' && args[1] === 'height' && args[2] === 'dpr' && /^return /.test(args[3])) {
        const f = compile(args[3].slice(7));
        return (width, height, dpr) => f({ width, height, dpr });
      }
      return Reflect.construct(target, args, newTarget);
    },
  });
})(window.Function);

(function () {
  const STATIC = window.PARSCOPE_DATA || null;
  // MAX_INDENT is the deepest level of the comm view's structure tree
  // drawn by indentation (cmd/parscope's maxIndent).
  const MAX_INDENT = 32;
  // The hot scale of Jones et al. 2007 stops at pale yellow, not white: the
  // largest value must stand out on the white card (as plot.HeatColor).
  const HOT = ['#000000', '#8b0000', '#ff2000', '#ff9a00', '#ffff00', '#ffff66'];
  const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf',
    '#393b79', '#ad494a', '#637939', '#8c6d31', '#843c39', '#7b4173', '#3182bd', '#e6550d', '#31a354', '#756bb1'];
  let charts = [];

  // ---------- data access ----------
  const cache = new Map();
  // ApiError is an error answer of the server: its message is the
  // server's reason ({"error": ...}), shown in the page as it is.
  class ApiError extends Error {
    constructor(status, message) { super(message); this.status = status; }
  }
  async function getJSON(url) {
    if (cache.has(url)) return cache.get(url);
    const r = await fetch(url);
    if (!r.ok) {
      const text = (await r.text()).trim();
      let why = text;
      try { why = JSON.parse(text).error || text; } catch (e) { /* not JSON: the text as it is */ }
      throw new ApiError(r.status, why + ' (' + r.status + ' ' + url + ')');
    }
    const v = await r.json();
    cache.set(url, v);
    return v;
  }
  // ---------- selection ----------
  // The processes and the source of states the server analyses the traces
  // for (parscope serve's --procs, --exclude-procs, --states-from): set by
  // the Processes, Exclude and States from fields, sent with every request
  // of a trace's data; empty, the analyses of the command line.
  let selection = { procs: '', exclude: '', states: '' };
  // used is the selection of the view drawn (none in compare, whose
  // differences are those of the command line's analyses).
  let used = selection;
  function selectionQuery(sel) {
    const q = [];
    if (sel.procs) q.push('procs=' + encodeURIComponent(sel.procs));
    if (sel.exclude) q.push('exclude=' + encodeURIComponent(sel.exclude));
    if (sel.states) q.push('states=' + encodeURIComponent(sel.states));
    return q.join('&');
  }
  // selectionText says a selection in words: "processes 0-7; states from mpi".
  function selectionText(sel) {
    const t = [];
    if (sel.procs) t.push('processes ' + sel.procs);
    if (sel.exclude) t.push('without processes ' + sel.exclude);
    if (sel.states) t.push('states from ' + sel.states);
    return t.join('; ');
  }
  function withSelection(url) {
    const q = selectionQuery(used);
    return q ? url + (url.includes('?') ? '&' : '?') + q : url;
  }
  const HEAVY = ['overview', 'states', 'entropy', 'pca', 'phasespace', 'occupancy', 'mentropy', 'comm', 'profile', 'pop', 'waitstates', 'critpath', 'counters', 'phases', 'probe'];
  function summaryOf(b, i) {
    const s = { index: i };
    for (const k of Object.keys(b)) if (!HEAVY.includes(k)) s[k] = b[k];
    return s;
  }
  const api = {
    traces() {
      return STATIC ? Promise.resolve(STATIC.traces.map(summaryOf)) : getJSON('api/traces');
    },
    // summary answers the summary of trace i for the selection.
    summary(i) {
      if (STATIC || !selectionQuery(used)) return Promise.resolve(sums[i]);
      return getJSON(withSelection('api/traces/' + i));
    },
    part(i, name) {
      if (STATIC) return Promise.resolve(STATIC.traces[i][name] === undefined ? null : STATIC.traces[i][name]);
      return getJSON(withSelection('api/traces/' + i + '/' + name));
    },
    overview(i, run, from, to, max) {
      if (STATIC) return Promise.resolve(queryOverview(STATIC.traces[i].overview.result, run, from, to, max));
      let q = 'api/traces/' + i + '/overview?run=' + run + '&max=' + max;
      if (to > from) q += '&from=' + Math.floor(from) + '&to=' + Math.ceil(to);
      return getJSON(withSelection(q));
    },
    // compare answers the server's comparison (package compare) of run ra
    // of trace i with run rb of trace j; null in an offline report, which
    // has no server to compute it.
    compare(i, j, ra, rb) {
      if (STATIC) return Promise.resolve(null);
      return getJSON('api/compare/' + i + '/' + j + '?run_a=' + ra + '&run_b=' + rb);
    },
  };
  // queryOverview picks windows from the pre-aggregated levels of the
  // overview's result as the server's overview.Result.Query does (for the
  // offline report).
  function queryOverview(ov, run, from, to, most) {
    const r = ov.runs.find(x => x.run === run);
    if (!r) return null;
    const l0 = r.levels[0];
    if (!(to > from)) { from = l0.begin_ns; to = l0.begin_ns + l0.windows * l0.width_ns + 1; }
    const span = l => {
      const a = Math.floor((from - l.begin_ns) / l.width_ns), b = Math.floor((to - l.begin_ns) / l.width_ns) + 1;
      return [Math.min(Math.max(a, 0), l.windows), Math.min(Math.max(b, 0), l.windows)];
    };
    let li = r.levels.length - 1;
    for (let i = 0; i < r.levels.length; i++) { const [a, b] = span(r.levels[i]); if (b - a <= most) { li = i; break; } }
    const l = r.levels[li], [a, b] = span(l), nk = ov.kinds.length;
    const starts = [];
    for (let w = a; w < b; w++) starts.push(l.begin_ns + Math.floor(w * l.width_ns));
    return { run, kinds: ov.kinds, level: li, width_ns: l.width_ns, starts_ns: starts, counts: l.counts.slice(a * nk, b * nk) };
  }

  // ---------- helpers ----------
  // Every string a trace supplies (state, region, event, mode, process,
  // file and trace names) is untrusted: the page shows it as text (el()
  // appends text nodes, never HTML), and an ECharts tooltip, which is HTML,
  // gets it through esc.
  const esc = v => echarts.format.encodeHTML(String(v));
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v; else if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
    }
    for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
    return e;
  }
  function card(parent, title, ...kids) { const c = el('div', { class: 'card' }, title ? el('h3', {}, title) : null, ...kids); parent.append(c); return c; }
  function chart(parent, cls, option) {
    const d = el('div', { class: 'chart ' + (cls || '') });
    parent.append(d);
    const c = echarts.init(d, null, { renderer: 'canvas' });
    // Every later setOption of the chart is followed by tidy (round ticks,
    // the plot below its legend), and so is every zoom and resize.
    const set = c.setOption.bind(c);
    c.setOption = (...args) => { set(...args); tidy(c, set); };
    c.on('datazoom', () => tidy(c, set));
    const resize = c.resize.bind(c);
    c.resize = (...args) => { resize(...args); tidy(c, set); };
    c.setOption(Object.assign({ animation: false, color: PALETTE }, option));
    charts.push(c);
    return c;
  }
  // niceStep is the least step of 1, 2 or 5 × 10^k that splits span into
  // at most n parts (as plot.NiceStep for the static figures).
  function niceStep(span, n) {
    const raw = span / Math.max(1, n);
    if (!(raw > 0) || !isFinite(raw)) return 1;
    const k = Math.floor(Math.log10(raw)), p = Math.pow(10, k);
    const m = [1, 2, 5, 10].find(x => x * p >= raw * (1 - 1e-9));
    return m * p;
  }
  // niceTicks lists the multiples of a nice step inside [lo, hi].
  function niceTicks(lo, hi, n) {
    const step = niceStep(hi - lo, n), digits = Math.max(0, -Math.floor(Math.log10(step)));
    const out = [];
    for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k++) out.push(Number((k * step).toFixed(digits)));
    return out;
  }
  // tidy lays out a 2D chart after its options are set: the plot area
  // starts below a top legend and the y axis' name above it (wrapped
  // legends, never paginated), and each value axis gets ticks at the
  // multiples of 1, 2 or 5 × 10^k (ECharts' own steps include 3 × 10^k,
  // and an axis that starts at its data's first value gets ticks there,
  // such as 0.1545).
  function tidy(c, set) {
    const m = c.getModel();
    if (!m || !m.getComponent('grid')) return;
    const grid = m.getComponent('grid');
    const legend = m.getComponent('legend');
    const ya = m.getComponent('yAxis');
    // A y axis' name at its end stands above the plot (below it for an
    // inverse axis): it needs about 24 pixels there.
    const yName = ya && ya.get('name') && ya.get('nameLocation') !== 'middle' && !(ya.get('inverse') && ya.get('nameLocation') !== 'start');
    let want = yName ? 28 : 0;
    if (legend && legend.get('show') !== false && legend.get('orient') !== 'vertical') {
      const view = c.getViewOfComponentModel(legend);
      const r = view && view.group.getBoundingRect().clone();
      if (r && r.height > 0) {
        r.applyTransform(view.group.getComputedTransform());
        want = Math.ceil(r.y + r.height + (yName ? 28 : 10));
      }
    }
    const top = grid.get('top');
    if (typeof top === 'number' && (top < want || (legend && Math.abs(top - want) > 2 && want > 0))) set({ grid: { top: want } });
    const patch = {};
    for (const dim of ['xAxis', 'yAxis']) {
      const list = [];
      m.eachComponent(dim, am => {
        const ax = am.axis;
        if (!ax || ax.type !== 'value') { list.push({}); return; }
        const [lo, hi] = ax.scale.getExtent();
        // About one tick per 90 pixels across, per 45 up.
        const px = Math.abs(ax.getExtent()[1] - ax.getExtent()[0]);
        const n = Math.max(2, Math.round(px / (dim === 'xAxis' ? 90 : 45)));
        const ticks = niceTicks(lo, hi, n);
        const old = am.get(['axisLabel', 'customValues']);
        list.push(old && old.join() === ticks.join() ? {} : { axisLabel: { customValues: ticks }, axisTick: { customValues: ticks } });
      });
      if (list.some(o => o.axisLabel)) patch[dim] = list;
    }
    if (Object.keys(patch).length) set(patch);
  }
  function table(headers, rows) {
    return el('table', {}, el('tr', {}, headers.map(h => el('th', {}, h))), rows.map(r => el('tr', {}, r.map(v => el('td', {}, v)))));
  }
  // fmt writes a number with thousands separators (51,895,935): whole
  // numbers in full, others to d (4) significant digits, and those of
  // 1,000 or more rounded to a whole number.
  function fmt(v, d) {
    if (v === null || v === undefined) return '-';
    // Counts too large for a double come as strings of digits.
    if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v).toLocaleString('en-US');
    if (typeof v !== 'number') return String(v);
    if (!isFinite(v)) return String(v);
    if (Number.isInteger(v) || Math.abs(v) >= Math.pow(10, (d || 4) - 1)) return Math.round(v).toLocaleString('en-US');
    if (Math.abs(v) < 1e-3) return v.toPrecision(d || 4);
    return Number(v.toPrecision(d || 4)).toLocaleString('en-US', { maximumFractionDigits: 20 });
  }
  function ns(v) {
    const a = Math.abs(v);
    if (a >= 1e9) return fmt(v / 1e9) + ' s';
    if (a >= 1e6) return fmt(v / 1e6) + ' ms';
    if (a >= 1e3) return fmt(v / 1e3) + ' µs';
    return fmt(v) + ' ns';
  }
  function bytes(v) {
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB']; let i = 0;
    while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i ? v.toFixed(1) : v) + ' ' + u[i];
  }
  function select(label, options, value, onchange) {
    const s = el('select', { onchange: () => onchange(s.value) }, options.map(([v, t]) => { const o = el('option', { value: v }, t); if (String(v) === String(value)) o.selected = true; return o; }));
    return el('label', {}, label + ' ', s);
  }
  function unavailable(parent, what, summary) {
    const why = summary && summary.skipped && summary.skipped[what];
    card(parent, null, el('p', { class: 'note' }, 'Not available for ' + summary.trace + (why ? ': ' + why + '.' : '.')));
  }

  // ---------- views ----------
  // Each view renders the trace t (its summary s) into a container; the
  // compare view renders two of them side by side.
  const VIEWS = [
    { key: 'overview', title: 'Overview', part: null, render: viewOverview },
    { key: 'phasespace', title: 'Phase space', part: 'phasespace', render: viewPhaseSpace },
    { key: 'pca', title: 'PCA', part: 'pca', render: viewPCA },
    { key: 'entropy', title: 'Entropy', part: 'entropy', skip: 'entropy', render: viewEntropy },
    { key: 'occupancy', title: 'Occupancy', part: 'occupancy', skip: 'occupancy', render: viewOccupancy },
    { key: 'comm', title: 'Communication', part: 'comm', skip: 'comm', render: viewComm },
    { key: 'phases', title: 'Phases', part: 'phases', skip: 'phases', render: viewPhases },
    { key: 'mentropy', title: 'Modified entropy', part: 'mentropy', skip: 'mentropy', render: viewMEntropy },
    { key: 'profile', title: 'Profile', part: 'profile', skip: 'profile', render: viewProfile },
    { key: 'pop', title: 'POP efficiency', part: 'pop', skip: 'pop', render: viewPOP },
    { key: 'waitstates', title: 'Wait states', part: 'waitstates', skip: 'waitstates', render: viewWaitStates },
    { key: 'critpath', title: 'Critical path', part: 'critpath', skip: 'critpath', render: viewCritPath },
    { key: 'counters', title: 'Counters', part: 'counters', skip: 'counters', render: viewCounters },
    { key: 'probe', title: 'Probe', part: 'probe', skip: 'probe', render: viewProbe },
  ];
  function has(s, v) { return !v.part || (s.ran || []).includes(v.skip || v.part); }

  async function viewOverview(c, t, s) {
    const kinds = Object.entries(s.records || {}).sort((a, b) => b[1] - a[1]);
    const total = kinds.reduce((a, [, n]) => a + n, 0);
    const info = [['trace', s.trace], ['source', (s.meta && s.meta.source) || '-'], ['runs', s.runs.length],
      ['records', fmt(total) + ' (' + kinds.map(([k, n]) => fmt(n) + ' ' + k).join(', ') + ')'],
      ['analyses', (s.ran || []).join(', ')]];
    if (s.procs) info.push(['processes analysed', s.procs.join(', ') + ' (the others count as absent)']);
    if (s.exclude_procs) info.push(['processes left out', s.exclude_procs.join(', ') + ' (they count as absent)']);
    for (const [k, why] of Object.entries(s.skipped || {})) info.push(['not run: ' + k, why]);
    const top = el('div', { class: 'row' });
    c.append(top);
    card(top, 'Trace', table(['', ''], info));
    card(top, 'Runs', table(['run', 'processes', 'records', 'start', 'end', 'span'],
      s.runs.map(r => [r.run + (r.name ? ' ' + r.name : ''), r.procs, fmt(r.records), ns(r.begin_ns), ns(r.end_ns), ns(r.end_ns - r.begin_ns)])));
    const act = card(c, 'Records over time');
    let run = s.runs.length ? s.runs[0].run : 0;
    const ctl = el('div', { class: 'controls' });
    act.append(ctl);
    let ch = chart(act, '', {});
    const note = el('p', { class: 'note' });
    act.append(note);
    async function draw(from, to) {
      const sl = await api.overview(t, run, from, to, 256);
      if (!sl || !ch) return;
      const nk = sl.kinds.length;
      const series = [];
      sl.kinds.forEach((k, j) => {
        const data = sl.starts_ns.map((st, w) => [st / 1e6, sl.counts[w * nk + j]]);
        if (data.some(d => d[1] > 0)) series.push({ name: k, type: 'bar', stack: 'k', barCategoryGap: 0, data, large: true });
      });
      if (!series.length && !(to > from)) {
        // Basic block vectors and other untimed records: nothing to draw
        // over time.
        charts = charts.filter(x => x !== ch);
        ch.getDom().remove();
        ch.dispose();
        ch = null;
        note.textContent = 'No record of run ' + run + ' carries a time (' + Object.keys(s.records || {}).join(', ') + ' records): nothing to draw over time.';
        return;
      }
      ch.setOption({
        tooltip: { trigger: 'axis' }, legend: { top: 0 }, grid: { left: 60, right: 20, top: 30, bottom: 70 },
        xAxis: { type: 'value', name: 'time (ms)', nameLocation: 'middle', nameGap: 26, min: 'dataMin', max: 'dataMax', axisLabel: { formatter: v => fmt(v) } },
        yAxis: { type: 'value', name: 'records / window', max: 'dataMax' },
        dataZoom: [{ type: 'inside', xAxisIndex: 0, filterMode: 'none' }, { type: 'slider', xAxisIndex: 0, bottom: 8, filterMode: 'none' }],
        series,
      }, { replaceMerge: ['series'] });
      note.textContent = 'level ' + sl.level + ': ' + sl.starts_ns.length + ' windows of ' + ns(sl.width_ns) + ' (pre-aggregated; zoom to refine)';
    }
    ctl.append(select('run', s.runs.map(r => [r.run, 'run ' + r.run]), run, v => { run = +v; draw(); }));
    let pending = null;
    ch.on('datazoom', () => {
      if (!ch) return;
      clearTimeout(pending);
      pending = setTimeout(() => {
        const opt = ch.getOption(), dz = opt.dataZoom[0];
        if (dz.startValue !== undefined) draw(dz.startValue * 1e6, dz.endValue * 1e6);
      }, 150);
    });
    await draw();
    if ((s.ran || []).includes('states')) {
      // The states part is the engine's envelope: {..., result: {block_names, runs: [{run, timeline}]}}.
      const stEnv = await api.part(t, 'states'), st = stEnv.result;
      const sr = st.runs.find(r => r.timeline);
      if (sr) {
        const box = card(c, '');
        derivedNote(box, stEnv);
        drawTimeline(box, sr, st.block_names);
      }
    }
  }

  // blockColour gives block ids colours in the order of ids: the palette,
  // then hues spread by the golden angle.
  function blockColour(k) {
    return k < PALETTE.length ? PALETTE[k] : 'hsl(' + Math.round((k * 137.508) % 360) + ', 60%, 45%)';
  }

  // drawTimeline draws the block of each process over time as intervals,
  // one per block change (every state, however short), or, for a run with
  // too many changes, the samples as intervals of the sampling period; the
  // legend below the chart lists the blocks by their whole names.
  function drawTimeline(box, sr, names) {
    const tl = sr.timeline, P = tl.blocks.length;
    const exact = Array.isArray(tl.change_ns) && tl.change_ns.length === P;
    const end = tl.end_ns !== undefined ? tl.end_ns : tl.begin_ns + tl.width_ns * tl.blocks[0].length;
    const data = [];
    if (exact) {
      tl.change_ns.forEach((ts, p) => (ts || []).forEach((t0, i) => data.push([p, (t0 - tl.begin_ns) / 1e6, ((i + 1 < ts.length ? ts[i + 1] : end) - tl.begin_ns) / 1e6, tl.change_block[p][i]])));
    } else {
      tl.blocks.forEach((row, p) => row.forEach((b, w) => data.push([p, w * tl.width_ns / 1e6, (w + 1) * tl.width_ns / 1e6, b])));
    }
    // Block -1: the process does not exist then (before its first record,
    // after a goroutine ended); nothing is drawn.
    const shown = data.filter(d => d[3] !== -1);
    const ids = [...new Set(shown.map(d => d[3]))].sort((x, y) => x - y);
    const colour = new Map(ids.map((id, k) => [id, blockColour(k)]));
    const name = id => String(id) + (names[id] ? ' ' + names[id] : '');
    box.querySelector('h3') || box.prepend(el('h3', {}, ''));
    box.querySelector('h3').textContent = 'Block of each process over time (run ' + sr.run + ', ' + fmt(sr.states) + ' states, ' + fmt(sr.distinct_classes) + ' distinct classes, ' +
      (exact ? 'every block change drawn' : 'sampled at ' + tl.blocks[0].length + ' instants: too many changes to draw each') + '; blank where a process does not exist)';
    const span = Math.max((end - tl.begin_ns) / 1e6, 1e-9);
    chart(box, P > 24 ? 'tall' : '', {
      tooltip: { formatter: q => esc('process ' + q.value[0] + ', ' + fmt(q.value[1]) + '-' + fmt(q.value[2]) + ' ms after the start: block ' + name(q.value[3])) },
      grid: { left: 60, right: 20, top: 10, bottom: 50 },
      xAxis: { type: 'value', name: 'time since the start of the run (ms)', nameLocation: 'middle', nameGap: 28, min: 0, max: span, axisLabel: { formatter: v => fmt(v) } },
      // Inverse: the name goes at the start, above the plot, clear of the x labels.
      yAxis: { type: 'category', data: tl.blocks.map((_, p) => p), name: 'process', inverse: true, nameLocation: 'start' },
      dataZoom: [{ type: 'inside', xAxisIndex: 0, filterMode: 'weakFilter' }],
      series: [{ type: 'custom', encode: { x: [1, 2], y: 0 }, data: shown, progressive: 0, renderItem: (params, api) => {
        const p = api.value(0), a = api.coord([api.value(1), p]), b = api.coord([api.value(2), p]), h = api.size([0, 1])[1] * 0.9;
        // At least one pixel wide: a state of a nanosecond still shows.
        return { type: 'rect', shape: { x: a[0], y: a[1] - h / 2, width: Math.max(1, b[0] - a[0]), height: h }, style: { fill: colour.get(api.value(3)) } };
      } }],
    });
    box.append(el('div', { class: 'legend' }, ids.map(id => el('span', {}, el('i', { style: 'background:' + colour.get(id) }), name(id)))));
  }

  async function viewPhaseSpace(c, t, s) {
    // The phasespace part is the engine's envelope: {..., options, result: {elevation, runs: [{run, procs, states, index, t_ns, points}]}}.
    const psEnv = await api.part(t, 'phasespace'), ps = psEnv.result;
    lead(c, fmt(ps.runs.reduce((a, r) => a + r.states, 0)) + ' parallel states of ' + ps.runs.length + ' run' + (ps.runs.length > 1 ? 's' : '') +
      ', each a point. States where the processes are in the same block lie on the z axis (the hypercube diagonal, lockstep); the farther a point from it, the more the processes disagree.');
    derivedNote(c, psEnv);
    const box = card(c, 'Phase space: the states projected on the hypercube diagonal (drag to rotate, scroll to zoom)');
    let colour = 'time';
    const ctl = el('div', { class: 'controls' });
    box.append(ctl);
    const ch = chart(box, 'tall', {});
    function draw() {
      let series, visualMap;
      if (colour === 'time') {
        const maxT = Math.max(1, ...ps.runs.map(r => r.t_ns.length ? r.t_ns[r.t_ns.length - 1] : 0));
        series = ps.runs.map(r => ({ name: 'run ' + r.run, type: 'scatter3D', symbolSize: 3, data: r.points.map((p, i) => [p[0], p[1], p[2], r.t_ns[i] / 1e6]) }));
        visualMap = { dimension: 3, min: 0, max: maxT / 1e6, text: ['late (ms)', 'early'], calculable: true, inRange: { color: ['#313695', '#4575b4', '#74add1', '#fdae61', '#f46d43', '#a50026'] }, right: 10, top: 'middle' };
      } else {
        series = ps.runs.map(r => ({ name: 'run ' + r.run, type: 'scatter3D', symbolSize: 3, data: r.points }));
        visualMap = undefined;
      }
      ch.setOption({
        tooltip: {}, legend: colour === 'run' ? { top: 0 } : { show: false },
        visualMap: visualMap ? [visualMap] : [],
        xAxis3D: { name: 'x', type: 'value' }, yAxis3D: { name: 'y', type: 'value' }, zAxis3D: { name: 'z (lockstep axis)', type: 'value' },
        grid3D: { viewControl: { autoRotate: false, distance: 220, alpha: 15, beta: 35 } },
        series,
      }, { replaceMerge: ['series', 'visualMap'] });
    }
    ctl.append(select('colour by', [['time', 'time'], ['run', 'run']], colour, v => { colour = v; draw(); }));
    draw();
    box.append(el('p', { class: 'note' }, ps.runs.map(r => 'run ' + r.run + ': ' + fmt(r.points.length) + ' of ' + fmt(r.states) + ' states shown').join('; ') + ' (evenly sampled; elevation ' + ps.elevation + ').'));
  }

  async function viewPCA(c, t, s) {
    // The pca part is the engine's envelope: {..., options, result: {method, procs, rows, components, v_shape_prominence, runs}}.
    const pEnv = await api.part(t, 'pca'), p = pEnv.result;
    derivedNote(c, pEnv);
    if (p.components.length) {
      const three = p.components.slice(0, 3).reduce((a, k) => a + k.explained, 0), vs = p.runs.reduce((a, r) => a + r.v_shapes, 0);
      lead(c, 'PC1 explains ' + pct(p.components[0].explained) + ' of the variance of the ' + fmt(p.rows) + ' states' + (p.components.length >= 3 ? ' (the first three components ' + pct(three) + ')' : '') +
        '. ' + (vs ? fmt(vs) + ' V shapes of PC1 in ' + p.runs.length + ' run' + (p.runs.length > 1 ? 's' : '') + ': each an iteration of a loop the processes ran in step.' : 'PC1 makes no V shape: no loop ran in step across the processes.'));
    }
    let cum = 0;
    card(c, 'Principal components of the state matrix (' + fmt(p.rows) + ' states, ' + p.procs + ' processes, ' + p.method + ' method)',
      table(['component', 'variance', 'explained', 'cumulative'], p.components.map((k, i) => { cum += k.explained; return ['PC' + (i + 1), fmt(k.variance), (100 * k.explained).toFixed(2) + '%', (100 * cum).toFixed(2) + '%']; })));
    card(c, 'V shapes of PC1 per run (rises of ' + fmt(p.v_shape_prominence) + ', one per iteration of a loop run in step)',
      table(['run', 'states', 'V shapes', 'states drawn'], p.runs.map(r => ['run ' + r.run, fmt(r.states), r.v_shapes, fmt(r.index.length)])));
    const row = el('div', { class: 'row' });
    c.append(row);
    chart(card(row, 'PC1 against state number'), '', {
      tooltip: { trigger: 'axis' }, legend: { top: 0 }, grid: { left: 60, right: 20, top: 30, bottom: 40 },
      xAxis: { type: 'value', name: 'state', nameLocation: 'middle', nameGap: 24, min: 'dataMin', max: 'dataMax' }, yAxis: { type: 'value', name: 'PC1', min: 'dataMin', max: 'dataMax' },
      series: p.runs.map(r => ({ name: 'run ' + r.run, type: 'line', showSymbol: false, data: r.index.map((x, i) => [x, r.scores[0][i]]) })),
    });
    if (p.components.length >= 2) {
      chart(card(row, 'PC1 against PC2'), '', {
        tooltip: {}, legend: { top: 0 }, grid: { left: 60, right: 20, top: 30, bottom: 40 },
        // The axes at the edges: at zero the y axis' name stood in the middle, under the legend.
        xAxis: { type: 'value', name: 'PC1', nameLocation: 'middle', nameGap: 24, min: 'dataMin', max: 'dataMax', axisLine: { onZero: false } },
        yAxis: { type: 'value', name: 'PC2', min: 'dataMin', max: 'dataMax', axisLine: { onZero: false } },
        series: p.runs.map(r => ({ name: 'run ' + r.run, type: 'scatter', symbolSize: (v, prm) => 2 + 6 * prm.dataIndex / Math.max(1, r.index.length - 1), data: r.index.map((_, i) => [r.scores[0][i], r.scores[1][i]]) })),
      });
    }
    if (p.components.length >= 3) {
      chart(card(c, 'PC1, PC2, PC3 (drag to rotate)'), 'tall', {
        tooltip: {}, legend: { top: 0 },
        xAxis3D: { name: 'PC1', type: 'value' }, yAxis3D: { name: 'PC2', type: 'value' }, zAxis3D: { name: 'PC3', type: 'value' },
        grid3D: { viewControl: { distance: 220 } },
        series: p.runs.map(r => ({ name: 'run ' + r.run, type: 'scatter3D', symbolSize: 3, data: r.index.map((_, i) => [r.scores[0][i], r.scores[1][i], r.scores[2][i]]) })),
      });
    }
  }

  async function viewEntropy(c, t, s) {
    // The entropy part is the engine's envelope: {..., options, result: {runs, all, window_ns, series, subsets}}.
    const eEnv = await api.part(t, 'entropy'), e = eEnv.result;
    derivedNote(c, eEnv);
    if (e.runs.length) {
      const most = e.runs.reduce((a, b) => b.histogram_entropy_mean > a.histogram_entropy_mean ? b : a);
      const max = Math.log2(Math.max(2, Math.min(most.procs, most.blocks)));
      let text = (e.runs.length > 1 ? 'Run ' + most.run + ' is the least ordered of ' + e.runs.length + ' runs' : 'Run ' + most.run) + ': in its average parallel state the ' + most.procs +
        ' processes spread over the blocks with ' + fmt(most.histogram_entropy_mean) + ' bits of histogram entropy, of at most ' + fmt(max) + ' (0: every process in one block, in step; the maximum: as spread as can be), over ' +
        fmt(most.rows) + ' states in ' + fmt(most.distinct_classes) + ' distinct classes.';
      const sub = e.subsets, first = sub && sub.results[0];
      if (first) text += Math.abs(first.score) >= 3
        ? ' Processes ' + first.procs.join(', ') + ' stand out among the windows of ' + sub.k + ' adjacent processes (' + sub.measure + ' ' + fmt(first.value) + ' bits, robust z-score ' + first.score.toFixed(1) + '): look there for a process that starves or runs ahead.'
        : ' Among the windows of ' + sub.k + ' adjacent processes, processes ' + first.procs.join(', ') + ' stand farthest from the others (' + sub.measure + ' ' + fmt(first.value) + ' bits, robust z-score ' + first.score.toFixed(1) + ', below the 3 of a clear outlier).';
      lead(c, text);
    }
    const rows = e.runs.map(r => ['run ' + r.run, r.procs, r.blocks, fmt(r.rows), fmt(r.comb_entropy), fmt(r.comb_entropy_distinct), fmt(r.distinct_classes), fmt(r.surprisal_mean), fmt(r.histogram_entropy_mean), fmt(r.empirical_entropy)]);
    if (e.all) { const r = e.all; rows.push(['all', r.procs, r.blocks, fmt(r.rows), fmt(r.comb_entropy), fmt(r.comb_entropy_distinct), fmt(r.distinct_classes), fmt(r.surprisal_mean), fmt(r.histogram_entropy_mean), fmt(r.empirical_entropy)]); }
    card(c, 'Entropy of the parallel execution (bits)', table(['run', 'P', 'N', 'states', 'comb', 'comb distinct', 'classes', 'surprisal mean', 'histogram mean', 'empirical'], rows));
    const runs = [...new Set((e.series || []).map(p => p.run))];
    if (e.series) chart(card(c, 'Histogram entropy per window of ' + ns(e.window_ns)), '', {
      tooltip: { trigger: 'axis' }, legend: { top: 0 }, grid: { left: 60, right: 20, top: 30, bottom: 40 },
      xAxis: { type: 'value', name: 'time (ms)', nameLocation: 'middle', nameGap: 24, min: 'dataMin', max: 'dataMax' }, yAxis: { type: 'value', name: 'bits', max: 'dataMax' },
      series: runs.map(r => ({ name: 'run ' + r, type: 'line', showSymbol: false, data: e.series.filter(p => p.run === r).map(p => [p.start_ns / 1e6, p.entropy_bits]) })),
    });
    if (e.subsets) {
      const sub = e.subsets, top = sub.results.slice(0, 40);
      const box = card(c, 'Subsets of ' + sub.k + ' adjacent processes (run ' + sub.run + ') ranked by how far ' + sub.measure + ' stands from the others');
      chart(box, '', {
        tooltip: { trigger: 'axis' }, grid: { left: 60, right: 20, top: 20, bottom: 60 },
        xAxis: { type: 'category', data: top.map(r => r.procs.join(',')), axisLabel: { rotate: 45 } }, yAxis: { type: 'value', name: 'robust z-score' },
        series: [{ type: 'bar', data: top.map(r => r.score), itemStyle: { color: '#d62728' } }],
      });
      box.append(table(['rank', 'processes', sub.measure + ' (bits)', 'score'], top.slice(0, 10).map((r, i) => [i + 1, r.procs.join(','), fmt(r.value, 6), Math.abs(r.score) >= 1000 ? fmt(r.score) : r.score.toFixed(2)])));
    }
  }

  async function viewOccupancy(c, t, s) {
    // The occupancy part is the engine's envelope: {schema_version, analysis, trace, options, result: {runs}}.
    const occEnv = await api.part(t, 'occupancy'), occ = occEnv.result.runs;
    derivedNote(c, occEnv);
    let idx = 0;
    const ctl = el('div', { class: 'controls' });
    c.append(ctl);
    const body = el('div');
    c.append(body);
    function draw() {
      charts = charts.filter(ch => { if (body.contains(ch.getDom())) { ch.dispose(); return false; } return true; });
      body.replaceChildren();
      const o = occ[idx];
      if (o.mean.length) {
        const big = o.mean.reduce((a, b) => b.share > a.share ? b : a), span = Math.max(1, o.end_ns - o.begin_ns);
        const topRow = o.table.reduce((a, b) => (!a || b.occupancy_ns > a.occupancy_ns) ? b : a, null);
        lead(body, 'In run ' + o.run + ', ' + pct(big.share) + ' of the process time is spent in ' + big.mode + ' (on average ' + fmt(big.share * o.procs) + ' of its ' + o.procs + ' processes at a time)' +
          (topRow ? '; the most common system state, ' + (o.modes.map((m, j) => topRow.counts[j] ? topRow.counts[j] + ' in ' + m : '').filter(x => x).join(', ') || 'no process in any mode') + ', holds ' + pct(topRow.occupancy_ns / span) + ' of the time.' : '.'));
      }
      card(body, 'Run ' + o.run + ': ' + o.procs + ' processes, ' + o.modes.length + ' modes, ' + ns(o.end_ns - o.begin_ns),
        el('p', { class: 'note' }, fmt(o.state_records) + ' state records → ' + fmt(o.microstates) + ' microstates → ' + fmt(o.macrostate_rows) + ' macrostate rows → ' +
          fmt(o.observed_macrostates) + ' observed of ' + fmt(o.possible_macrostates) + ' possible macrostates' + (o.start_mode ? '; before its first state a process is in ' + o.start_mode : '') + '.'));
      const row = el('div', { class: 'row' });
      body.append(row);
      const cols = o.modes.some(m => m.length > 12 || /\s/.test(m)) ? o.modes.map((_, j) => 'A' + (j + 1)) : o.modes;
      card(row, 'Mean node occupancy (T5)', table(['column', 'mode', 'from table', 'from local counters', 'share'], o.mean.map((m, j) => [cols[j], m.mode, ns(m.global_ns), ns(m.local_ns), (100 * m.share).toFixed(1) + '%'])));
      const top = o.table.slice().sort((a, b) => b.occupancy_ns - a.occupancy_ns).slice(0, 25);
      const t3 = card(row, 'Occupancy table (T3), largest first (' + top.length + ' of ' + fmt(o.observed_macrostates) + ')',
        table([...cols, 'occupancy', 'share'], top.map(m => [...m.counts, ns(m.occupancy_ns), (100 * m.occupancy_ns / Math.max(1, o.end_ns - o.begin_ns)).toFixed(2) + '%'])));
      // A table of many modes does not fit beside the means: it takes a
      // line of its own instead of being cut at the card's edge.
      if (cols.length > 5) t3.classList.add('wide');
      chart(card(body, 'Processes per mode over time'), '', {
        // Filled squares: the series are areas, not lines.
        tooltip: { trigger: 'axis' }, legend: { top: 0, icon: 'rect' }, grid: { left: 60, right: 20, top: 30, bottom: 40 },
        xAxis: { type: 'value', name: 'time (ms)', nameLocation: 'middle', nameGap: 24, min: 'dataMin', max: 'dataMax', axisLabel: { formatter: v => fmt(v) } }, yAxis: { type: 'value', name: 'processes', max: o.procs },
        series: o.modes.map((m, j) => ({ name: m, type: 'line', stack: 'm', areaStyle: {}, showSymbol: false, lineStyle: { width: 0 }, data: (o.processes_per_window || []).map((w, i) => [(o.begin_ns + (i + 0.5) * o.window_ns) / 1e6, w[j]]) })),
      });
      chart(card(body, 'Occupancy histograms: fraction of the time with k processes in each mode'), '', {
        tooltip: { trigger: 'axis' }, legend: { top: 0 }, grid: { left: 60, right: 20, top: 30, bottom: 40 },
        xAxis: { type: 'category', name: 'k', data: o.histogram[0].map((_, k) => k) }, yAxis: { type: 'value', name: 'fraction of time', max: 'dataMax' },
        series: o.modes.map((m, j) => ({ name: m, type: 'bar', data: o.histogram[j] })),
      });
    }
    ctl.append(select('run', occ.map((o, i) => [i, 'run ' + o.run]), idx, v => { idx = +v; draw(); }));
    draw();
  }

  // lead starts a view with sentences computed from its result: what the
  // analysis found, in words.
  function lead(c, text) { c.append(el('p', { class: 'lead' }, text)); }

  // derivedNote says, under a state analysis, where its states came from
  // when they were derived from the trace's regions (the envelope's
  // states_from; `--states-from` of analyze and serve).
  function derivedNote(c, env) {
    const from = env && env.states_from;
    if (from === 'regions') c.append(el('p', { class: 'note' }, 'States derived from the regions: each process is in the innermost region open on it, or outside any region; it exists from its first record to its last.'));
    else if (from === 'mpi') c.append(el('p', { class: 'note' }, 'States derived from the regions: each process is in MPI while an MPI call is open on it, in computation otherwise; it exists from its first record to its last.'));
  }
  // pct writes a share (0..1) as a percentage to one decimal.
  const pct = v => (v === null || v === undefined || !isFinite(v)) ? '-' : (100 * v).toFixed(1) + '%';
  // runPicker adds a run selector to c when there are several runs and
  // calls draw(i) into a fresh body, disposing of the charts it drew.
  function runPicker(c, runs, draw) {
    const ctl = el('div', { class: 'controls' });
    c.append(ctl);
    const body = el('div');
    c.append(body);
    let idx = 0;
    const redraw = () => {
      charts = charts.filter(ch => { if (body.contains(ch.getDom())) { ch.dispose(); return false; } return true; });
      body.replaceChildren();
      draw(body, runs[idx]);
    };
    if (runs.length > 1) ctl.append(select('run', runs.map((r, i) => [i, 'run ' + r.run]), idx, v => { idx = +v; redraw(); }));
    redraw();
  }

  async function viewProfile(c, t, s) {
    // The profile part is the engine's envelope, result: {of, runs: [{run, procs, total_ns, outside_ns, flat, tree, ...}]}.
    const pr = (await api.part(t, 'profile')).result;
    const what = pr.of === 'states' ? 'state' : 'region';
    if (!pr.runs.length) { card(c, null, el('p', { class: 'note' }, 'No run of ' + s.trace + ' has a ' + what + ' record.')); return; }
    runPicker(c, pr.runs, (body, r) => {
      const top = r.flat.slice().sort((a, b) => b.exclusive_ns - a.exclusive_ns)[0];
      body.append(el('p', { class: 'lead' }, top
        ? top.name + ' holds ' + pct(top.exclusive_share) + ' of the time of run ' + r.run + ' (exclusive time ' + ns(top.exclusive_ns) + ' summed over ' + r.procs + ' processes); ' +
          pct(r.outside_ns / Math.max(1, r.total_ns)) + ' of the time is outside every ' + what + '.'
        : 'Run ' + r.run + ' has no ' + what + ' with time.'));
      card(body, 'Flat profile of the ' + what + 's by exclusive time (' + r.flat.length + ' shown' + (r.flat_omitted ? ', ' + fmt(r.flat_omitted) + ' more left out' : '') + '; time summed over processes, spread over them)',
        table([what, 'exclusive', 'share', 'inclusive', 'visits', 'processes', 'exclusive min / mean / max per process', 'inclusive min / mean / max per process'],
          r.flat.map(e => [e.name, ns(e.exclusive_ns), pct(e.exclusive_share), ns(e.inclusive_ns), fmt(e.visits), e.procs,
            ns(e.exclusive.min_ns) + ' (p' + e.exclusive.min_proc + ') / ' + ns(e.exclusive.mean_ns) + ' / ' + ns(e.exclusive.max_ns) + ' (p' + e.exclusive.max_proc + ')',
            ns(e.inclusive.min_ns) + ' / ' + ns(e.inclusive.mean_ns) + ' / ' + ns(e.inclusive.max_ns)])));
      const box = card(body, 'Call tree as an icicle: each bar is a call path, as wide as its inclusive time summed over processes, its callees below it' +
        (r.tree_omitted ? ' (' + fmt(r.tree_omitted) + ' small nodes left out)' : ''));
      if (!r.tree.length) { box.append(el('p', { class: 'note' }, 'The call tree of run ' + r.run + ' is empty.')); return; }
      // Lay the nodes out: the roots side by side, each node's children
      // side by side from its left edge (parents come before children).
      const x0 = new Array(r.tree.length).fill(0), next = new Array(r.tree.length).fill(0);
      let rootX = 0, depth = 0;
      for (const n of r.tree) {
        if (n.parent < 0) { x0[n.id] = rootX; rootX += n.inclusive_ns; } else { x0[n.id] = next[n.parent]; next[n.parent] += n.inclusive_ns; }
        next[n.id] = x0[n.id];
        depth = Math.max(depth, n.depth);
      }
      const nodes = new Map(r.tree.map(n => [n.id, n]));
      const data = r.tree.map(n => [x0[n.id] / 1e6, (x0[n.id] + n.inclusive_ns) / 1e6, n.depth, n.id]);
      const colour = new Map();
      const path = id => { const out = []; for (let n = nodes.get(id); n; n = nodes.get(n.parent)) out.unshift(n.name); return out.join(' → '); };
      chart(box, depth > 8 ? 'tall' : '', {
        tooltip: { formatter: q => { const n = nodes.get(q.value[3]); return esc(path(n.id)) + '<br>inclusive ' + esc(ns(n.inclusive_ns)) + ', exclusive ' + esc(ns(n.exclusive_ns)) + '<br>' + esc(fmt(n.visits)) + ' visits on ' + n.procs + ' processes'; } },
        grid: { left: 60, right: 20, top: 30, bottom: 50 },
        xAxis: { type: 'value', name: 'inclusive time summed over processes (ms)', nameLocation: 'middle', nameGap: 28, min: 0, max: rootX / 1e6, axisLabel: { formatter: v => fmt(v) } },
        yAxis: { type: 'category', name: 'depth', inverse: true, nameLocation: 'start', data: Array.from({ length: depth + 1 }, (_, d) => d) },
        dataZoom: [{ type: 'inside', xAxisIndex: 0, filterMode: 'weakFilter' }],
        series: [{ type: 'custom', encode: { x: [0, 1], y: 2 }, data, progressive: 0, renderItem: (params, a) => {
          const n = nodes.get(a.value(3)), p = a.coord([a.value(0), a.value(2)]), q = a.coord([a.value(1), a.value(2)]), h = a.size([0, 1])[1] * 0.92;
          if (!colour.has(n.name)) colour.set(n.name, blockColour(colour.size));
          const w = Math.max(1, q[0] - p[0]);
          return { type: 'rect', shape: { x: p[0], y: p[1] - h / 2, width: w, height: h }, style: { fill: colour.get(n.name), stroke: '#fff', lineWidth: 0.5 },
            textContent: { style: { text: w > 40 ? n.name : '', fill: '#fff', fontSize: 11, width: w - 4, overflow: 'truncate' } }, textConfig: { position: 'inside' } };
        } }],
      });
    });
  }

  async function viewPOP(c, t, s) {
    // The pop part is the engine's envelope, result: {of, runs: [{run, procs, runtime_ns, load_balance, communication_efficiency, parallel_efficiency, ideal, processes}]}.
    const pp = (await api.part(t, 'pop')).result;
    if (!pp.runs.length) { card(c, null, el('p', { class: 'note' }, 'No run of ' + s.trace + ' has a region or state record.')); return; }
    const r0 = pp.runs[0];
    c.append(el('p', { class: 'lead' }, 'Parallel efficiency ' + pct(r0.parallel_efficiency) + (pp.runs.length > 1 ? ' in run ' + r0.run : '') + ': load balance ' + pct(r0.load_balance) +
      ', communication ' + pct(r0.communication_efficiency) + (r0.ideal ? ' (serialisation ' + pct(r0.ideal.serialization_efficiency) + ', transfer ' + pct(r0.ideal.transfer_efficiency) + ')' : '') + '.'));
    card(c, 'POP efficiencies per run (parallel efficiency = load balance × communication efficiency; communication = serialisation × transfer; useful time is outside the ' + (pp.of === 'states' ? 'states' : 'regions') + ' named like MPI)',
      table(['run', 'processes', 'runtime', 'useful mean', 'useful max', 'parallel efficiency', 'load balance', 'communication', 'serialisation', 'transfer', 'ideal runtime'],
        pp.runs.map(r => ['run ' + r.run, r.procs, ns(r.runtime_ns), ns(r.useful_mean_ns), ns(r.useful_max_ns) + ' (p' + r.useful_max_proc + ')', pct(r.parallel_efficiency), pct(r.load_balance),
          pct(r.communication_efficiency), r.ideal ? pct(r.ideal.serialization_efficiency) : '-', r.ideal ? pct(r.ideal.transfer_efficiency) : '-', r.ideal ? ns(r.ideal.runtime_ns) : '-'])));
    const metrics = [['parallel', r => r.parallel_efficiency], ['load balance', r => r.load_balance], ['communication', r => r.communication_efficiency],
      ['serialisation', r => r.ideal ? r.ideal.serialization_efficiency : null], ['transfer', r => r.ideal ? r.ideal.transfer_efficiency : null]];
    const shown = metrics.filter(([, f]) => pp.runs.some(r => f(r) !== null && f(r) !== undefined));
    chart(card(c, 'Efficiencies (%)'), '', {
      tooltip: { trigger: 'axis', valueFormatter: v => (v === null || v === undefined) ? '-' : fmt(v) + '%' }, legend: { top: 0 }, grid: { left: 60, right: 20, top: 30, bottom: 30 },
      xAxis: { type: 'category', data: shown.map(m => m[0]) }, yAxis: { type: 'value', name: 'efficiency (%)', min: 0, max: 100 },
      series: pp.runs.map(r => ({ name: 'run ' + r.run, type: 'bar', data: shown.map(([, f]) => { const v = f(r); return v === null || v === undefined ? null : Number((100 * v).toFixed(2)); }) })),
    });
    const procs = r0.processes.slice().sort((a, b) => a.useful_ns - b.useful_ns);
    card(c, 'Useful time per process of run ' + r0.run + ', least first (' + Math.min(procs.length, 50) + ' of ' + procs.length + ')',
      table(['process', 'elapsed', 'useful', 'in MPI', 'useful share'], procs.slice(0, 50).map(p => [p.proc, ns(p.elapsed_ns), ns(p.useful_ns), ns(p.mpi_ns), pct(p.useful_share)])));
  }

  async function viewWaitStates(c, t, s) {
    // The waitstates part is the engine's envelope, result: {runs: [{run, mpi_ns, wait_ns, patterns, by_process, sites, ...}]}.
    const ws = (await api.part(t, 'waitstates')).result;
    if (!ws.runs.length) { card(c, null, el('p', { class: 'note' }, 'No run of ' + s.trace + ' has a message or collective.')); return; }
    const label = p => p.replace(/_/g, ' ');
    runPicker(c, ws.runs, (body, r) => {
      const top = r.patterns.slice().sort((a, b) => b.wait_ns - a.wait_ns)[0];
      body.append(el('p', { class: 'lead' }, r.wait_ns > 0 && top
        ? 'Run ' + r.run + ' waits ' + ns(r.wait_ns) + ', ' + pct(r.wait_ns / Math.max(1, r.mpi_ns)) + ' of its ' + ns(r.mpi_ns) + ' in MPI; ' + label(top.pattern) + ' is the largest pattern with ' + pct(top.wait_ns / r.wait_ns) + ' of the wait.'
        : 'Run ' + r.run + ' has no wait state: ' + fmt(r.messages) + ' messages and ' + fmt(r.collectives) + ' collectives, ' + ns(r.mpi_ns) + ' in MPI.'));
      const clk = r.clock;
      if (clk && (clk.violations > 0 || clk.correction)) {
        const cc = clk.correction;
        body.append(el('p', { class: 'note' }, (clk.violations > 0
          ? fmt(clk.violations) + ' messages were received before they were sent (clock condition violated, by up to ' + ns(clk.max_ns) + '; ' +
            clk.pairs.slice(0, 10).map(p => p.sender + '→' + p.receiver + ': ' + fmt(p.violations)).join(', ') + (clk.pairs.length > 10 ? ', …' : '') + '). '
          : '') + (!cc ? 'Waits across these clocks are off by their disagreement (parscope waitstates --clock-correction).'
          : !cc.applied ? 'Clock correction not applied: no constant offsets satisfy every message.'
          : 'Clock correction (least latency ' + ns(cc.min_latency_ns) + '): ' + (cc.offsets.length ? cc.offsets.slice(0, 10).map(o => 'process ' + o.proc + ' +' + ns(o.offset_ns)).join(', ') + (cc.offsets.length > 10 ? ', …' : '') : 'no process moved') + '.')));
      }
      const row = el('div', { class: 'row' });
      body.append(row);
      // Sub-patterns (late sender, wrong order…) are parts of their parent's time: listed indented under it, not in the sums.
      const subs = r.sub_patterns || [];
      const withSubs = (p, depth) => [[(depth ? '\u00a0\u00a0'.repeat(depth) + '↳ ' : '') + label(p.pattern), ns(p.wait_ns), fmt(p.calls), pct(p.wait_ns / Math.max(1, r.wait_ns))],
        ...subs.filter(x => x.parent === p.pattern).flatMap(x => withSubs(x, depth + 1))];
      card(row, 'Wait per pattern', table(['pattern', 'wait', 'calls', 'share of the wait'], r.patterns.flatMap(p => withSubs(p, 0))));
      chart(card(row, 'Wait per pattern (ms)'), '', {
        tooltip: { trigger: 'axis', valueFormatter: v => fmt(v) + ' ms' }, grid: { left: 60, right: 20, top: 30, bottom: 40 },
        xAxis: { type: 'category', data: r.patterns.map(p => label(p.pattern)), axisLabel: { interval: 0, rotate: 20 } }, yAxis: { type: 'value', name: 'wait (ms)' },
        series: [{ name: 'wait', type: 'bar', data: r.patterns.map(p => p.wait_ns / 1e6) }],
      });
      const procs = r.by_process.slice().sort((a, b) => b.wait_ns - a.wait_ns).slice(0, 30);
      const named = r.patterns.map(p => p.pattern);
      card(body, 'Wait per process, most first (' + procs.length + ' of ' + r.by_process.length + ')',
        table(['process', 'in MPI', 'wait', ...named.map(label)], procs.map(p => [p.proc, ns(p.mpi_ns), ns(p.wait_ns),
          ...named.map(n => { const a = (p.patterns || []).find(x => x.pattern === n); return a ? ns(a.wait_ns) : '-'; })])));
      card(body, 'Wait per call site, most first (' + r.sites.length + ' shown' + (r.sites_omitted ? ', ' + fmt(r.sites_omitted) + ' more left out' : '') + ')',
        r.sites.length ? table(['pattern', 'call', 'in region', 'wait', 'calls'], r.sites.map(x => [label(x.pattern), x.call, x.region_name || '-', ns(x.wait_ns), fmt(x.calls)]))
          : el('p', { class: 'note' }, 'No call site waited.'));
    });
  }

  async function viewCritPath(c, t, s) {
    // The critpath part is the engine's envelope, result: {runs: [{run, begin_ns, end_ns, length_ns, end_proc, computation_ns, communication_ns, message_jumps, collective_jumps, segments, segments_total, regions, processes, uncomputed}]}.
    const cp = (await api.part(t, 'critpath')).result;
    if (!cp.runs.length) { card(c, null, el('p', { class: 'note' }, 'No run of ' + s.trace + ' has a record the critical path can follow.')); return; }
    runPicker(c, cp.runs, (body, r) => {
      const top = r.regions.filter(g => g.region !== -2)[0];
      body.append(el('p', { class: 'lead' }, 'The critical path of run ' + r.run + ' is ' + ns(r.length_ns) + ' long and ends on process ' + r.end_proc + ': ' +
        pct(r.computation_ns / Math.max(1, r.length_ns)) + ' computation, ' + pct(r.communication_ns / Math.max(1, r.length_ns)) + ' communication, with ' +
        fmt(r.message_jumps) + ' message and ' + fmt(r.collective_jumps) + ' collective jumps between processes' +
        (top ? '; ' + (top.name || '(outside every region)') + ' holds ' + fmt(top.share_pct) + '% of it.' : '.')));
      const kinds = new Map();
      const colourOf = g => { const k = g.kind === 'communication' ? '(communication)' : (g.region_name || '(no region)'); if (!kinds.has(k)) kinds.set(k, k === '(communication)' ? '#999' : blockColour(kinds.size)); return kinds.get(k); };
      const procs = [...new Set(r.segments.map(g => g.proc))].sort((a, b) => a - b);
      const row = new Map(procs.map((p, i) => [p, i]));
      chart(card(body, 'The path across the processes (' + r.segments.length + ' of ' + fmt(r.segments_total) + ' segments' + (r.segments.length < r.segments_total ? ', the first ones' : '') + '; grey: communication)'), procs.length > 12 ? 'tall' : '', {
        tooltip: { formatter: q => { const g = r.segments[q.value[3]]; return esc('process ' + g.proc + ', ' + g.kind + (g.region_name ? ' in ' + g.region_name : '') + (g.peer >= 0 && g.kind === 'communication' ? ' from process ' + g.peer : '')) + '<br>' + esc(ns(g.from_ns - r.begin_ns) + ' to ' + ns(g.to_ns - r.begin_ns) + ' (' + ns(g.to_ns - g.from_ns) + ')'); } },
        grid: { left: 70, right: 20, top: 10, bottom: 50 },
        xAxis: { type: 'value', name: 'time since the run began (ms)', nameLocation: 'middle', nameGap: 28, min: 0, max: (r.end_ns - r.begin_ns) / 1e6, axisLabel: { formatter: v => fmt(v) } },
        yAxis: { type: 'category', name: 'process', inverse: true, data: procs },
        dataZoom: [{ type: 'inside', xAxisIndex: 0, filterMode: 'weakFilter' }],
        series: [{ type: 'custom', encode: { x: [0, 1], y: 2 }, progressive: 0, data: r.segments.map((g, i) => [(g.from_ns - r.begin_ns) / 1e6, (g.to_ns - r.begin_ns) / 1e6, row.get(g.proc), i]), renderItem: (params, a) => {
          const g = r.segments[a.value(3)], p = a.coord([a.value(0), a.value(2)]), q = a.coord([a.value(1), a.value(2)]), h = a.size([0, 1])[1] * 0.6;
          return { type: 'rect', shape: { x: p[0], y: p[1] - h / 2, width: Math.max(1, q[0] - p[0]), height: h }, style: { fill: colourOf(g) } };
        } }],
      });
      const two = el('div', { class: 'row' });
      body.append(two);
      card(two, 'Regions on the path, longest first (' + r.regions.length + (r.regions_omitted ? ' shown, ' + fmt(r.regions_omitted) + ' more left out' : '') + ')',
        table(['region', 'time on the path', 'share'], r.regions.map(g => [g.region === -2 ? '(communication)' : (g.name || '(no region)'), ns(g.ns), fmt(g.share_pct) + '%'])));
      card(two, 'Processes on the path (computation)', table(['process', 'time on the path', 'share'], r.processes.map(p => [p.proc, ns(p.ns), fmt(p.share_pct) + '%'])));
    });
  }

  async function viewCounters(c, t, s) {
    // The counters part is the engine's envelope, result: {runs: [{run, begin_ns, end_ns, window_ns, counters: [{id, name, unit, samples, procs, min, mean, max, by_process, series}]}]}.
    const cs = (await api.part(t, 'counters')).result;
    if (!cs.runs.length) { card(c, null, el('p', { class: 'note' }, 'No run of ' + s.trace + ' has a counter sample.')); return; }
    // A counter the trace does not name is named by its id: "counter 42001033" reads as "counter #42001033".
    const label = k => /^counter \d+$/.test(k.name) ? k.name.replace(/ (\d+)$/, ' #$1') : k.name;
    runPicker(c, cs.runs, (body, r) => {
      const total = r.counters.reduce((a, k) => a + k.samples, 0);
      const varying = r.counters.filter(k => k.max > k.min);
      const widest = varying.reduce((a, k) => (!a || (k.max - k.min) / Math.max(Math.abs(k.mean), 1e-300) > (a.max - a.min) / Math.max(Math.abs(a.mean), 1e-300)) ? k : a, null);
      lead(body, 'Run ' + r.run + ' holds ' + fmt(total) + ' samples of ' + r.counters.length + ' counter' + (r.counters.length > 1 ? 's' : '') + ' over ' + ns(r.end_ns - r.begin_ns) + '; ' +
        (widest ? fmt(varying.length) + ' of them vary, ' + label(widest) + ' the most relative to its mean (' + fmt(widest.min) + ' to ' + fmt(widest.max) + (widest.unit && widest.unit !== '#' ? ' ' + widest.unit : '') + ').' : 'none of them varies.'));
      const ctl = el('div', { class: 'controls' });
      body.append(ctl);
      const box = card(body, '');
      let idx = r.counters.indexOf(widest || r.counters[0]);
      const draw = () => {
        charts = charts.filter(ch => { if (box.contains(ch.getDom())) { ch.dispose(); return false; } return true; });
        box.replaceChildren();
        const k = r.counters[idx], unit = k.unit && k.unit !== '#' ? ' (' + k.unit + ')' : '';
        box.append(el('h3', {}, label(k) + unit + ': ' + fmt(k.samples) + ' samples on ' + k.procs + ' process' + (k.procs > 1 ? 'es' : '') + ', windows of ' + ns(r.window_ns)));
        const pts = k.series.map(p => [(p.t_ns - r.begin_ns) / 1e6, p.min, p.mean, p.max]);
        chart(box, '', {
          tooltip: { trigger: 'axis', valueFormatter: v => fmt(v) }, legend: { top: 0 }, grid: { left: 80, right: 20, top: 30, bottom: 40 },
          xAxis: { type: 'value', name: 'time since the run began (ms)', nameLocation: 'middle', nameGap: 24, min: 'dataMin', max: 'dataMax', axisLabel: { formatter: v => fmt(v) } },
          yAxis: { type: 'value', name: label(k).length > 30 ? 'value' + unit : label(k) + unit, scale: true, axisLabel: { formatter: v => fmt(v) } },
          series: [{ name: 'max', type: 'line', showSymbol: false, lineStyle: { width: 1 }, data: pts.map(p => [p[0], p[3]]) },
            { name: 'mean', type: 'line', showSymbol: pts.length < 60, lineStyle: { width: 2 }, data: pts.map(p => [p[0], p[2]]) },
            { name: 'min', type: 'line', showSymbol: false, lineStyle: { width: 1 }, data: pts.map(p => [p[0], p[1]]) }],
        });
      };
      ctl.append(select('counter', r.counters.map((k, i) => [i, label(k)]), idx, v => { idx = +v; draw(); }));
      draw();
      card(body, 'Every counter of run ' + r.run, table(['counter', 'unit', 'samples', 'processes', 'min', 'mean', 'max'], r.counters.map(k => [label(k), k.unit || '', fmt(k.samples), k.procs, fmt(k.min), fmt(k.mean), fmt(k.max)])));
    });
  }

  async function viewComm(c, t, s, runIndex) {
    // The comm part is the engine's envelope, result: {runs, regions}, with the report's sources beside it.
    const part = await api.part(t, 'comm'), runs = part.result.runs, k = Math.min(runIndex || 0, runs.length - 1);
    const cm = Object.assign({}, runs[k], { regions: part.result.regions, sources: part.sources });
    {
      const root = cm.nodes[0].aggregate, byVol = (cm.ranking_own && cm.ranking_own.by_volume) || [];
      const nameOf = id => { const names = []; for (; id > 0; id = cm.nodes[id].parent) names.push(cm.nodes[id].name); return names.reverse().join('/'); };
      const topId = byVol.find(id => id > 0 && cm.nodes[id].own.bytes > 0);
      lead(c, 'Run ' + cm.run + ': ' + fmt(root.messages) + ' messages, ' + bytes(root.bytes) + ', among ' + cm.procs + ' processes; each talks to ' + root.degree + (root.degree === 1 ? ' other' : ' others') + ' at most (the comm degree). ' +
        (topId !== undefined ? nameOf(topId) + ' sends the most on its own: ' + pct(cm.nodes[topId].own.bytes / Math.max(1, root.bytes)) + ' of the bytes, with a comm degree of ' + cm.nodes[topId].own.degree + '.'
          : 'The trace has no code structure (regions) to tie the messages to.'));
    }
    let aggregate = true, counts = false, selected = new Set([0]);
    const ctl = el('div', { class: 'controls' });
    c.append(ctl);
    const row = el('div', { class: 'row' });
    c.append(row);
    const treeCard = card(row, 'Code structure (click to select; ctrl-click to add)');
    const tree = el('div', { class: 'tree' });
    treeCard.append(tree);
    const matCard = card(row, 'Communication matrix');
    const matTitle = el('p', { class: 'note' });
    matCard.append(matTitle);
    const ch = chart(matCard, 'tall', {});
    const srcCard = card(c, 'Source');
    const src = el('div');
    srcCard.append(src);
    function stats(n) { return aggregate ? n.aggregate : n.own; }
    // The tree is walked with a stack rather than by recursion, and a
    // structure is indented by at most MAX_INDENT levels, deeper ones
    // saying their depth (as the command line prints it): a trace may nest
    // regions a million deep.
    function drawTree() {
      tree.replaceChildren();
      const stack = [0];
      while (stack.length) {
        const id = stack.pop(), n = cm.nodes[id], st = stats(n);
        const indent = n.depth <= MAX_INDENT ? '\u00a0'.repeat(2 * n.depth) : '\u00a0'.repeat(2 * MAX_INDENT) + '[depth ' + n.depth + '] ';
        const lab = el('label', { class: selected.has(id) ? 'sel' : '', 'data-node': id, onclick: ev => {
          if (ev.ctrlKey || ev.metaKey) { if (selected.has(id) && selected.size > 1) selected.delete(id); else selected.add(id); } else selected = new Set([id]);
          drawAll();
        } }, indent + n.name + ' [' + n.kind + '] ' + bytes(st.bytes) + ', ' + fmt(st.messages) + ' msgs, degree ' + st.degree);
        tree.append(lab);
        const kids = n.children || [];
        for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
      }
    }
    // A structure's path is its parents' names and its own: the result
    // stores only the parent, so a deep tree stays small.
    const pathOf = (id) => { const names = []; for (; id > 0; id = cm.nodes[id].parent) names.push(cm.nodes[id].name); return names.reverse().join('/'); };
    function drawMatrix() {
      const ids = [...selected];
      const first = cm.matrices[ids[0]][aggregate ? 'aggregate' : 'own'];
      const N = first.n, vals = new Array(N * N).fill(0);
      for (const id of ids) { const m = cm.matrices[id][aggregate ? 'aggregate' : 'own']; const a = counts ? m.count : m.bytes; for (let k = 0; k < N * N; k++) vals[k] += a[k]; }
      const data = [];
      let hi = 0;
      for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) { const v = vals[i * N + j]; if (v > 0) { data.push([j, i, Math.log10(v), v]); hi = Math.max(hi, Math.log10(v)); } }
      const unit = counts ? 'messages' : 'bytes', g = cm.group > 1 ? ' (processes in groups of ' + cm.group + ')' : '';
      const hidden = ch.getDom().style.display === 'none';
      ch.getDom().style.display = data.length ? '' : 'none';
      if (hidden && data.length) ch.resize();
      if (!data.length) {
        // Regions without messages (a trace of calls only): no matrix.
        matTitle.textContent = ids.map(id => pathOf(id) || cm.nodes[id].name).join(' + ') + ': no message sent' + (aggregate ? ', with nested structures.' : ', alone.');
        ch.clear();
        return;
      }
      matTitle.textContent = ids.map(id => pathOf(id) || cm.nodes[id].name).join(' + ') + (aggregate ? ', with nested structures' : ', alone') + ': ' + unit + ' sent, row = sender, column = receiver, log scale' + g;
      const axis = (name) => ({ type: 'category', name, data: [...Array(N).keys()].map(k => k * cm.group), splitArea: { show: false } });
      ch.setOption({
        backgroundColor: '#fff', tooltip: { formatter: p => esc('from ' + p.value[1] * cm.group + ' to ' + p.value[0] * cm.group + ': ' + (counts ? fmt(p.value[3]) + ' messages' : bytes(p.value[3]))) },
        // Grey where no message went, so that the white end of the hot scale shows.
        grid: { left: 60, right: 100, top: 20, bottom: 50, show: true, backgroundColor: '#8a919e', borderWidth: 0 },
        xAxis: axis('receiver'), yAxis: Object.assign(axis('sender'), { inverse: true, nameLocation: 'start' }),
        visualMap: { min: 0, max: Math.max(hi, 1), dimension: 2, calculable: true, right: 0, top: 'middle', text: ['log10 ' + unit, ''], inRange: { color: HOT } },
        // One series per sender (one series of thousands of cells is drawn only in part).
        series: [...Array(N).keys()].map(i => ({ type: 'heatmap', data: data.filter(d => d[1] === i), progressive: 0, itemStyle: { borderColor: '#8a919e', borderWidth: 0.5 } })),
      }, { replaceMerge: ['series'] });
    }
    function drawSource() {
      src.replaceChildren();
      const id = [...selected][0], n = cm.nodes[id];
      const reg = n.region >= 0 && cm.regions ? cm.regions[n.region] : null;
      if (!reg || !reg.file) { src.append(el('p', { class: 'note' }, id === 0 ? 'Select a structure to see its source lines.' : 'The trace gives no source location for ' + n.name + '.')); return; }
      const lines = cm.sources && cm.sources[reg.file];
      const where = reg.file + ':' + reg.line + (reg.end_line ? '-' + reg.end_line : '') + (reg.function ? ' in ' + reg.function : '');
      if (!lines) { src.append(el('p', { class: 'note' }, n.name + ' is at ' + where + '; the source file was not found inside a source directory (give its directory with --source-dir).')); return; }
      src.append(el('p', { class: 'note' }, n.name + ' at ' + where));
      const a = Math.max(1, reg.line - 5), b = Math.min(lines.length, (reg.end_line || reg.line) + 5);
      const pre = el('pre', { class: 'source' });
      for (let k = a; k <= b; k++) {
        const cls = k === reg.line || k === reg.end_line ? 'hl' : (k > reg.line && k < (reg.end_line || 0) ? 'hl2' : '');
        pre.append(el('span', { class: cls }, String(k).padStart(5) + '  ' + lines[k - 1]));
      }
      src.append(pre);
    }
    function drawAll() { drawTree(); drawMatrix(); drawSource(); }
    const agg = el('input', { type: 'checkbox', onchange: () => { aggregate = agg.checked; drawAll(); } });
    agg.checked = aggregate;
    const cnt = el('input', { type: 'checkbox', onchange: () => { counts = cnt.checked; drawMatrix(); } });
    if (runs.length > 1) ctl.append(select('run', runs.map((r, i) => [i, 'run ' + r.run]), k, v => { c.replaceChildren(); viewComm(c, t, s, Number(v)); }));
    ctl.append(el('label', {}, agg, ' with nested structures'), el('label', {}, cnt, ' message counts instead of bytes'),
      el('span', { class: 'note' }, 'run ' + cm.run + ', ' + cm.procs + ' processes, ' + fmt(cm.matched) + ' matched messages' + (cm.decomposition ? ', collectives decomposed ' + cm.decomposition : '')));
    drawAll();
    // A trace with messages and no regions has only the root: no ranking.
    const rank = ((cm.ranking_own && cm.ranking_own.by_volume) || []).slice(0, 10);
    if (rank.length) card(c, 'Structures by volume (alone)', table(['rank', 'structure', 'bytes', 'messages', 'degree', 'working sets'], rank.map((id, i) => {
      const n = cm.nodes[id], w = n.working_sets;
      return [i + 1, pathOf(id), bytes(n.own.bytes), fmt(n.own.messages), n.own.degree, w && w.max_pairs ? w.windows + ' windows, ' + w.distinct + ' distinct, ' + w.min_pairs + '-' + w.max_pairs + ' pairs' : '-'];
    })));
  }

  async function viewPhases(c, t, s) {
    // The phases part is the engine's envelope: {..., options, result: {streams: [{name, run, proc, seconds, result}]}}.
    const env = await api.part(t, 'phases');
    for (const st of env.result.streams) {
      const p = st.result, h = p.hints;
      const heavy = p.phases.reduce((a, b) => b.weight > a.weight ? b : a, p.phases[0]);
      const box = card(c, st.name + ': ' + p.phases.length + ' phases over ' + p.intervals + ' intervals (k = ' + p.k + ')' +
        (h.period ? ', period ' + h.period : '') + (h.init_end ? ', initialisation 0-' + (h.init_end - 1) : ''));
      if (heavy) lead(box, 'Phase ' + heavy.id + ' carries ' + pct(heavy.weight) + ' of the execution; simulating interval ' + heavy.representative + ' stands for it. ' +
        (h.period ? 'After ' + (h.init_end ? 'an initialisation of ' + h.init_end + ' intervals' : 'the start') + ' the phases repeat every ' + h.period + ' intervals.' : 'The phases do not repeat with a period.'));
      const colour = id => PALETTE[id % PALETTE.length];
      chart(box, 'strip', {
        tooltip: { formatter: q => esc('phase ' + q.value[2] + ': intervals ' + q.value[0] + '-' + (q.value[1] - 1)) },
        grid: { left: 40, right: 20, top: 10, bottom: 30 },
        xAxis: { type: 'value', min: 0, max: p.intervals, name: 'interval' }, yAxis: { type: 'value', min: 0, max: 1, show: false },
        series: [{ type: 'custom', data: h.runs.map(r => [r.start, r.end, r.phase]), renderItem: (params, api) => {
          const a = api.coord([api.value(0), 1]), b = api.coord([api.value(1), 0]);
          return { type: 'rect', shape: { x: a[0], y: a[1], width: Math.max(1, b[0] - a[0]), height: b[1] - a[1] }, style: { fill: colour(api.value(2)) } };
        } }],
      });
      const row = el('div', { class: 'row' });
      box.append(row);
      const wc = el('div', { class: 'card' });
      row.append(wc);
      chart(wc, '', {
        tooltip: {}, grid: { left: 50, right: 20, top: 20, bottom: 40 },
        xAxis: { type: 'category', name: 'phase', data: p.phases.map(q => q.id) }, yAxis: { type: 'value', name: 'weight' },
        series: [{ type: 'bar', data: p.phases.map(q => ({ value: q.weight, itemStyle: { color: colour(q.id) } })) }],
      });
      const bc = el('div', { class: 'card' });
      row.append(bc);
      chart(bc, '', {
        tooltip: { trigger: 'axis' }, grid: { left: 70, right: 20, top: 20, bottom: 40 },
        xAxis: { type: 'value', name: 'k', minInterval: 1, min: 'dataMin', max: 'dataMax' }, yAxis: { type: 'value', name: 'BIC', min: 'dataMin', max: 'dataMax' },
        series: [{ type: 'line', data: p.evaluated.slice().sort((a, b) => a.k - b.k).map(e => [e.k, e.bic]) }],
      });
      box.append(table(['phase', 'weight', 'simulation point', 'size', 'variance'], p.phases.map(q => [q.id, q.weight.toFixed(4), q.representative, q.size, fmt(q.variance)])));
    }
  }

  async function viewMEntropy(c, t, s) {
    // The mentropy part is the engine's envelope: {schema_version, analysis, trace, options, result: {procs}}.
    const env = await api.part(t, 'mentropy'), o = env.options, me = env.result;
    const box = card(c, 'Modified entropy H per process (W = ' + o.window_events + ', K = ' + o.k + ', variant ' + o.variant + ', ' + (o.prob ? 'given' : o.learned ? 'learned' : 'uniform') + ' probabilities)');
    me.procs = me.procs || [];
    if (!me.procs.length) { lead(box, 'No process has an event of its own (the trace holds only markers of dropped events): there is no series to draw.'); return; }
    const hs = me.procs.map(p => [p, Math.max(...p.h_max)]), hmax = Math.max(...hs.map(x => x[1]));
    const at = hs.filter(x => x[1] >= hmax - 1e-9 * Math.abs(hmax)).map(x => x[0]), runs = me.procs.some(p => p.run !== 0);
    const who = at.length === me.procs.length ? (at.length > 1 ? 'Every one of the ' + at.length + ' processes reaches' : 'Process ' + at[0].proc + ' reaches')
      : at.length === 1 ? 'Process ' + at[0].proc + (runs ? ' of run ' + at[0].run : '') + ' reaches'
        : 'Processes ' + at.slice(0, 5).map(p => (runs ? p.run + ':' : '') + p.proc).join(', ') + (at.length > 5 ? ' and ' + (at.length - 5) + ' more' : '') + ' reach';
    lead(box, who + ' the largest modified entropy, H = ' + fmt(hmax) + ' nats: ' + (at.length === me.procs.length && at.length > 1 ? 'their events are equally predictable at worst. ' : 'the least predictable events. ') +
      'Low H means a process repeats what is expected of it, events an entropy-driven instrumentation can drop and count instead (Özmen 2002).');
    chart(box, 'tall', {
      tooltip: { trigger: 'axis' }, legend: { top: 0 }, grid: { left: 60, right: 20, top: 30, bottom: 70 },
      xAxis: { type: 'value', name: 'event index', nameLocation: 'middle', nameGap: 24, min: 'dataMin', max: 'dataMax' }, yAxis: { type: 'value', name: 'H (nats)', max: 'dataMax' },
      dataZoom: [{ type: 'inside' }, { type: 'slider', bottom: 8 }],
      series: me.procs.map(p => ({ name: 'run ' + p.run + ' proc ' + p.proc, type: 'line', showSymbol: false, step: 'end', data: p.index.map((x, i) => [x, p.h_max[i]]) })),
    });
    box.append(table(['run', 'process', 'events', 'event types', 'largest H'], me.procs.map(p => [p.run, p.proc, fmt(p.events), p.alphabet.join(' '), fmt(Math.max(...p.h_max))])));
  }

  // viewProbe shows a probe result: its scalar fields as a table, and each
  // array of records with numeric fields as curves of the fields against
  // the size (e.g. the prediction error against the probe's bytes).
  async function viewProbe(c, t, s) {
    const pr = await api.part(t, 'probe');
    const scalars = [], curves = [];
    const visit = (v, path) => {
      if (Array.isArray(v)) {
        if (v.length && v.every(x => x && typeof x === 'object' && !Array.isArray(x))) {
          const keys = Object.keys(v[0]).filter(k => v.every(x => typeof x[k] === 'number'));
          if (keys.length >= 2) curves.push({ path, keys, rows: v });
          else v.forEach((x, i) => visit(x, path + '[' + i + ']'));
        } else scalars.push([path, v.map(x => typeof x === 'object' ? JSON.stringify(x) : x).join(', ')]);
      } else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) visit(x, path ? path + '.' + k : k);
      } else scalars.push([path || 'value', fmt(v)]);
    };
    visit(pr, '');
    card(c, 'Probe result', table(['field', 'value'], scalars.slice(0, 200)));
    for (const cv of curves) {
      // The size of a probe is its bytes when given (the quality-against-
      // size curve), else the first numeric field; each other field gets
      // its own chart, as their scales differ.
      const x = ['bytes', 'size', 'k'].find(k => cv.keys.includes(k)) || cv.keys[0];
      const row = el('div', { class: 'row' });
      c.append(row);
      for (const y of cv.keys.filter(k => k !== x).slice(0, 6)) {
        chart(card(row, cv.path + ': ' + y + ' against ' + x), '', {
          tooltip: { trigger: 'axis' }, grid: { left: 70, right: 20, top: 20, bottom: 40 },
          xAxis: { type: 'value', name: x, nameLocation: 'middle', nameGap: 24, min: 'dataMin', max: 'dataMax' }, yAxis: { type: 'value', name: y, min: 'dataMin', max: 'dataMax' },
          series: [{ name: y, type: 'line', data: cv.rows.map(r => [r[x], r[y]]).sort((a, b) => a[0] - b[0]) }],
        });
      }
    }
  }

  // ---------- compare ----------
  async function viewCompare(c, a, b, sums, key) {
    const ctl = el('div', { class: 'controls' });
    c.append(ctl);
    const opts = sums.map(x => [x.index, x.index + ': ' + x.trace]);
    const go = (na, nb, nk) => { location.hash = '#/compare/' + na + '/' + nb + '/' + nk; };
    const common = VIEWS.filter(v => has(sums[a], v) || has(sums[b], v));
    ctl.append(select('left', opts, a, v => go(v, b, key)), select('right', opts, b, v => go(a, v, key)),
      select('view', common.map(v => [v.key, v.title]), key, v => go(a, b, v)));
    const kinds = [...new Set([...Object.keys(sums[a].records || {}), ...Object.keys(sums[b].records || {})])];
    const rows = [['runs', sums[a].runs.length, sums[b].runs.length]];
    for (const k of kinds) rows.push([k + ' records', fmt((sums[a].records || {})[k] || 0), fmt((sums[b].records || {})[k] || 0)]);
    const span = s => s.runs.reduce((m, r) => Math.max(m, r.end_ns - r.begin_ns), 0);
    rows.push(['longest run', ns(span(sums[a])), ns(span(sums[b]))]);
    await differences(c, a, b, sums);
    card(c, 'Side by side', table(['', sums[a].trace, sums[b].trace], rows));
    const grid = el('div', { class: 'compare' });
    c.append(grid);
    const v = VIEWS.find(x => x.key === key) || VIEWS[0];
    for (const i of [a, b]) {
      const col = el('div', {}, el('h2', {}, sums[i].trace));
      grid.append(col);
      if (has(sums[i], v)) await v.render(col, i, sums[i]); else unavailable(col, v.skip || v.part, sums[i]);
    }
  }

  // differences draws the card of the comparison the server computes
  // (GET /api/compare): a table per analysis with each figure on both
  // sides and its change, and runs to choose on each side. A rise is red
  // and a fall green, except for ratios (efficiencies), where a rise is
  // green.
  async function differences(c, a, b, sums) {
    const box = card(c, 'Differences');
    const runOpts = s => s.runs.map(r => [r.run, 'run ' + r.run + (r.name ? ' (' + r.name + ')' : '')]);
    const draw = async (ra, rb) => {
      box.replaceChildren(el('h3', {}, 'Differences'));
      const ctl = el('div', { class: 'controls' });
      ctl.append(select('run of ' + sums[a].trace, runOpts(sums[a]), ra, v => draw(+v, rb)),
        select('run of ' + sums[b].trace, runOpts(sums[b]), rb, v => draw(ra, +v)));
      box.append(ctl);
      let env;
      try {
        env = await api.compare(a, b, ra, rb);
      } catch (err) {
        box.append(el('p', { class: 'error' }, String(err.message || err)));
        return;
      }
      if (!env) {
        box.append(el('p', { class: 'note' }, 'The differences are computed by parscope serve or parscope compare; an offline report shows the traces side by side only.'));
        return;
      }
      const r = env.result;
      const figure = (unit, v) => unit === 'ns' ? ns(v) : unit === 'bytes' ? bytes(v) : unit === 'bits' ? fmt(v) + ' bits' : fmt(v);
      const change = row => {
        if (row.diff === 0) return el('td', { class: 'same' }, '=');
        const rise = row.diff > 0;
        const good = row.unit === 'ratio' ? rise : !rise;
        const pct = row.diff_pct === null ? ' (new)' : ' (' + (rise ? '+' : '') + row.diff_pct.toFixed(1) + '%)';
        return el('td', { class: good ? 'better' : 'worse' }, (rise ? '+' : '−') + figure(row.unit, Math.abs(row.diff)) + pct);
      };
      for (const sec of r.sections) {
        for (const t of sec.tables) {
          const only = row => row.only ? ' (only in ' + (row.only === 'a' ? env.a.trace : env.b.trace) + ')' : '';
          box.append(el('h4', {}, sec.analysis + ': ' + t.title),
            el('table', { class: 'diff' }, el('tr', {}, ['figure', env.a.trace + ' run ' + env.a.run, env.b.trace + ' run ' + env.b.run, 'change'].map(h => el('th', {}, h))),
              t.rows.map(row => el('tr', {}, el('td', {}, row.name + only(row)), el('td', {}, figure(row.unit, row.a)), el('td', {}, figure(row.unit, row.b)), change(row)))));
          if (t.note) box.append(el('p', { class: 'note' }, t.note));
          if (t.omitted) box.append(el('p', { class: 'note' }, t.omitted + ' more rows of smaller change.'));
        }
      }
      if (r.missing.length) {
        box.append(el('h4', {}, 'Not compared'), table(['analysis', env.a.trace, env.b.trace],
          r.missing.map(m => [m.analysis, m.reason_a || 'present', m.reason_b || 'present'])));
      }
    };
    await draw(sums[a].runs.length ? sums[a].runs[0].run : 0, sums[b].runs.length ? sums[b].runs[0].run : 0);
  }

  // ---------- routing ----------
  let sums = [];
  let routeGen = 0;
  async function route() {
    const gen = ++routeGen;
    charts.forEach(ch => ch.dispose());
    charts = [];
    document.body.dataset.ready = '';
    const view = document.getElementById('view');
    view.replaceChildren();
    const parts = location.hash.replace(/^#\/?/, '').split('/');
    const tabs = document.getElementById('tabs');
    tabs.replaceChildren();
    let key;
    try {
      if (parts[0] === 'compare' && sums.length >= 2) {
        const a = clamp(+parts[1] || 0), b = clamp(parts[2] === undefined ? 1 : +parts[2]);
        key = 'compare';
        used = { procs: '', exclude: '', states: '' };
        document.getElementById('trace').value = String(a);
        drawTabs(tabs, a, 'compare', sums[a]);
        if (selectionQuery(selection)) view.append(el('p', { class: 'note' }, 'The comparison shows the analyses of the command line: the selection (' + selectionText(selection) + ') applies to the views of one trace.'));
        await viewCompare(view, a, b, sums, parts[3] || 'overview');
      } else {
        const t = parts[0] === 't' ? clamp(+parts[1] || 0) : 0;
        key = parts[0] === 't' && parts[2] ? parts[2] : 'overview';
        used = selection;
        document.getElementById('trace').value = String(t);
        const v = VIEWS.find(x => x.key === key);
        if (!v) throw new Error('unknown view ' + key);
        const said = selectionText(used);
        view.append(el('h2', {}, v.title + ' — ' + sums[t].trace + (said ? ' (' + said + ')' : '')));
        document.body.dataset.selection = said;
        // A selection not computed yet takes as long as the analyses of
        // the trace: say so meanwhile.
        const wait = said ? el('p', { class: 'note' }, 'Analysing ' + sums[t].trace + ' for ' + said + '…') : null;
        if (wait) view.append(wait);
        let s;
        try {
          s = await api.summary(t);
        } finally {
          if (wait) wait.remove();
          if (gen === routeGen) drawTabs(tabs, t, key, s || sums[t]);
        }
        // Another view or selection was asked for meanwhile: it draws.
        if (gen !== routeGen) return;
        if (has(s, v)) await v.render(view, t, s); else unavailable(view, v.skip || v.part, s);
      }
    } catch (err) {
      if (gen !== routeGen) return;
      if (err instanceof ApiError && err.status === 400) {
        // A selection the server refuses: its reason, in the page.
        view.append(el('p', { class: 'error', 'data-refused': '1' }, 'The server refused the selection: ' + err.message));
      } else {
        view.append(el('p', { class: 'error' }, String(err.message || err)));
        console.error(err);
      }
    }
    // Charts made before their neighbours in a row took the whole width.
    charts.forEach(ch => ch.resize());
    document.body.dataset.view = key || '';
    document.body.dataset.hash = location.hash;
    document.body.dataset.ready = '1';
  }
  // setupSelection wires the selection fields (index.html); an offline
  // report has no server to analyse again and hides them.
  function setupSelection() {
    const box = document.getElementById('selection');
    if (!box) return;
    if (STATIC) { box.hidden = true; return; }
    const procs = document.getElementById('sel-procs'), exclude = document.getElementById('sel-exclude'), states = document.getElementById('sel-states');
    const apply = () => {
      selection = { procs: procs.value.trim(), exclude: exclude.value.trim(), states: states.value };
      route();
    };
    document.getElementById('sel-apply').addEventListener('click', apply);
    for (const f of [procs, exclude]) f.addEventListener('keydown', e => { if (e.key === 'Enter') apply(); });
    document.getElementById('sel-reset').addEventListener('click', () => {
      procs.value = exclude.value = states.value = '';
      apply();
    });
  }
  function clamp(i) { return Math.min(Math.max(0, i | 0), sums.length - 1); }
  function drawTabs(tabs, t, key, s) {
    for (const v of VIEWS) {
      tabs.append(el('a', { href: '#/t/' + t + '/' + v.key, class: (v.key === key ? 'active' : '') + (has(s, v) ? '' : ' off'), 'data-view': v.key }, v.title));
    }
    if (sums.length >= 2) tabs.append(el('a', { href: '#/compare/' + t + '/' + (t === 0 ? 1 : 0) + '/overview', class: key === 'compare' ? 'active' : '', 'data-view': 'compare' }, 'Compare'));
  }

  async function start() {
    try {
      sums = await api.traces();
    } catch (err) {
      document.getElementById('view').append(el('p', { class: 'error' }, String(err.message || err)));
      console.error(err);
      return;
    }
    const sel = document.getElementById('trace');
    sums.forEach(s => sel.append(el('option', { value: s.index }, s.trace)));
    sel.addEventListener('change', () => { location.hash = '#/t/' + sel.value + '/overview'; });
    setupSelection();
    window.addEventListener('hashchange', route);
    window.addEventListener('resize', () => charts.forEach(ch => ch.resize()));
    route();
  }
  start();
})();
