/* memprof's HTML report, in the browser: draws the charts from the data island (#mp-data,
   written by reports/html_data.c) and makes the page interactive: the memory timeline zooms
   (drag), pans (shift-drag, shift-wheel) and resets (double-click), down-sampled to a
   highest and lowest point per pixel column with the exact figures of the moment under the
   cursor; a click on a tensor or an operator anywhere (charts, tables, search results) fills
   the detail panel and highlights it in every chart; a search box over tensor and operator
   names; kinds toggled in the legend; sortable tables. Embedded in every report by
   cmake/EmbedText.cmake: this file must contain neither the CDATA end nor a closing tag. */
(function () {
  'use strict';
  var SVGNS = 'http://www.w3.org/2000/svg';
  var PHASE_RUN = 4;
  var MAX_SHAPES = 2000;
  var CYCLE = ['#4E79A7', '#F28E2B', '#59A14F', '#E15759', '#76B7B2', '#EDC948', '#B07AA1',
               '#FF9DA7', '#9C755F', '#BAB0AC'];
  var island = document.getElementById('mp-data');
  if (!island) return;
  var D = JSON.parse(island.textContent);
  var STACK = D.stack; /* kinds stacked in the timeline, bottom first (const is not heap) */
  var report = window.mpReport = { drawMs: 0, draws: 0 };

  /* ---- small helpers -------------------------------------------------------------------- */
  function fmtBytes(v) {
    if (v < 1024) return v + ' B';
    var u = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'], x = v / 1024, i = 0;
    while (x >= 1023.95 && i < u.length - 1) { x /= 1024; i++; }
    return x.toFixed(1) + ' ' + u[i];
  }
  function exactBytes(v) { return v.toLocaleString('en-US') + ' B'; }
  function both(v) { return v < 1024 ? v + ' B' : fmtBytes(v) + ' (' + exactBytes(v) + ')'; }
  function fmtNs(ns) {
    if (ns < 1000) return ns + ' ns';
    if (ns < 999950) return (ns / 1e3).toFixed(1) + ' us';
    if (ns < 999950000) return (ns / 1e6).toFixed(1) + ' ms';
    return (ns / 1e9).toFixed(1) + ' s';
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function sv(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function niceStep(max, target, bytes) {
    if (max <= 0) return 1;
    var raw = max / target, base = 1;
    if (bytes) {
      while (base * 1024 <= raw) base *= 1024;
      var m = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1024];
      for (var i = 0; i < m.length; i++) if (base * m[i] >= raw) return base * m[i];
      return base * 1024;
    }
    base = Math.pow(10, Math.floor(Math.log10(raw)));
    if (base * 1 >= raw) return base;
    if (base * 2 >= raw) return base * 2;
    if (base * 5 >= raw) return base * 5;
    return base * 10;
  }
  function tickLabel(v, step) {
    if (v === 0) return '0';
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'], i = 0, s = step;
    while (s >= 1024 && i < u.length - 1) { s /= 1024; v /= 1024; i++; }
    return (Math.round(v * 10) / 10) + ' ' + u[i];
  }
  /* first index i in [0, n) with f(i) true, f monotone; n when none */
  function lowerBound(n, f) {
    var lo = 0, hi = n;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (f(mid)) hi = mid; else lo = mid + 1; }
    return lo;
  }

  /* ---- the traces: lookups and the timeline's layout -------------------------------------- */
  function prepare(T, ti) {
    T.ti = ti;
    var t = T.tensors, o = T.ops, i, k;
    T.tpos = {};
    for (i = 0; i < t.index.length; i++) T.tpos[t.index[i]] = i;
    T.opos = {};
    for (i = 0; i < o.index.length; i++) T.opos[o.index[i]] = i;
    T.consumers = {};
    T.producers = {};
    for (i = 0; i < o.index.length; i++) {
      for (k = 0; k < o['in'][i].length; k++) {
        var x = o['in'][i][k];
        if (x >= 0) (T.consumers[x] = T.consumers[x] || []).push(o.index[i]);
      }
      for (k = 0; k < o.out[i].length; k++) {
        var y = o.out[i][k];
        if (y >= 0) (T.producers[y] = T.producers[y] || []).push(o.index[i]);
      }
    }
    T.L = T.tl ? layout(T.tl) : null;
    return T;
  }
  function opLabel(T, op) {
    if (op === null || op === undefined || op < 0) return '-';
    var p = T.opos[op];
    var name = p === undefined ? null : T.ops.name[p];
    return '#' + op + (name ? ' ' + name : '');
  }
  function tensorLabel(T, ti) {
    var p = T.tpos[ti];
    var name = p === undefined ? null : T.tensors.name[p];
    return name ? name : '#' + ti;
  }

  /* Point i spans [X[i], X[i+1]) on the x axis, in steps (events for a trace without steps):
     the steps begun within it; a point in which no step begins (load, prepare, between runs)
     gets wz, 2.5 % of the width (20 % in all at most), so that it stays visible. */
  function layout(tl) {
    var n = tl.heap.length, byStep = tl.by === 'step', w = new Float64Array(n), total = 0,
        nz = 0, u0s = new Float64Array(n), i;
    for (i = 0; i < n; i++) {
      var a, b;
      if (byStep) { b = tl.s[i]; a = i ? tl.s[i - 1] : tl.f[i]; if (a > b) a = b; }
      else { a = tl.e0[i]; b = Math.max(tl.e1[i], tl.e0[i]) + 1; }
      u0s[i] = a;
      w[i] = b - a;
      total += w[i];
      if (w[i] === 0) nz++;
    }
    var wz = 1;
    if (nz) {
      wz = total * 0.025;
      if (nz * wz > total * 0.2) wz = total * 0.2 / nz;
      if (wz < 1) wz = 1;
    }
    var X = new Float64Array(n + 1);
    for (i = 0; i < n; i++) X[i + 1] = X[i] + (w[i] || wz);
    /* the step each run begins with (reference-run highlights) */
    var runStart = {};
    for (i = 0; i < n; i++) {
      var r = tl.run[i];
      if (r > 0 && runStart[r] === undefined) runStart[r] = u0s[i];
    }
    return { n: n, X: X, w: w, u0s: u0s, total: X[n], byStep: byStep, runStart: runStart };
  }
  /* x of the beginning of step st (end: of its end) */
  function stepToU(T, st, end) {
    var L = T.L, tl = T.tl;
    if (!L || !L.byStep) return null;
    var i = lowerBound(L.n, function (j) { return tl.s[j] > st; });
    if (i >= L.n) return L.total;
    var span = tl.s[i] - L.u0s[i];
    if (span <= 0) return L.X[i];
    var frac = (st - L.u0s[i] + (end ? 1 : 0)) / span;
    return L.X[i] + Math.max(0, Math.min(1, frac)) * (L.X[i + 1] - L.X[i]);
  }
  function uToStep(T, u) {
    var L = T.L, tl = T.tl;
    if (!L) return 0;
    var i = Math.min(L.n - 1, Math.max(0, lowerBound(L.n, function (j) { return L.X[j + 1] > u; })));
    var a = L.byStep ? L.u0s[i] : tl.e0[i], b = L.byStep ? tl.s[i] : tl.e1[i] + 1;
    var frac = (u - L.X[i]) / (L.X[i + 1] - L.X[i] || 1);
    return Math.round(a + Math.max(0, Math.min(1, frac)) * (b - a));
  }
  /* the x range [u0, u1) a selection covers in the reference run, or null */
  function selRange(T, s) {
    if (!s || !T.L || !T.L.byStep) return null;
    var id = s.ids[T.ti];
    if (id === undefined || id === null || id < 0) return null;
    var rs = T.L.runStart[T.refRun];
    if (rs === undefined) return null;
    var a, b;
    if (s.k === 'op') { a = b = id; }
    else {
      var p = T.tpos[id];
      if (p === undefined) return null;
      a = T.tensors.first[p]; b = T.tensors.last[p];
      if (a < 0 || b < a) return null;
    }
    return [stepToU(T, rs + a, false), stepToU(T, rs + b, true)];
  }

  var traces = D.traces.map(prepare);
  var hidden = {}; /* kinds (and 'rss') toggled off in the legends */
  var sel = null;   /* { k: 't' | 'op', ids: [per trace] } */
  var matches = null; /* search matches: { t: [set per trace], op: [...] } */

  /* ---- the timeline ------------------------------------------------------------------------ */
  var group = { u0: 0, u1: 0, total: 0, charts: [] };
  function setView(u0, u1) {
    var minW = Math.min(group.total, 0.5);
    if (u1 - u0 < minW) { var c = (u0 + u1) / 2; u0 = c - minW / 2; u1 = c + minW / 2; }
    if (u1 - u0 > group.total) { u0 = 0; u1 = group.total; }
    if (u0 < 0) { u1 -= u0; u0 = 0; }
    if (u1 > group.total) { u0 -= u1 - group.total; u1 = group.total; }
    group.u0 = Math.max(0, u0);
    group.u1 = u1;
    group.charts.forEach(function (c) { c.draw(); });
  }

  function Timeline(host, T) {
    this.host = host;
    this.T = T;
    this.H = 280;
    var self = this;
    var tools = el('div', 'tl-tools');
    this.range = el('span', 'tl-range');
    var reset = el('button', null, 'reset zoom');
    reset.type = 'button';
    reset.addEventListener('click', function () { setView(0, group.total); });
    tools.appendChild(this.range);
    tools.appendChild(reset);
    host.appendChild(tools);
    var wrap = el('div', 'tl-wrap');
    this.base = el('canvas', 'base');
    this.over = el('canvas', 'over');
    wrap.appendChild(this.base);
    wrap.appendChild(this.over);
    host.appendChild(wrap);
    this.wrap = wrap;
    var legend = el('div', 'legend');
    STACK.forEach(function (k) { /* the kinds this trace holds */
      var live = T.tl.live[k], any = false;
      for (var i = 0; i < live.length && !any; i++) any = live[i] > 0;
      if (any) legend.appendChild(self.legendButton(String(k), D.kinds[k], D.kindColors[k]));
    });
    if (T.tl.rss) legend.appendChild(this.legendButton('rss', 'rss (process)', '#333'));
    legend.appendChild(this.legendButton('peak', 'peak', '#B2182B'));
    host.appendChild(legend);
    this.info = el('div', 'tl-info', 'Move over the chart for the figures at each moment.');
    host.appendChild(this.info);
    this.cols = null;
    this.events();
  }
  Timeline.prototype.legendButton = function (key, label, color) {
    var b = el('button');
    b.type = 'button';
    b.setAttribute('data-kind', key);
    b.setAttribute('aria-pressed', hidden[key] ? 'false' : 'true');
    var sw = el('span', 'sw');
    sw.style.background = color;
    b.appendChild(sw);
    b.appendChild(document.createTextNode(label));
    b.addEventListener('click', function () {
      hidden[key] = !hidden[key];
      document.querySelectorAll('.legend button[data-kind="' + key + '"]').forEach(function (x) {
        x.setAttribute('aria-pressed', hidden[key] ? 'false' : 'true');
      });
      group.charts.forEach(function (c) { c.draw(); });
    });
    return b;
  };
  Timeline.prototype.geometry = function () {
    var W = Math.max(320, this.wrap.clientWidth || 900);
    return { W: W, H: this.H, L: 70, R: W - 12, T: 22, B: this.H - 24 };
  };
  Timeline.prototype.xOf = function (g, u) {
    return g.L + (u - group.u0) / (group.u1 - group.u0) * (g.R - g.L);
  };
  Timeline.prototype.uOf = function (g, x) {
    return group.u0 + (x - g.L) / (g.R - g.L) * (group.u1 - group.u0);
  };
  Timeline.prototype.stacked = function (i) {
    var s = 0, live = this.T.tl.live;
    for (var k = 0; k < STACK.length; k++) if (!hidden[STACK[k]]) s += live[STACK[k]][i];
    return s;
  };
  /* Down-sampling: for each pixel column the points it covers, the one with the highest
     stacked bytes shown (a peak is never lost), the lowest kept for the envelope. */
  Timeline.prototype.columns = function (g) {
    var T = this.T, L = T.L, tl = T.tl, PW = Math.floor(g.R - g.L), cols = [];
    var du = (group.u1 - group.u0) / PW;
    var i = Math.max(0, lowerBound(L.n, function (j) { return L.X[j + 1] > group.u0; }));
    for (var c = 0; c < PW; c++) {
      var ua = group.u0 + c * du, ub = ua + du;
      while (i < L.n - 1 && L.X[i + 1] <= ua) i++;
      if (i >= L.n || L.X[i] >= group.u1 || L.X[i] > ub) { cols.push(null); continue; }
      var j = i, hi = -1, lo = -1, vhi = -1, vlo = Infinity, rss = 0;
      while (j < L.n && L.X[j] < ub) {
        var v = this.stacked(j);
        if (v > vhi || (j === tl.peak && v >= vhi)) { vhi = v; hi = j; }
        if (v < vlo) { vlo = v; lo = j; }
        if (tl.rss && tl.rss[j] > rss) rss = tl.rss[j];
        j++;
      }
      if (hi < 0) { cols.push(null); continue; }
      cols.push({ hi: hi, lo: lo, vhi: vhi, vlo: vlo, n: j - i, first: i, rss: rss });
    }
    return cols;
  };
  Timeline.prototype.draw = function () {
    var t0 = performance.now(), T = this.T, tl = T.tl, L = T.L, g = this.geometry();
    var dpr = window.devicePixelRatio || 1;
    [this.base, this.over].forEach(function (cv) {
      cv.width = Math.round(g.W * dpr);
      cv.height = Math.round(g.H * dpr);
      cv.style.height = g.H + 'px';
    });
    var ctx = this.base.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, g.W, g.H);
    var cols = this.cols = this.columns(g), c, k;
    var ymax = 0;
    for (c = 0; c < cols.length; c++) {
      if (!cols[c]) continue;
      ymax = Math.max(ymax, cols[c].vhi);
      if (tl.rss && !hidden.rss) ymax = Math.max(ymax, cols[c].rss);
    }
    var room = ymax * 1.1, step = niceStep(room, 5, true);
    var top = ymax ? Math.ceil(room / step) * step : 1024;
    this.top = top;
    var ph = g.B - g.T;
    function y(v) { return g.B - v / top * ph; }
    /* phases other than runs, shaded */
    ctx.fillStyle = '#F1F1EC';
    for (c = 0; c < cols.length; c++) {
      if (!cols[c]) continue;
      var pk = tl.ph[cols[c].hi];
      if (pk >= 0 && pk !== PHASE_RUN) ctx.fillRect(g.L + c, g.T, 1, ph);
    }
    /* grid and y axis */
    ctx.strokeStyle = '#E8E8E4';
    ctx.fillStyle = '#666';
    ctx.font = '10px system-ui, sans-serif';
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    ctx.lineWidth = 1;
    for (var v = 0; v <= top + 0.5; v += step) {
      ctx.beginPath();
      ctx.moveTo(g.L, Math.round(y(v)) + 0.5);
      ctx.lineTo(g.R, Math.round(y(v)) + 0.5);
      ctx.stroke();
      ctx.fillText(tickLabel(v, step), g.L - 6, y(v));
    }
    /* the stack, a kind at a time */
    var base = new Float64Array(cols.length);
    for (k = 0; k < STACK.length; k++) {
      var kind = STACK[k];
      if (hidden[kind]) continue;
      var live = tl.live[kind];
      ctx.fillStyle = D.kindColors[kind];
      for (c = 0; c < cols.length; c++) {
        if (!cols[c]) continue;
        var b = live[cols[c].hi];
        if (b > 0) {
          var y0 = y(base[c]), y1 = y(base[c] + b);
          ctx.fillRect(g.L + c, y1, 1, Math.max(y0 - y1, 0.6));
          base[c] += b;
        }
      }
    }
    /* the lowest point of each column, when a column holds several */
    ctx.strokeStyle = 'rgba(0,0,0,0.35)';
    ctx.beginPath();
    for (c = 0; c < cols.length; c++) {
      if (!cols[c] || cols[c].vlo >= cols[c].vhi) continue;
      ctx.moveTo(g.L + c, y(cols[c].vlo));
      ctx.lineTo(g.L + c + 1, y(cols[c].vlo));
    }
    ctx.stroke();
    /* runs: a line where each begins, named when there is room */
    ctx.strokeStyle = 'rgba(0,0,0,0.12)';
    ctx.fillStyle = '#888';
    ctx.textAlign = 'left';
    ctx.textBaseline = 'alphabetic';
    var lastRun = -1, lastLabel = -1e9;
    for (c = 0; c < cols.length; c++) {
      if (!cols[c]) continue;
      var r = tl.run[cols[c].first];
      if (r > 0 && r !== lastRun && lastRun !== -1) {
        ctx.beginPath();
        ctx.moveTo(g.L + c + 0.5, g.T);
        ctx.lineTo(g.L + c + 0.5, g.B);
        ctx.stroke();
        if (c - lastLabel > 44) { ctx.fillText('run ' + r, g.L + c + 3, g.T - 6); lastLabel = c; }
      } else if (lastRun === -1 && tl.ph[cols[c].first] >= 0 && tl.ph[cols[c].first] !== PHASE_RUN &&
                 c - lastLabel > 60) {
        ctx.fillText(D.phases[tl.ph[cols[c].first]], g.L + c + 3, g.T - 6);
        lastLabel = c;
      }
      lastRun = r > 0 ? r : lastRun;
    }
    /* RSS */
    if (tl.rss && !hidden.rss) {
      ctx.strokeStyle = '#333';
      ctx.setLineDash([4, 3]);
      ctx.beginPath();
      var started = false;
      for (c = 0; c < cols.length; c++) {
        if (!cols[c] || !cols[c].rss) continue;
        if (!started) { ctx.moveTo(g.L + c, y(cols[c].rss)); started = true; }
        else ctx.lineTo(g.L + c + 1, y(cols[c].rss));
      }
      ctx.stroke();
      ctx.setLineDash([]);
    }
    /* the selection, in the reference run */
    var sr = selRange(T, sel);
    if (sr) {
      var xa = Math.max(g.L, this.xOf(g, sr[0])), xb = Math.min(g.R, this.xOf(g, sr[1]));
      if (xb >= g.L && xa <= g.R) {
        ctx.fillStyle = 'rgba(216,27,96,0.18)';
        ctx.fillRect(xa, g.T, Math.max(xb - xa, 2), ph);
        ctx.fillStyle = '#D81B60';
        ctx.fillRect(xa, g.T, Math.max(xb - xa, 2), 3);
      }
    }
    /* the peak */
    if (!hidden.peak && L.n) {
      var pu = (L.X[tl.peak] + L.X[tl.peak + 1]) / 2;
      if (pu >= group.u0 && pu <= group.u1) {
        var px = Math.round(this.xOf(g, pu)) + 0.5;
        ctx.strokeStyle = '#B2182B';
        ctx.beginPath();
        ctx.moveTo(px, g.T);
        ctx.lineTo(px, g.B);
        ctx.stroke();
        ctx.fillStyle = '#B2182B';
        ctx.font = '600 11px system-ui, sans-serif';
        var lab = 'peak ' + fmtBytes(tl.heap[tl.peak]);
        ctx.textAlign = px > g.R - 120 ? 'right' : 'left';
        ctx.fillText(lab, px + (px > g.R - 120 ? -4 : 4), g.T + 12);
        ctx.font = '10px system-ui, sans-serif';
      }
    }
    /* x axis: steps (or events) */
    ctx.strokeStyle = '#999';
    ctx.beginPath();
    ctx.moveTo(g.L, g.B + 0.5);
    ctx.lineTo(g.R, g.B + 0.5);
    ctx.stroke();
    ctx.fillStyle = '#666';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    for (var q = 0; q <= 6; q++) {
      var xq = g.L + q / 6 * (g.R - g.L);
      ctx.fillText(String(uToStep(T, this.uOf(g, xq))), Math.min(Math.max(xq, g.L + 12), g.R - 12), g.B + 5);
    }
    ctx.textAlign = 'left';
    ctx.fillText(L.byStep ? 'operator step' : 'event', g.L, g.B + 14);
    /* the range shown, for people and for tests */
    var s0 = uToStep(T, group.u0), s1 = uToStep(T, group.u1);
    var whole = group.u0 <= 0 && group.u1 >= group.total;
    this.range.textContent = (L.byStep ? 'steps ' : 'events ') + s0 + ' to ' + s1 + ' of ' +
        (L.byStep ? tl.nSteps : tl.e1[L.n - 1] + 1) + (whole ? '' : ' (zoomed)') +
        '; ' + L.n + ' points, ' + (cols.length) + ' columns';
    this.host.setAttribute('data-u0', group.u0.toFixed(3));
    this.host.setAttribute('data-u1', group.u1.toFixed(3));
    this.host.setAttribute('data-s0', s0);
    this.host.setAttribute('data-s1', s1);
    this.host.setAttribute('data-zoomed', whole ? 'false' : 'true');
    this.g = g;
    this.drawOver();
    var ms = performance.now() - t0;
    report.drawMs = ms;
    report.draws++;
  };
  Timeline.prototype.drawOver = function () {
    var g = this.g, ctx = this.over.getContext('2d'), dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, g.W, g.H);
    if (this.drag) {
      var a = Math.min(this.drag.x0, this.drag.x1), b = Math.max(this.drag.x0, this.drag.x1);
      if (!this.drag.pan) {
        ctx.fillStyle = 'rgba(0,114,178,0.15)';
        ctx.fillRect(a, g.T, b - a, g.B - g.T);
        ctx.strokeStyle = '#0072B2';
        ctx.strokeRect(a + 0.5, g.T + 0.5, b - a, g.B - g.T);
      }
    }
    var cx = group.cursor;
    if (cx !== undefined && cx !== null) {
      var x = Math.round(this.xOf(g, cx)) + 0.5;
      if (x >= g.L && x <= g.R) {
        ctx.strokeStyle = 'rgba(0,0,0,0.6)';
        ctx.beginPath();
        ctx.moveTo(x, g.T);
        ctx.lineTo(x, g.B);
        ctx.stroke();
      }
    }
  };
  Timeline.prototype.colAt = function (x) {
    var g = this.g, c = Math.floor(x - g.L);
    if (!this.cols || c < 0 || c >= this.cols.length) return null;
    return this.cols[c];
  };
  /* the exact figures of the moment under the cursor */
  Timeline.prototype.describe = function (col) {
    var T = this.T, tl = T.tl, i = col.hi, info = this.info;
    info.textContent = '';
    var line1 = el('div');
    var where = [];
    if (T.L.byStep) where.push('step ' + (tl.s[i] > T.L.u0s[i] ? T.L.u0s[i] + (tl.s[i] - T.L.u0s[i] > 1 ? '-' + (tl.s[i] - 1) : '') : tl.s[i] + ' (between steps)'));
    where.push(tl.ph[i] >= 0 ? D.phases[tl.ph[i]] + (tl.run[i] > 0 ? ' ' + tl.run[i] : '') : 'outside any phase');
    if (tl.op[i] >= 0) where.push('op ' + opLabel(T, tl.op[i]));
    where.push('t ' + fmtNs(tl.t[i]));
    where.push(tl.e0[i] === tl.e1[i] ? 'event ' + tl.e0[i] : 'events ' + tl.e0[i] + '-' + tl.e1[i]);
    line1.appendChild(el('b', null, where.join(' \u00b7 ')));
    info.appendChild(line1);
    var parts = ['heap ' + both(tl.heap[i])];
    STACK.forEach(function (k) { if (tl.live[k][i]) parts.push(D.kinds[k] + ' ' + fmtBytes(tl.live[k][i])); });
    if (tl.rss && tl.rss[i]) parts.push('rss ' + fmtBytes(tl.rss[i]));
    info.appendChild(el('div', null, parts.join(' \u00b7 ')));
    if (col.n > 1)
      info.appendChild(el('div', null, col.n + ' points in this pixel column: the highest is shown' +
          (col.vlo < col.vhi ? ', the lowest holds ' + fmtBytes(col.vlo) + ' (drag to zoom in)' : '')));
  };
  Timeline.prototype.events = function () {
    var self = this, over = this.over;
    function xOfEvent(e) { var r = over.getBoundingClientRect(); return e.clientX - r.left; }
    over.addEventListener('mousemove', function (e) {
      var x = xOfEvent(e), g = self.g;
      if (self.drag) {
        if (self.drag.pan) {
          var du = (x - self.drag.x1) / (g.R - g.L) * (group.u1 - group.u0);
          self.drag.x1 = x;
          setView(group.u0 - du, group.u1 - du);
        } else {
          self.drag.x1 = Math.max(g.L, Math.min(g.R, x));
        }
      }
      var col = self.colAt(x);
      group.cursor = col ? self.uOf(g, x) : null;
      group.charts.forEach(function (c) {
        c.drawOver();
        var cc = col ? c.colAt(c.xOf(c.g, group.cursor)) : null;
        if (cc) c.describe(cc);
      });
    });
    over.addEventListener('mouseleave', function () {
      group.cursor = null;
      group.charts.forEach(function (c) { c.drawOver(); });
    });
    over.addEventListener('mousedown', function (e) {
      if (e.button !== 0) return;
      var x = xOfEvent(e);
      self.drag = { x0: x, x1: x, pan: e.shiftKey };
      e.preventDefault();
    });
    window.addEventListener('mouseup', function (e) {
      var d = self.drag;
      if (!d) return;
      self.drag = null;
      var g = self.g;
      if (!d.pan && Math.abs(d.x1 - d.x0) >= 4) {
        var a = self.uOf(g, Math.min(d.x0, d.x1)), b = self.uOf(g, Math.max(d.x0, d.x1));
        setView(a, b);
      } else if (!d.pan && e.target === over) {
        var col = self.colAt(d.x0);
        if (col && self.T.tl.op[col.hi] >= 0) selectOp(self.T.ti, self.T.tl.op[col.hi]);
        self.drawOver();
      } else {
        self.drawOver();
      }
    });
    over.addEventListener('dblclick', function () { setView(0, group.total); });
    over.addEventListener('wheel', function (e) {
      var g = self.g, w = group.u1 - group.u0;
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        var d = (e.deltaX || e.deltaY) / (g.R - g.L) * w;
        setView(group.u0 + d, group.u1 + d);
        e.preventDefault();
      } else if (e.ctrlKey || e.altKey) {
        var at = self.uOf(g, xOfEvent(e)), f = e.deltaY > 0 ? 1.25 : 0.8;
        setView(at - (at - group.u0) * f, at + (group.u1 - at) * f);
        e.preventDefault();
      }
    }, { passive: false });
  };

  /* ---- lifetimes and arena (SVG) ------------------------------------------------------------- */
  function noData(host, text) { host.appendChild(el('p', 'no-data', text)); }

  function drawLifetimes(host, T) {
    var t = T.tensors, n = t.index.length, rows = [], i;
    for (i = 0; i < n; i++)
      if (t.mgr[i] !== 0 && t.mgr[i] !== 5 && t.bytes[i] > 0 && t.first[i] >= 0 && t.last[i] >= t.first[i])
        rows.push(i);
    if (!rows.length) { noData(host, 'No data: no tensor was held during an operator of the reference run.'); return; }
    var left = 0;
    if (rows.length > MAX_SHAPES) {
      rows.sort(function (a, b) { return t.bytes[b] - t.bytes[a] || a - b; });
      left = rows.length - MAX_SHAPES;
      rows.length = MAX_SHAPES;
    }
    rows.sort(function (a, b) { return t.first[a] - t.first[b] || t.last[a] - t.last[b] || a - b; });
    var nOps = T.ops.index.length, lane = new Int32Array(rows.length), nl = 0;
    for (i = 0; i < rows.length; i++) nOps = Math.max(nOps, t.last[rows[i]] + 1);
    if (rows.length <= 240) { for (i = 0; i < rows.length; i++) lane[i] = i; nl = rows.length; }
    else {
      var ends = [];
      for (i = 0; i < rows.length; i++) {
        var l = 0;
        while (l < ends.length && ends[l] >= t.first[rows[i]]) l++;
        ends[l] = t.last[rows[i]];
        lane[i] = l;
      }
      nl = ends.length;
    }
    var W = 960, L = 48, R = W - 10, TOP = 8, rh = Math.max(2, Math.min(14, 460 / nl));
    var H = TOP + nl * rh + 30;
    var svg = sv('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img' }, host);
    function x(op) { return L + op / nOps * (R - L); }
    var step = niceStep(nOps, 10, false);
    for (var o = 0; o <= nOps; o += step) {
      sv('line', { x1: x(o), x2: x(o), y1: TOP, y2: TOP + nl * rh, stroke: '#EEE' }, svg);
      var tx = sv('text', { x: x(o), y: TOP + nl * rh + 14, 'text-anchor': 'middle' }, svg);
      tx.textContent = String(o);
    }
    var cap = sv('text', { x: L, y: H - 3 }, svg);
    cap.textContent = 'operator index (run ' + T.refRun + ')' + (left ? '; the ' + left +
        ' smallest tensors are left out' : '');
    for (i = 0; i < rows.length; i++) {
      var p = rows[i];
      var r = sv('rect', {
        'class': 'bar', 'data-t': t.index[p], x: x(t.first[p]), y: TOP + lane[i] * rh + (rh > 3 ? 0.5 : 0),
        width: Math.max(1.5, x(t.last[p] + 1) - x(t.first[p])), height: Math.max(1, rh - (rh > 3 ? 1 : 0)),
        fill: D.managerColors[t.mgr[p]]
      }, svg);
      var title = sv('title', {}, r);
      title.textContent = tensorLabel(T, t.index[p]) + '\n' + fmtBytes(t.bytes[p]) + ', ' +
          D.managers[t.mgr[p]] + ', ops ' + t.first[p] + '-' + t.last[p];
    }
  }

  function drawArena(host, T) {
    var a = T.arena;
    if (!a || !a.slots.t.length) { noData(host, 'No data: no arena was planned.'); return; }
    var s = a.slots, n = s.t.length, order = [], i, left = 0;
    for (i = 0; i < n; i++) order.push(i);
    if (n > MAX_SHAPES) {
      order.sort(function (x, y) { return s.bytes[y] - s.bytes[x] || x - y; });
      left = n - MAX_SHAPES;
      order.length = MAX_SHAPES;
    }
    var nOps = Math.max(a.free.length, T.ops.index.length, 1);
    for (i = 0; i < order.length; i++) nOps = Math.max(nOps, s.last[order[i]] + 1);
    var top = Math.max(a.bytes, a.used, a.lb, 1);
    var W = 960, L = 70, R = W - 10, TOP = 14, PH = 300, FH = 60, GAP = 34;
    var H = TOP + PH + GAP + FH + 30;
    var svg = sv('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img' }, host);
    function x(op) { return L + op / nOps * (R - L); }
    function y(v) { return TOP + PH - v / top * PH; }
    var ystep = niceStep(top, 5, true);
    for (var v = 0; v <= top; v += ystep) {
      sv('line', { x1: L, x2: R, y1: y(v), y2: y(v), stroke: '#EEE' }, svg);
      sv('text', { x: L - 6, y: y(v) + 3, 'text-anchor': 'end' }, svg).textContent = tickLabel(v, ystep);
    }
    for (i = 0; i < order.length; i++) {
      var k = order[i], scratch = s.kind[k] === 3;
      var attrs = {
        'class': 'slot', x: x(s.first[k]), y: y(s.off[k] + s.bytes[k]),
        width: Math.max(1.5, x(s.last[k] + 1) - x(s.first[k])),
        height: Math.max(1, y(s.off[k]) - y(s.off[k] + s.bytes[k])),
        fill: scratch ? D.kindColors[3] : CYCLE[k % CYCLE.length], 'fill-opacity': 0.85
      };
      if (s.t[k] >= 0) attrs['data-t'] = s.t[k]; else attrs['data-op'] = s.first[k];
      var r = sv('rect', attrs, svg);
      sv('title', {}, r).textContent = (s.t[k] >= 0 ? tensorLabel(T, s.t[k]) : 'scratch of op ' + opLabel(T, s.first[k])) +
          '\n' + fmtBytes(s.bytes[k]) + ' at offset ' + s.off[k] + ', ops ' + s.first[k] + '-' + s.last[k];
    }
    sv('line', { 'class': 'arena-size', x1: L, x2: R, y1: y(a.bytes), y2: y(a.bytes), stroke: '#222' }, svg);
    sv('text', { x: R, y: y(a.bytes) - 4, 'text-anchor': 'end' }, svg).textContent = 'arena ' + a.id + ': ' + fmtBytes(a.bytes);
    sv('line', { 'class': 'lower-bound', x1: L, x2: R, y1: y(a.lb), y2: y(a.lb), stroke: '#B2182B', 'stroke-dasharray': '5 3' }, svg);
    if (a.lb !== a.bytes)
      sv('text', { x: R, y: y(a.lb) + 12, 'text-anchor': 'end', fill: '#B2182B' }, svg).textContent = 'lower bound ' + fmtBytes(a.lb);
    /* free bytes per operator */
    var fy = TOP + PH + GAP, fmax = 1;
    for (i = 0; i < a.free.length; i++) fmax = Math.max(fmax, a.free[i]);
    sv('text', { x: L, y: fy - 6 }, svg).textContent = 'free bytes per operator (at most ' + fmtBytes(fmax === 1 ? 0 : fmax) + ')';
    for (i = 0; i < a.free.length; i++) {
      if (!a.free[i]) continue;
      var h = a.free[i] / fmax * FH;
      var fr = sv('rect', { 'class': 'free', x: x(i), y: fy + FH - h, width: Math.max(1, x(i + 1) - x(i) - 0.5), height: h, fill: '#BBB' }, svg);
      sv('title', {}, fr).textContent = 'op ' + opLabel(T, i) + ': ' + fmtBytes(a.free[i]) + ' free';
    }
    var step = niceStep(nOps, 10, false);
    for (var o = 0; o <= nOps; o += step)
      sv('text', { x: x(o), y: fy + FH + 14, 'text-anchor': 'middle' }, svg).textContent = String(o);
    sv('text', { x: L, y: H - 3 }, svg).textContent = 'operator index' + (left ? '; the ' + left + ' smallest slots are left out' : '');
  }

  /* ---- selection and the detail panel ------------------------------------------------------- */
  var detail = document.getElementById('detail');
  function link(text, fn) {
    var a = el('a', null, text);
    a.href = '#';
    a.addEventListener('click', function (e) { e.preventDefault(); fn(); });
    return a;
  }
  function kv(dl, k, v) {
    dl.appendChild(el('dt', null, k));
    var dd = el('dd');
    if (typeof v === 'string') dd.textContent = v; else dd.appendChild(v);
    dl.appendChild(dd);
  }
  function opLinks(T, ops) {
    var span = el('span');
    if (!ops || !ops.length) { span.textContent = 'none'; return span; }
    ops.forEach(function (o, i) {
      if (i) span.appendChild(document.createTextNode(', '));
      span.appendChild(link(opLabel(T, o), function () { selectOp(T.ti, o); }));
    });
    return span;
  }
  function tensorLinks(T, ts) {
    var span = el('span');
    var list = ts.filter(function (x) { return x >= 0; });
    if (!list.length) { span.textContent = 'none'; return span; }
    list.forEach(function (t, i) {
      if (i) span.appendChild(document.createTextNode(', '));
      span.appendChild(link(tensorLabel(T, t), function () { selectTensor(T.ti, t); }));
    });
    return span;
  }
  var MGR_TEXT = ['never held during the reference run', 'static: a slot of a planned arena',
                  'dynamic: a block of its own, allocated while running',
                  'static: a block of its own that outlives runs', 'io: an input or output buffer',
                  'const: mapped from the model'];
  function tensorDetail(T, id, box) {
    var t = T.tensors, p = T.tpos[id];
    if (p === undefined) { box.appendChild(el('p', 'muted', 'absent from this trace')); return; }
    var dl = el('dl', 'kv');
    kv(dl, 'tensor', '#' + id);
    kv(dl, 'size', both(t.bytes[p]));
    kv(dl, 'kind', MGR_TEXT[t.mgr[p]] || D.managers[t.mgr[p]]);
    if (t.first[p] >= 0)
      kv(dl, 'lifetime', 'op ' + opLabel(T, t.first[p]) + ' to op ' + opLabel(T, t.last[p]) + ' (' +
         (t.last[p] - t.first[p] + 1) + ' operator' + (t.last[p] === t.first[p] ? '' : 's') + ', run ' + T.refRun + ')');
    else kv(dl, 'lifetime', t.cst[p] ? 'the whole session (constant)' : 'held during no operator of run ' + T.refRun);
    var prods = (T.producers[id] || []).slice();
    if (t.prod[p] >= 0 && prods.indexOf(t.prod[p]) < 0) prods.unshift(t.prod[p]);
    kv(dl, 'produced by', prods.length ? opLinks(T, prods) : (t.cst[p] ? 'the model (constant)' : 'none: a model input'));
    kv(dl, 'consumed by', opLinks(T, T.consumers[id]));
    if (t.mgr[p] === 1 && t.off[p] >= 0) {
      var a = T.arena;
      kv(dl, 'in the arena', 'arena ' + t.arena[p] + ', offset ' + t.off[p].toLocaleString('en-US') + ' to ' +
         (t.off[p] + t.bytes[p]).toLocaleString('en-US') + (a && a.id === t.arena[p] ? ' of ' + both(a.bytes) : ''));
    } else kv(dl, 'in the arena', 'no: not an arena slot');
    box.appendChild(dl);
  }
  function opDetail(T, op, box) {
    var o = T.ops, p = T.opos[op];
    if (p === undefined) { box.appendChild(el('p', 'muted', 'absent from this trace')); return; }
    var dl = el('dl', 'kv');
    kv(dl, 'operator', opLabel(T, op));
    kv(dl, 'steps', String(o.steps[p]));
    kv(dl, 'time', fmtNs(o.time[p]) + ' in all' + (o.steps[p] ? ', ' + fmtNs(Math.round(o.time[p] / o.steps[p])) + ' each' : ''));
    kv(dl, 'allocated', both(o.alloc[p]));
    kv(dl, 'scratch', both(o.scratch[p]));
    kv(dl, 'kernel', both(o.kernel[p]));
    kv(dl, 'inputs', tensorLinks(T, o['in'][p]));
    kv(dl, 'outputs', tensorLinks(T, o.out[p]) );
    kv(dl, 'output bytes', both(o.outputs[p]));
    box.appendChild(dl);
  }
  function showDetail() {
    detail.textContent = '';
    if (!sel) { detail.hidden = true; return; }
    detail.hidden = false;
    var close = el('button', 'close', '\u00d7');
    close.type = 'button';
    close.title = 'close';
    close.addEventListener('click', function () { select(null); });
    detail.appendChild(close);
    var T0 = null, id0 = null;
    traces.forEach(function (T) {
      var id = sel.ids[T.ti];
      if (T0 === null && id !== undefined && id !== null && id >= 0) { T0 = T; id0 = id; }
    });
    if (!T0) { T0 = traces[0]; id0 = sel.ids[0]; }
    var name = sel.k === 't' ? tensorLabel(T0, id0) : opLabel(T0, id0);
    detail.appendChild(el('h3', null, (sel.k === 't' ? 'Tensor ' : 'Operator ') + name));
    traces.forEach(function (T) {
      var box = el('div', 'side');
      if (traces.length > 1) box.appendChild(el('h4', null, 'trace ' + T.label));
      var id = sel.ids[T.ti];
      if (id === undefined || id === null || id < 0) box.appendChild(el('p', 'muted', 'absent from this trace'));
      else if (sel.k === 't') tensorDetail(T, id, box);
      else opDetail(T, id, box);
      detail.appendChild(box);
    });
  }
  var marked = [];
  function mark(nodes, cls) {
    nodes.forEach(function (n) { n.classList.add(cls); marked.push([n, cls]); });
  }
  function q(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
  function highlight() {
    marked.forEach(function (m) { m[0].classList.remove(m[1]); });
    marked = [];
    q('.chart').forEach(function (c) { c.classList.toggle('dim', !!sel || !!matches); });
    if (sel) {
      traces.forEach(function (T) {
        var id = sel.ids[T.ti], scope = '[data-trace="' + T.ti + '"] ';
        if (id === undefined || id === null || id < 0) return;
        if (sel.k === 't') {
          mark(q(scope + '[data-t="' + id + '"]'), 'sel');
          var rel = (T.producers[id] || []).concat(T.consumers[id] || []);
          rel.forEach(function (o) { mark(q(scope + '[data-op="' + o + '"]'), 'rel'); });
        } else {
          mark(q(scope + '[data-op="' + id + '"]'), 'sel');
          var p = T.opos[id];
          if (p !== undefined)
            T.ops['in'][p].concat(T.ops.out[p]).forEach(function (t) {
              if (t >= 0) mark(q(scope + '[data-t="' + t + '"]'), 'rel');
            });
        }
      });
      /* table rows (the tables speak of trace 0, or of both on the comparison page) */
      var a = sel.ids[0], b = sel.ids[1];
      if (sel.k === 't') {
        if (a >= 0) mark(q('tr[data-t="' + a + '"]').concat(q('tr[data-ta="' + a + '"]')), 'sel');
        if (b >= 0) mark(q('tr[data-tb="' + b + '"]'), 'sel');
      } else if (a >= 0) mark(q('tr[data-op="' + a + '"]'), 'sel');
    }
    if (matches) {
      traces.forEach(function (T) {
        var scope = '[data-trace="' + T.ti + '"] ';
        matches.t[T.ti].forEach(function (t) { mark(q(scope + '[data-t="' + t + '"]'), 'match'); });
      });
      matches.t[0].forEach(function (t) { mark(q('tr[data-t="' + t + '"]'), 'match'); });
    }
  }
  function select(s) {
    sel = s;
    showDetail();
    highlight();
    group.charts.forEach(function (c) { c.draw(); });
  }
  /* the same tensor or operator in the other trace: by name, else by index */
  function counterpart(Tfrom, id, isOp) {
    return traces.map(function (T) {
      if (T === Tfrom) return id;
      var names = isOp ? T.ops.name : T.tensors.name, idx = isOp ? T.ops.index : T.tensors.index;
      var name = isOp ? (Tfrom.opos[id] !== undefined ? Tfrom.ops.name[Tfrom.opos[id]] : null)
                      : (Tfrom.tpos[id] !== undefined ? Tfrom.tensors.name[Tfrom.tpos[id]] : null);
      if (!isOp && name) { for (var i = 0; i < names.length; i++) if (names[i] === name) return idx[i]; return -1; }
      var pos = isOp ? T.opos[id] : T.tpos[id];
      return pos === undefined ? -1 : id;
    });
  }
  function selectTensor(ti, t) { select({ k: 't', ids: counterpart(traces[ti], t, false) }); }
  function selectOp(ti, op) { select({ k: 'op', ids: counterpart(traces[ti], op, true) }); }

  document.addEventListener('click', function (e) {
    var target = e.target;
    if (!target.closest) return;
    if (target.closest('#detail') || target.closest('th') || target.closest('.search')) return;
    var row = target.closest('tr[data-t], tr[data-op], tr[data-ta]');
    if (row) {
      if (row.hasAttribute('data-ta')) {
        var a = +row.getAttribute('data-ta'), b = +row.getAttribute('data-tb');
        select({ k: 't', ids: [a, b] });
      } else if (row.hasAttribute('data-t')) selectTensor(0, +row.getAttribute('data-t'));
      else selectOp(0, +row.getAttribute('data-op'));
      return;
    }
    var shape = target.closest('.chart [data-t], .chart [data-op]');
    if (shape) {
      var host = shape.closest('[data-trace]'), ti = host ? +host.getAttribute('data-trace') : 0;
      if (shape.hasAttribute('data-t')) selectTensor(ti, +shape.getAttribute('data-t'));
      else selectOp(ti, +shape.getAttribute('data-op'));
    }
  });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Escape' && sel) select(null);
  });

  /* ---- search ---------------------------------------------------------------------------- */
  var box = document.getElementById('search'), results = document.getElementById('search-results');
  function search() {
    var text = box.value.trim().toLowerCase();
    results.textContent = '';
    if (!text) { matches = null; highlight(); return; }
    var found = [], seen = {};
    matches = { t: traces.map(function () { return []; }), op: traces.map(function () { return []; }) };
    traces.forEach(function (T) {
      var t = T.tensors, o = T.ops, i;
      for (i = 0; i < t.index.length; i++) {
        var name = t.name[i] || '#' + t.index[i];
        if (name.toLowerCase().indexOf(text) < 0 && ('#' + t.index[i]) !== text) continue;
        matches.t[T.ti].push(t.index[i]);
        if (seen['t' + name]) continue;
        seen['t' + name] = 1;
        found.push({ k: 't', ti: T.ti, id: t.index[i], name: name, note: 'tensor #' + t.index[i] + ', ' + fmtBytes(t.bytes[i]) + ', ' + D.managers[t.mgr[i]], bytes: t.bytes[i] });
      }
      for (i = 0; i < o.index.length; i++) {
        var label = opLabel(T, o.index[i]);
        if (label.toLowerCase().indexOf(text) < 0) continue;
        matches.op[T.ti].push(o.index[i]);
        if (seen['o' + label]) continue;
        seen['o' + label] = 1;
        found.push({ k: 'op', ti: T.ti, id: o.index[i], name: label, note: 'operator, ' + o.steps[i] + ' steps', bytes: -1 });
      }
    });
    found.slice(0, 60).forEach(function (f, i) {
      var li = el('li', i === 0 ? 'on' : null, f.name);
      li.setAttribute(f.k === 't' ? 'data-st' : 'data-sop', f.id);
      li.setAttribute('data-name', f.name);
      li.appendChild(document.createTextNode(' '));
      li.appendChild(el('span', 'muted', f.note));
      li.addEventListener('click', function () { pick(f); });
      results.appendChild(li);
    });
    if (found.length > 60) results.appendChild(el('li', 'muted', (found.length - 60) + ' more: type more of the name'));
    if (!found.length) results.appendChild(el('li', 'muted', 'no tensor or operator named like that'));
    results.setAttribute('data-count', found.length);
    search.found = found;
    highlight();
  }
  function pick(f) {
    results.textContent = '';
    if (f.k === 't') selectTensor(f.ti, f.id); else selectOp(f.ti, f.id);
  }
  if (box) {
    box.addEventListener('input', search);
    box.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' && search.found && search.found.length) pick(search.found[0]);
      if (e.key === 'Escape') { box.value = ''; search(); }
    });
  }

  /* ---- sortable tables ------------------------------------------------------------------ */
  function key(td) {
    var v = td.getAttribute('data-v');
    return v === null ? td.textContent.toLowerCase() : parseFloat(v);
  }
  q('table.sortable th').forEach(function (th) {
    th.addEventListener('click', function () {
      var table = th.closest('table'), body = table.tBodies[0], col = th.cellIndex;
      var asc = th.getAttribute('data-dir') === 'desc', dir = asc ? 1 : -1;
      table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-dir'); });
      th.setAttribute('data-dir', asc ? 'asc' : 'desc');
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a.cells[col]), y = key(b.cells[col]);
        return x > y ? dir : (y > x ? -dir : 0);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });

  /* ---- start -------------------------------------------------------------------------------- */
  q('.timeline[data-trace]').forEach(function (host) {
    var T = traces[+host.getAttribute('data-trace')];
    if (!T || !T.tl || !T.L.n) { noData(host, 'No data: the trace has no timeline.'); return; }
    group.total = Math.max(group.total, T.L.total);
    group.charts.push(new Timeline(host, T));
  });
  group.u1 = group.total;
  q('.chart.lifetimes[data-trace]').forEach(function (host) { drawLifetimes(host, traces[+host.getAttribute('data-trace')]); });
  q('.chart.arena[data-trace]').forEach(function (host) { drawArena(host, traces[+host.getAttribute('data-trace')]); });
  group.charts.forEach(function (c) { c.draw(); });
  var resizing = null;
  window.addEventListener('resize', function () {
    clearTimeout(resizing);
    resizing = setTimeout(function () { group.charts.forEach(function (c) { c.draw(); }); }, 100);
  });
  report.readyMs = performance.now();
  report.select = function (k, ti, id) { if (k === 't') selectTensor(ti, id); else selectOp(ti, id); };
  document.documentElement.setAttribute('data-ready', 'true');
})();
