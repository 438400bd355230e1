/* gpumon report: the interactive charts (uPlot) drawn from the JSON block gpumon-series.
   Hover: a read-out of every series at the cursor, the same instant marked on every chart and the
   heatmap. Drag (mouse, touch, pen) on a chart or the heatmap: every chart zooms to that window.
   Double-click, Escape or the button: back to the whole recording. Arrow keys pan, + and - zoom.
   A finding, a phase or an event row zooms to its span when clicked. Nothing is fetched. */
(function () {
  "use strict";
  var src = document.getElementById("gpumon-series");
  if (!src || typeof uPlot === "undefined") return;
  var D = JSON.parse(src.textContent);
  var S = D.start / 1e6, SPAN = (D.end - D.start + 1) / 1e6, N = D.n, B = SPAN / N, E = S + SPAN;
  var COLORS = ["#0969da", "#bc4c00", "#1a7f37", "#57606a"];
  var PHASES = ["rgba(130,80,223,.12)", "rgba(191,135,0,.14)", "rgba(27,124,131,.12)", "rgba(207,34,46,.10)"];
  var HEAT = ["#ffffd9", "#edf8b1", "#c7e9b4", "#7fcdbb", "#41b6c4", "#1d91c0", "#225ea8", "#253494", "#1a2670", "#081d58"];
  var UNITS = { "C": "°C" };
  var xs = new Float64Array(N);
  for (var i = 0; i < N; i++) xs[i] = S + (i + 0.5) * B;
  var plots = [], view = [S, E], heat = null, hidden = {};
  D.heat.forEach(function (r) { r.mean = unpack(r.mean, r.at, false); });
  document.documentElement.classList.add("js");

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }
  function pad(n, w) { return String(n).padStart(w || 2, "0"); }
  function when(t, ms) {
    var d = new Date(Math.round(t * 1000));
    var s = d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " +
      pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds());
    return ms ? s + "." + pad(d.getUTCMilliseconds(), 3) : s;
  }
  function dur(s) {
    if (s < 1) return Math.round(s * 1000) + " ms";
    if (s < 90) return (+s.toFixed(s < 10 ? 1 : 0)) + " s";
    if (s < 5400) return (+(s / 60).toFixed(1)) + " min";
    if (s < 172800) return (+(s / 3600).toFixed(1)) + " h";
    return (+(s / 86400).toFixed(1)) + " days";
  }
  /* `false` marks an empty bucket inside a joined run: undefined, which uPlot draws across. */
  /* A packed column back to N buckets: "uK" is K joined empty buckets (`joinedAs`), "nK" K nulls. */
  function unpack(a, at, joinedAs) {
    var out = new Array(N).fill(null), b = at;
    for (var k = 0; k < a.length; k++) {
      var v = a[k];
      if (typeof v === "string") {
        var run = +v.slice(1);
        if (v[0] === "u") for (var j = 0; j < run; j++) out[b + j] = joinedAs;
        b += run;
      } else {
        out[b++] = v === false ? joinedAs : v;
      }
    }
    return out;
  }
  function joined(a, at) { return unpack(a, at, undefined); }
  function num(v) { return v == null ? "–" : v.toLocaleString("en-US", { maximumFractionDigits: 2 }); }
  function unit(u) { u = UNITS[u] || u; return u ? (u === "%" ? " %" : " " + u) : ""; }
  function quote(p) { return /^[\w@%+=:,./-]+$/.test(p) ? p : "'" + p.replace(/'/g, "'\\''") + "'"; }
  function iso(t) { return new Date(t * 1000).toISOString().replace(".000Z", "Z"); }
  function bucketOf(t) { return Math.max(0, Math.min(N - 1, Math.floor((t - S) / B))); }
  var precise = B < 1;

  /* --- the shared window ------------------------------------------------------------------- */
  function zoom(a, b) {
    a = Math.max(S, a); b = Math.min(E, b);
    var least = Math.min(SPAN, 4 * B);
    if (b - a < least) { var m = (a + b) / 2; a = Math.max(S, m - least / 2); b = Math.min(E, a + least); a = b - least; }
    view = [a, b];
    plots.forEach(function (p) { p.u.setScale("x", { min: a, max: b }); });
    drawHeat();
    describeView();
  }
  function reset() { zoom(S, E); }
  function pan(f) { var w = view[1] - view[0], d = w * f; if (view[0] + d < S) d = S - view[0]; if (view[1] + d > E) d = E - view[1]; zoom(view[0] + d, view[1] + d); }
  function scale(f) { var m = (view[0] + view[1]) / 2, w = (view[1] - view[0]) * f / 2; zoom(m - w, m + w); }
  function instant(t) {
    plots.forEach(function (p) {
      if (p.box.offsetParent === null) return;
      p.u.setCursor({ left: p.u.valToPos(t, "x"), top: p.u.over.clientHeight / 2 });
    });
    markHeat(t);
  }
  function keys(e) {
    var k = e.key;
    if (k === "ArrowLeft") pan(-0.25); else if (k === "ArrowRight") pan(0.25);
    else if (k === "+" || k === "=") scale(0.5); else if (k === "-" || k === "_") scale(2);
    else if (k === "Escape" || k === "0" || k === "Home") reset(); else return;
    e.preventDefault();
  }
  function bandAt(t) {
    for (var i = 0; i < D.bands.length; i++) { var b = D.bands[i]; if (t >= b.start / 1e6 && t < b.end / 1e6) return b; }
    return null;
  }
  /* Pointer drag on `area` (time from a clientX by `tAt`): a drag zooms, a tap marks the instant
     (or zooms to the phase under it). `sel(x0, x1)` draws the selection, `sel()` clears it. */
  function drag(area, tAt, sel, labelStrip) {
    var down = null;
    area.addEventListener("pointerdown", function (e) {
      if (e.button !== 0) return;
      down = { x: e.clientX, t: tAt(e.clientX) };
      try { area.setPointerCapture(e.pointerId); } catch (_) { /* synthetic pointers */ }
    });
    area.addEventListener("pointermove", function (e) { if (down) sel(down.x, e.clientX); });
    function up(e) {
      if (!down) return;
      var d = Math.abs(e.clientX - down.x), a = down.t, b = tAt(e.clientX);
      down = null; sel();
      if (e.type === "pointercancel") return;
      if (d > 4) zoom(Math.min(a, b), Math.max(a, b));
      else {
        /* A tap on a phase's label strip (the top of a chart) zooms to the phase. */
        var band = bandAt(b), top = e.clientY - area.getBoundingClientRect().top;
        if (band && labelStrip && top < 16) zoom(band.start / 1e6, band.end / 1e6); else instant(b);
      }
    }
    area.addEventListener("pointerup", up);
    area.addEventListener("pointercancel", up);
    area.addEventListener("dblclick", function (e) { e.preventDefault(); reset(); });
  }

  /* Time tick labels in UTC, as precise as the window needs. */
  function ticks(u, splits) {
    var w = view[1] - view[0];
    return splits.map(function (t) {
      var s = when(t, w < 10);
      return w > 2 * 86400 ? s.slice(5, 16) : w > 600 ? s.slice(11, 16) : w < 10 ? s.slice(11, 23) : s.slice(11, 19);
    });
  }

  /* --- the charts ------------------------------------------------------------------------- */
  function yRange(inc) {
    return function (u, lo, hi) {
      if (lo == null || hi == null || !isFinite(lo) || !isFinite(hi)) { lo = inc.length ? Math.min.apply(null, inc) : 0; hi = inc.length ? Math.max.apply(null, inc) : 1; }
      inc.forEach(function (v) { lo = Math.min(lo, v); hi = Math.max(hi, v); });
      if (hi === lo) hi = lo + 1;
      var r = uPlot.rangeNum(lo, hi, 0.05, true);
      return [lo >= 0 ? Math.max(0, r[0]) : r[0], r[1]];
    };
  }
  function overlays(c) {
    return {
      drawAxes: [function (u) {
        var x = u.ctx, top = u.bbox.top, h = u.bbox.height, l = u.bbox.left, r = l + u.bbox.width;
        x.save();
        D.bands.forEach(function (b) {
          var x0 = Math.max(l, u.valToPos(b.start / 1e6, "x", true)), x1 = Math.min(r, u.valToPos(b.end / 1e6, "x", true));
          if (x1 <= x0) return;
          x.fillStyle = PHASES[b.color % 4]; x.fillRect(x0, top, x1 - x0, h);
          x.fillStyle = "#59636e"; x.font = (10 * devicePixelRatio) + "px system-ui,sans-serif";
          if (x1 - x0 > 40 * devicePixelRatio) x.fillText(b.label, x0 + 3 * devicePixelRatio, top + 11 * devicePixelRatio, x1 - x0 - 6);
        });
        x.restore();
      }],
      draw: [function (u) {
        var x = u.ctx, top = u.bbox.top, h = u.bbox.height, l = u.bbox.left, r = l + u.bbox.width;
        x.save(); x.strokeStyle = "#cf222e"; x.lineWidth = 1.5 * devicePixelRatio; x.setLineDash([3 * devicePixelRatio, 2 * devicePixelRatio]);
        c.marks.forEach(function (m) {
          var px = u.valToPos(m[0] / 1e6, "x", true);
          if (px < l || px > r) return;
          x.beginPath(); x.moveTo(px, top); x.lineTo(px, top + h); x.stroke();
        });
        x.restore();
      }]
    };
  }
  /* The bucket with a value nearest to `i`, within 6 px (a short recording leaves most buckets empty). */
  function nearest(u, info, i) {
    function has(k) { return info.some(function (f) { return u.data[f.v][k] != null; }); }
    if (has(i)) return i;
    var px = u.over.clientWidth || 1, k = Math.ceil(6 * (u.scales.x.max - u.scales.x.min) / px / B);
    for (var d = 1; d <= k; d++) {
      if (i - d >= 0 && has(i - d)) return i - d;
      if (i + d < N && has(i + d)) return i + d;
    }
    return i;
  }
  function readout(p) {
    var u = p.u, i = u.cursor.idx, c = p.c;
    if (i == null || u.cursor.left < 0) { p.ro.textContent = p.idle; delete p.ro.dataset.t0; return; }
    i = nearest(u, p.info, i);
    var t0 = S + i * B, parts = [];
    p.info.forEach(function (f) {
      var v = u.data[f.v][i], s = f.label + " " + num(v) + unit(c.unit);
      if (f.lo != null && v != null && u.data[f.lo][i] !== u.data[f.hi][i]) s += " (" + num(u.data[f.lo][i]) + "–" + num(u.data[f.hi][i]) + ")";
      parts.push(s);
    });
    var at = when(t0, precise) + (B >= 1.5 ? " – " + when(t0 + B, precise).slice(11) : "") + " UTC";
    p.ro.textContent = at + " · " + c.who + " · " + parts.join(" · ");
    p.ro.dataset.t0 = Math.round(t0 * 1e6); p.ro.dataset.t1 = Math.round((t0 + B) * 1e6);
    markHeat(u.data[0][i]);
  }
  function build(c) {
    var title = document.getElementById(c.id + "-t");
    var fig = title && title.closest("figure");
    if (!fig) return;
    var box = el("div", "ix"), data = [xs], series = [{}], bands = [], info = [];
    box.dataset.chart = c.kind; box.dataset.id = c.id; box.tabIndex = 0;
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", c.title + ": drag to zoom, arrow keys pan, + and - zoom, Escape resets");
    box.appendChild(el("div", "ixt", c.title));
    var ro = box.appendChild(el("div", "ro"));
    c.series.forEach(function (s) {
      var col = COLORS[s.color % 4], f = { label: s.label };
      if (s.style === "envelope") {
        var hi = data.push(joined(s.max, s.at)) - 1; series.push({ label: s.label + " max", stroke: "transparent", width: 0, points: { show: false } });
        var lo = data.push(joined(s.min, s.at)) - 1; series.push({ label: s.label + " min", stroke: "transparent", width: 0, points: { show: false } });
        bands.push({ series: [hi, lo], fill: col + "38" });
        f.lo = lo; f.hi = hi;
      }
      f.v = data.push(joined(s.style === "limit" ? s.max : s.mean, s.at)) - 1;
      series.push({ label: s.label, stroke: col, width: s.style === "limit" ? 1.3 : 1.5, dash: s.style === "limit" ? [6, 4] : undefined });
      info.push(f);
    });
    fig.appendChild(box);
    var opts = {
      width: Math.max(300, box.clientWidth), height: 190, legend: { show: false }, series: series, bands: bands,
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); },
      cursor: { y: false, sync: { key: "gpumon", setSeries: false }, drag: { x: false, y: false }, bind: { dblclick: function () { return null; } } },
      scales: { x: { time: true, min: view[0], max: view[1], auto: false }, y: { range: yRange(c.include) } },
      axes: [{ stroke: "#1b1f24", grid: { stroke: "#e6e9ed" }, ticks: { stroke: "#e6e9ed" }, values: ticks, space: 70 },
             { label: c.y_label, size: 62, labelSize: 18, stroke: "#1b1f24", grid: { stroke: "#e6e9ed" }, ticks: { stroke: "#e6e9ed" } }],
      hooks: overlays(c)
    };
    var p = { c: c, box: box, ro: ro, info: info, idle: "Hover for values; drag to zoom; double-click to reset." };
    opts.hooks.setCursor = [function () { readout(p); }];
    p.u = new uPlot(opts, data, box);
    ro.textContent = p.idle;
    var over = p.u.over;
    drag(over, function (cx) { return p.u.posToVal(cx - over.getBoundingClientRect().left, "x"); }, function (x0, x1) {
      if (x0 == null) { p.u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false); return; }
      var r = over.getBoundingClientRect(), a = Math.max(0, Math.min(x0, x1) - r.left), b = Math.min(r.width, Math.max(x0, x1) - r.left);
      p.u.setSelect({ left: a, top: 0, width: b - a, height: r.height }, false);
    }, true);
    over.addEventListener("mouseleave", function () { markHeat(null); });
    box.addEventListener("keydown", keys);
    plots.push(p);
  }

  /* --- the heatmap (canvas; the same colours as the static one) ---------------------------- */
  var HL = 170, HR = 20, ROW = 22, AX = 30;
  function buildHeat() {
    var svg = document.querySelector("svg.heatmap");
    if (!svg || !D.heat.length) return;
    var box = el("div", "ix hm"), cv = el("canvas"), selD = el("div", "sel"), cur = el("div", "cur"), ro = el("div", "ro");
    box.tabIndex = 0; box.dataset.chart = "heatmap";
    box.setAttribute("role", "group"); box.setAttribute("aria-label", "Utilization by GPU: drag to zoom, arrow keys pan, Escape resets");
    box.appendChild(ro); box.appendChild(cv); box.appendChild(selD); box.appendChild(cur);
    svg.closest("figure").appendChild(box);
    heat = { box: box, cv: cv, sel: selD, cur: cur, ro: ro, rows: [], strag: {} };
    /* A job report's stragglers, marked on the static heatmap's rows: outlined here too. */
    svg.querySelectorAll("g.hm-row[data-straggler]").forEach(function (g) { heat.strag[g.dataset.host + "\u0000" + g.dataset.gpu] = 1; });
    ro.textContent = "Hover for each GPU's utilization; drag to zoom.";
    function tAt(cx) { var r = cv.getBoundingClientRect(); return view[0] + (cx - r.left - HL) / (r.width - HL - HR) * (view[1] - view[0]); }
    drag(cv, tAt, function (x0, x1) {
      if (x0 == null) { selD.style.display = "none"; return; }
      var r = cv.getBoundingClientRect(), a = Math.max(HL, Math.min(x0, x1) - r.left), b = Math.min(r.width - HR, Math.max(x0, x1) - r.left);
      selD.style.cssText = "display:block;left:" + a + "px;width:" + Math.max(0, b - a) + "px;top:" + cv.offsetTop + "px;height:" + (heat.rows.length * ROW) + "px";
    });
    cv.addEventListener("pointermove", function (e) {
      var t = tAt(e.clientX);
      if (t < view[0] || t > view[1]) return;
      instant(t);
      var r = cv.getBoundingClientRect(), row = heat.rows[Math.floor((e.clientY - r.top) / ROW)];
      if (row) { var v = heatAt(row, bucketOf(t)); ro.textContent = when(S + bucketOf(t) * B, precise) + " UTC · " + row.label + (straggles(row) ? " (straggler)" : "") + " · utilization.gpu " + num(v) + " %"; }
    });
    cv.addEventListener("pointerleave", function () { markHeat(null); });
    box.addEventListener("keydown", keys);
  }
  function straggles(r) { return heat.strag[r.host + "\u0000" + r.gpu] === 1; }
  function heatAt(row, b) {
    while (b > 0 && row.mean[b] === false) b--;
    return row.mean[b] === false ? null : row.mean[b];
  }
  function drawHeat() {
    if (!heat) return;
    var dpr = window.devicePixelRatio || 1, w = Math.max(400, heat.box.clientWidth);
    heat.rows = D.heat.filter(function (r) { return !hidden[r.host] && !hidden[r.host + "\u0000" + r.gpu]; });
    var h = heat.rows.length * ROW + AX, cv = heat.cv, x = cv.getContext("2d");
    cv.width = w * dpr; cv.height = h * dpr; cv.style.width = w + "px"; cv.style.height = h + "px";
    cv.dataset.rows = heat.rows.map(function (r) { return r.gpu; }).join(",");
    cv.dataset.stragglers = heat.rows.map(function (r, k) { return straggles(r) ? k : -1; }).filter(function (k) { return k >= 0; }).join(",");
    x.setTransform(dpr, 0, 0, dpr, 0, 0);
    x.clearRect(0, 0, w, h);
    var pw = w - HL - HR, a = view[0], span = view[1] - view[0];
    function px(t) { return HL + (t - a) / span * pw; }
    var i0 = bucketOf(a), i1 = bucketOf(view[1]);
    x.font = "12px system-ui,sans-serif"; x.textBaseline = "middle"; x.textAlign = "right";
    heat.rows.forEach(function (r, k) {
      var y = k * ROW;
      x.fillStyle = "#f3f3f3"; x.fillRect(HL, y, pw, ROW - 3);
      var carry = heatAt(r, i0);
      for (var b = i0; b <= i1; b++) {
        var v = r.mean[b];
        if (v === false) v = carry; else carry = v;
        if (v == null) continue;
        var x0 = Math.max(HL, px(S + b * B)), x1 = Math.min(HL + pw, px(S + (b + 1) * B));
        x.fillStyle = HEAT[Math.min(9, Math.max(0, Math.floor(v / 10)))];
        x.fillRect(x0, y, Math.max(1, x1 - x0 + 0.5), ROW - 3);
      }
      var st = straggles(r);
      x.font = (st ? "bold " : "") + "12px system-ui,sans-serif";
      x.fillStyle = st ? "#c00" : "#1b1f24"; x.fillText(r.label, HL - 8, y + (ROW - 3) / 2, HL - 12);
    });
    x.font = "12px system-ui,sans-serif";
    D.bands.forEach(function (b) {
      var x0 = Math.max(HL, px(b.start / 1e6)), x1 = Math.min(HL + pw, px(b.end / 1e6));
      if (x1 > x0) { x.fillStyle = PHASES[b.color % 4]; x.fillRect(x0, 0, x1 - x0, heat.rows.length * ROW - 3); }
    });
    /* Outlines after the phase bands, so that nothing covers them. */
    heat.rows.forEach(function (r, k) {
      if (!straggles(r)) return;
      x.strokeStyle = "#c00"; x.lineWidth = 2; x.strokeRect(HL + 1, k * ROW + 1, pw - 2, ROW - 5);
    });
    x.textAlign = "center"; x.fillStyle = "#1b1f24";
    var yb = heat.rows.length * ROW + 10;
    for (var k = 0; k <= 6; k++) {
      var t = a + span * k / 6;
      x.textAlign = k === 0 ? "left" : k === 6 ? "right" : "center";
      x.fillText(when(t, span < 60).slice(span > 172800 ? 0 : 11, span > 172800 ? 16 : undefined), px(t), yb);
    }
    x.textAlign = "center";
    x.fillStyle = "#59636e"; x.fillText("time (UTC)", HL + pw / 2, yb + 14);
  }
  function markHeat(t) {
    if (!heat) return;
    if (t == null || t < view[0] || t > view[1]) { heat.cur.style.display = "none"; return; }
    var w = heat.cv.clientWidth, pw = w - HL - HR, left = HL + (t - view[0]) / (view[1] - view[0]) * pw;
    heat.cur.style.cssText = "display:block;left:" + left + "px;top:" + heat.cv.offsetTop + "px;height:" + (heat.rows.length * ROW - 3) + "px";
  }

  /* --- the bar: window, resolution, reset, toggles ---------------------------------------- */
  var bar = el("div", "ix-bar"), info = el("span", "ix-view"), res = el("p", "note ix-res");
  bar.id = "ix-bar";
  function describeView() {
    var whole = view[0] <= S && view[1] >= E;
    info.textContent = (whole ? "Whole recording: " : "Zoomed: ") + when(view[0]) + " – " + when(view[1]) + " UTC (" + dur(view[1] - view[0]) + ")";
    info.dataset.from = Math.round(view[0] * 1e6); info.dataset.to = Math.round(view[1] * 1e6);
    var iv = D.interval_s, cmd = "gpumon report " + (D.inputs.length > 6 ? "INPUTS…" : D.inputs.map(quote).join(" ")) + " --since " + iso(Math.floor(view[0])) + " --until " + iso(Math.ceil(view[1])) + " -o window.html";
    res.textContent = "";
    if (iv > 0 && B <= iv * 1.001) {
      res.dataset.resolution = "recording";
      res.append("At the recording's resolution: one point per row (rows every " + dur(iv) + ").");
    } else {
      res.dataset.resolution = "bucketed";
      var rows = iv > 0 ? ", about " + Math.round(B / iv).toLocaleString("en-US") + " rows each" : "";
      res.append("Bucketed: each point is the min, mean and max of a " + dur(B) + " bucket" + rows + ". For every row of this window, write a report of it" +
        (iv > 0 ? " (a window up to " + dur(N * iv) + " long is drawn row by row)" : "") + ": ");
      res.appendChild(el("code", null, cmd));
    }
  }
  function toggles() {
    var hosts = {}, box = el("span", "ix-tg");
    D.gpus.forEach(function (g) { hosts[g.host] = true; });
    var multi = Object.keys(hosts).length > 1;
    function add(key, label, host, gpu) {
      var l = el("label"), c = el("input");
      c.type = "checkbox"; c.checked = true; c.dataset.host = host; if (gpu != null) c.dataset.gpu = gpu;
      c.addEventListener("change", function () { if (c.checked) delete hidden[key]; else hidden[key] = true; apply(); });
      l.appendChild(c); l.append(" " + label); box.appendChild(l);
    }
    if (multi) Object.keys(hosts).forEach(function (h) { add(h, "host " + h, h, null); });
    D.gpus.forEach(function (g) { add(g.host + "\u0000" + g.gpu, g.label, g.host, g.gpu); });
    if (D.gpus.length > 1 || multi) { bar.appendChild(el("span", null, multi ? "Show: " : "GPUs: ")); bar.appendChild(box); }
  }
  function apply() {
    document.querySelectorAll("section.host").forEach(function (s) {
      var h = s.dataset.host;
      s.style.display = hidden[h] ? "none" : "";
      s.querySelectorAll("section.gpu").forEach(function (g) { g.style.display = hidden[h + "\u0000" + g.dataset.gpu] ? "none" : ""; });
    });
    drawHeat();
  }
  function links() {
    function go(a, b) {
      zoom(a, b);
      bar.scrollIntoView({ block: "start" });
    }
    document.querySelectorAll("li[data-from]").forEach(function (li) {
      var a = li.dataset.from / 1e6, b = li.dataset.to / 1e6;
      li.tabIndex = 0; li.setAttribute("role", "button"); li.title = "Zoom the charts to " + when(a) + " – " + when(b) + " UTC";
      var pad = Math.max(2 * B, (b - a) * 0.05);
      function act() { go(a - pad, b + pad); }
      li.addEventListener("click", act);
      li.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); act(); } });
    });
    document.querySelectorAll("tr[data-ts]").forEach(function (tr) {
      var t = tr.dataset.ts / 1e6, w = Math.max(10 * B, SPAN / 50);
      tr.tabIndex = 0; tr.title = "Zoom the charts to " + when(t) + " UTC";
      function act() { go(t - w, t + w); instant(t); }
      tr.addEventListener("click", act);
      tr.addEventListener("keydown", function (e) { if (e.key === "Enter") act(); });
    });
  }

  var reset_ = el("button", null, "Reset zoom");
  reset_.type = "button"; reset_.id = "ix-reset";
  reset_.addEventListener("click", reset);
  bar.appendChild(reset_); bar.appendChild(info); bar.append(" ");
  toggles();
  bar.appendChild(res);
  var anchor = document.querySelector("svg.heatmap");
  anchor = anchor ? anchor.closest(".keep") : document.getElementById("charts");
  if (anchor && (D.charts.length || D.heat.length)) anchor.parentNode.insertBefore(bar, anchor);
  /* The captions say what the interactive charts draw: the finer buckets. */
  ["heatmap", "charts"].forEach(function (id) {
    var h = document.getElementById(id), note = h && h.nextElementSibling;
    if (note && note.classList.contains("note") && D.captions[id]) note.textContent = D.captions[id];
  });
  D.charts.forEach(build);
  buildHeat();
  drawHeat();
  describeView();
  links();
  var pending = 0;
  window.addEventListener("resize", function () {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(function () {
      plots.forEach(function (p) { if (p.box.clientWidth) p.u.setSize({ width: p.box.clientWidth, height: 190 }); });
      drawHeat();
    });
  });
  /* For tests and benchmarks: the charts, the shared window, and when the charts were drawn (ms). */
  window.gpumonReport = {
    plots: plots, zoom: zoom, reset: reset, view: function () { return view.slice(); }, bucket_s: B,
    drawn_ms: performance.now()
  };
})();
