// roofsim web view. Plain JavaScript, no build step; charts are uPlot
// (vendored). Every number shown comes from the server's JSON API.
"use strict";

const PREC_COLORS = {
  fp16: "#f28e2b",  // orange
  bf16: "#c0392b",  // brick red
  fp8: "#2ca02c",   // green
  nvfp4: "#8e44ad", // purple
  mxfp4: "#d4a017", // gold
  int8: "#17becf",  // cyan
  int4: "#1f5fd1",  // blue
};
const PRECISIONS = ["fp16", "bf16", "fp8", "nvfp4", "mxfp4", "int8", "int4"];
const RUN_COLORS = ["#2b6cb0", "#e4572e", "#2ca02c", "#8e44ad", "#d4a017", "#17becf"];
// GROUP_COLORS tells apart up to 14 groups in a validation scatter (kernel
// families, step kinds, GPUs) before a colour repeats.
const GROUP_COLORS = RUN_COLORS.concat(["#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#1f3a93", "#ff7f0e", "#00796b", "#c2185b"]);
const CEIL_COLORS = { fp64: "#777", fp32: "#999", tf32: "#8c8c8c", fp16: "#f28e2b", bf16: "#c0392b", fp8: "#2ca02c", int8: "#17becf", fp4: "#8e44ad", fp6: "#b07aa1" };

const $ = (id) => document.getElementById(id);
const state = { info: null, gpus: [], models: [], settings: [], grid: [], roof: null, spot: [], runs: [], sweep: null, charts: {} };

// ---------- helpers ----------
async function api(method, path, body, raw) {
  const opt = { method, headers: {} };
  if (body !== undefined) {
    if (raw) { opt.body = body; opt.headers["Content-Type"] = "application/octet-stream"; }
    else { opt.body = JSON.stringify(body); opt.headers["Content-Type"] = "application/json"; }
  }
  const r = await fetch(path, opt);
  const txt = await r.text();
  let js;
  try { js = JSON.parse(txt); } catch (e) { throw new Error(`${r.status}: ${txt.slice(0, 200)}`); }
  if (!r.ok) throw new Error(js.error || `${r.status}`);
  return js;
}
function setStatus(msg, isErr) {
  const s = $("status");
  s.textContent = msg || "";
  s.className = "status" + (isErr ? " error" : "");
}
function showError(el, err) {
  el.innerHTML = "";
  const d = document.createElement("div");
  d.className = "error";
  d.textContent = String(err.message || err);
  el.appendChild(d);
}
function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}
function si(v, unit, digits = 3) {
  if (v === null || v === undefined || !isFinite(v)) return "–";
  const a = Math.abs(v);
  const pre = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""], [1e-3, "m"], [1e-6, "µ"], [1e-9, "n"]];
  for (const [f, p] of pre) if (a >= f) return (v / f).toPrecision(digits) + " " + p + unit;
  return v.toPrecision(digits) + " " + unit;
}
function fmtTime(s) { return si(s, "s"); }
function fmtNum(v, d = 3) {
  if (v === null || v === undefined || !isFinite(v)) return "–";
  if (Number.isInteger(v) && Math.abs(v) < 1e7) return String(v);
  const a = Math.abs(v);
  if (a >= 1e-3 && a < 1e7) return String(Number(Number(v).toPrecision(d)));
  return Number(v).toPrecision(d);
}
function readFile(input, asBuffer) {
  return new Promise((res, rej) => {
    const f = input.files && input.files[0];
    if (!f) return res(null);
    const rd = new FileReader();
    rd.onload = () => res({ name: f.name, data: rd.result });
    rd.onerror = () => rej(rd.error);
    if (asBuffer) rd.readAsArrayBuffer(f); else rd.readAsText(f);
  });
}
function fillSelect(sel, items, keep) {
  const first = keep ? Array.from(sel.options).slice(0, keep) : [];
  sel.innerHTML = "";
  first.forEach((o) => sel.appendChild(o));
  for (const it of items) {
    const o = document.createElement("option");
    o.value = it.value; o.textContent = it.label;
    sel.appendChild(o);
  }
}

// ---------- generic chart: uPlot lines + canvas-drawn points ----------
// spec: {xlog, ylog, xlabel, ylabel, lines:[{label,color,x,y,dash,width}],
//        points:[{x,y,color,hollow,shape,size,tip}], xrange, yrange, height}
function chart(el, spec) {
  if (state.charts[el.id]) { state.charts[el.id].destroy(); delete state.charts[el.id]; }
  el.innerHTML = "";
  const width = Math.max(300, el.clientWidth || el.parentElement.clientWidth || 600);
  const height = spec.height || 300;
  const lines = spec.lines || [];
  const pts = (spec.points || []).filter((p) => isFinite(p.x) && isFinite(p.y) && (!spec.xlog || p.x > 0) && (!spec.ylog || p.y > 0));
  // Aligned data for the lines; a dummy series when there are none.
  let xs = new Set();
  lines.forEach((l) => l.x.forEach((v) => { if (isFinite(v) && (!spec.xlog || v > 0)) xs.add(v); }));
  pts.forEach((p) => xs.add(p.x));
  xs = Array.from(xs).sort((a, b) => a - b);
  if (xs.length === 0) xs = [1, 10];
  const idx = new Map(xs.map((v, i) => [v, i]));
  const data = [xs];
  const series = [{ label: spec.xlabel || "x" }];
  for (const l of lines) {
    const ys = new Array(xs.length).fill(null);
    l.x.forEach((v, i) => { const j = idx.get(v); const y = l.y[i]; if (j !== undefined && y !== null && isFinite(y) && (!spec.ylog || y > 0)) ys[j] = y; });
    data.push(ys);
    series.push({ label: l.label, stroke: l.color, width: l.width || 1.5, dash: l.dash, spanGaps: true, points: { show: false } });
  }
  if (lines.length === 0) { data.push(new Array(xs.length).fill(null)); series.push({ label: "", show: false }); }
  const range = (r, log) => r ? () => r : (log ? undefined : undefined);
  const drawn = { n: 0 };
  const opts = {
    width, height,
    legend: { show: lines.length > 0 && spec.legend !== false, live: false },
    cursor: { drag: { x: spec.zoom !== false, y: spec.zoom !== false, uni: 20 }, points: { show: false } },
    scales: {
      x: { time: false, distr: spec.xlog ? 3 : 1, range: range(spec.xrange, spec.xlog) },
      y: { distr: spec.ylog ? 3 : 1, range: range(spec.yrange, spec.ylog) },
    },
    axes: [
      { label: spec.xlabel, stroke: "#444", grid: { stroke: "#eceff4" }, splits: spec.xlog ? logSplits : undefined, filter: keepTicks, values: tickRecorder(el, "x") },
      { label: spec.ylabel, stroke: "#444", grid: { stroke: "#eceff4" }, splits: spec.ylog ? logSplits : undefined, filter: keepTicks, values: tickRecorder(el, "y"), size: 60 },
    ],
    series,
    hooks: {
      draw: [(u) => {
        const ctx = u.ctx;
        drawn.n = 0;
        ctx.save();
        ctx.setLineDash([]); // a dashed series may leave its dash set
        ctx.beginPath();
        ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
        ctx.clip();
        // uPlot leaves the text alignment of its last axis label set.
        ctx.textAlign = "left"; ctx.textBaseline = "alphabetic";
        for (const p of pts) {
          const cx = u.valToPos(p.x, "x", true), cy = u.valToPos(p.y, "y", true);
          if (!isFinite(cx) || !isFinite(cy)) continue;
          const r = (p.size || 6) * devicePixelRatio;
          ctx.beginPath();
          if (p.shape === "diamond") { ctx.moveTo(cx, cy - r); ctx.lineTo(cx + r, cy); ctx.lineTo(cx, cy + r); ctx.lineTo(cx - r, cy); ctx.closePath(); }
          else if (p.shape === "square") ctx.rect(cx - r * 0.8, cy - r * 0.8, r * 1.6, r * 1.6);
          else if (p.shape === "star") { for (let i = 0; i < 10; i++) { const a = Math.PI / 5 * i - Math.PI / 2, rr = i % 2 ? r * 0.45 : r * 1.3; ctx.lineTo(cx + rr * Math.cos(a), cy + rr * Math.sin(a)); } ctx.closePath(); }
          else { ctx.arc(cx, cy, r, 0, 2 * Math.PI); ctx.closePath(); }
          ctx.lineWidth = 2 * devicePixelRatio;
          ctx.strokeStyle = p.color;
          ctx.fillStyle = p.hollow ? "#ffffff" : p.color;
          ctx.fill();
          ctx.stroke();
          if (cx >= u.bbox.left && cx <= u.bbox.left + u.bbox.width && cy >= u.bbox.top && cy <= u.bbox.top + u.bbox.height) drawn.n++;
        }
        drawRefLines(u, ctx, spec);
        placeLabels(u, ctx, pts, el);
        drawNote(u, ctx, spec.note);
        ctx.restore();
        el.dataset.drawnPoints = String(drawn.n);
        el.dataset.refLines = (spec.vlines || []).map((l) => l.label).join("|");
        el.dataset.note = spec.note || "";
      }],
      setCursor: [(u) => {
        if (!spec.tip) return;
        const tip = spec.tip;
        const { left, top } = u.cursor;
        if (left === undefined || left < 0) { tip.hidden = true; return; }
        let best = null, bd = 14;
        for (const p of pts) {
          if (!p.tip) continue;
          const cx = u.valToPos(p.x, "x"), cy = u.valToPos(p.y, "y");
          const d = Math.hypot(cx - left, cy - top);
          if (d < bd) { bd = d; best = p; }
        }
        if (!best) { tip.hidden = true; return; }
        tip.innerHTML = best.tip;
        tip.hidden = false;
        const ox = u.over.offsetLeft + u.over.parentElement.offsetLeft, oy = u.over.offsetTop + u.over.parentElement.offsetTop;
        const host = el.getBoundingClientRect(), par = tip.offsetParent ? tip.offsetParent.getBoundingClientRect() : host;
        let x = host.left - par.left + ox + u.valToPos(best.x, "x") + 14;
        const y = host.top - par.top + oy + u.valToPos(best.y, "y") - 10;
        if (x + tip.offsetWidth > par.width) x -= tip.offsetWidth + 28;
        tip.style.left = x + "px"; tip.style.top = y + "px";
      }],
    },
  };
  const u = new uPlot(opts, data, el);
  state.charts[el.id] = u;
  el.spec = spec;
  el.dataset.drawnPoints = String(drawn.n);
  return u;
}
// logTicks returns the ticks of a logarithmic axis over [lo, hi] drawn px
// pixels long: every decade, and between decades the densest of the
// mantissa sets {1..9}, {1, 2, 5} and {1, 3} whose closest ticks stay
// minGap pixels apart (9 to 10 is 0.046 of a decade, 1-2-5 at least 0.30,
// 1-3 0.48). A range under a decade with fewer than three such ticks gets
// evenly spaced round values instead.
function logTicks(lo, hi, px, minGap) {
  if (!(lo > 0) || !(hi > lo)) return [];
  const perDecade = (px || 600) / Math.log10(hi / lo);
  // Each set with the smallest gap between its neighbours, in decades.
  const sets = [[[1, 2, 3, 4, 5, 6, 7, 8, 9], Math.log10(10 / 9)], [[1, 2, 5], Math.log10(2)], [[1, 3], Math.log10(3)], [[1], 1]];
  const mants = (sets.find(([, gap]) => gap * perDecade >= minGap) || sets[3])[0];
  const out = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of mants) {
      const v = Number((m * Math.pow(10, e)).toPrecision(12));
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push(v);
    }
  }
  return out.length >= 3 || hi / lo >= 10 ? out : linearTicks(lo, hi);
}
// linearTicks returns about five round values (1, 2 or 5 × 10^k apart) in [lo, hi].
function linearTicks(lo, hi) {
  const raw = (hi - lo) / 4, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((st) => st >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi * (1 + 1e-12); v += step) out.push(Number(v.toPrecision(12)));
  return out;
}
// logSplits is uPlot's splits callback for a log axis: labels need about
// 44 px side by side on the x axis, 22 px stacked on the y axis.
function logSplits(u, axisIdx, min, max) {
  const px = axisIdx === 0 ? (u.bbox.width / devicePixelRatio || u.width - 80) : (u.bbox.height / devicePixelRatio || u.height - 60);
  return logTicks(min, max, px, axisIdx === 0 ? 44 : 22);
}
// keepTicks keeps every tick (uPlot's default filter on a log axis drops
// all but a few labels).
function keepTicks(u, splits) { return splits; }
// fmtTick writes a tick value with at most three significant digits and an
// SI prefix from 1000 up ("0.05", "250", "10 k", "1.5 T").
function fmtTick(v) {
  if (v == null || !isFinite(v)) return "";
  const a = Math.abs(v);
  if (a < 1000) return String(Number(v.toPrecision(3)));
  for (const [f, p] of [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]]) if (a >= f) return String(Number((v / f).toPrecision(3))) + " " + p;
  return String(v);
}
// tickRecorder formats an axis's ticks and records the labels drawn on
// the chart element (data-x-ticks, data-y-ticks: "|"-separated) for tests.
function tickRecorder(el, axis) {
  return (u, vals) => {
    const labels = vals.map(fmtTick);
    el.dataset[axis + "Ticks"] = labels.filter((t) => t !== "").join("|");
    return labels;
  };
}

// ---------- chart annotations ----------
// drawRefLines draws spec.vlines ({x, label, color}) as dashed vertical
// lines across the plot, labelled at the top.
function drawRefLines(u, ctx, spec) {
  const dpr = devicePixelRatio;
  for (const l of spec.vlines || []) {
    const cx = u.valToPos(l.x, "x", true);
    if (!isFinite(cx)) continue;
    ctx.save();
    ctx.strokeStyle = l.color || "#b42318";
    ctx.lineWidth = 1.5 * dpr;
    ctx.setLineDash([6 * dpr, 4 * dpr]);
    ctx.beginPath(); ctx.moveTo(cx, u.bbox.top); ctx.lineTo(cx, u.bbox.top + u.bbox.height); ctx.stroke();
    ctx.setLineDash([]);
    ctx.font = `${11 * dpr}px system-ui`;
    ctx.fillStyle = l.color || "#b42318";
    const w = ctx.measureText(l.label).width;
    // The label sits right of the line, or left of it near the right edge.
    const tx = cx + 4 * dpr + w > u.bbox.left + u.bbox.width ? cx - 4 * dpr - w : cx + 4 * dpr;
    ctx.fillText(l.label, tx, u.bbox.top + u.bbox.height - 6 * dpr);
    ctx.restore();
  }
}
// drawNote writes a one-line note in a white box at the plot's top left.
function drawNote(u, ctx, note) {
  if (!note) return;
  const dpr = devicePixelRatio;
  ctx.save();
  ctx.font = `${11 * dpr}px system-ui`;
  const w = ctx.measureText(note).width, x = u.bbox.left + 6 * dpr, y = u.bbox.top + 6 * dpr;
  ctx.fillStyle = "rgba(255,255,255,.9)"; ctx.strokeStyle = "#d9dee7";
  ctx.fillRect(x, y, w + 10 * dpr, 18 * dpr); ctx.strokeRect(x, y, w + 10 * dpr, 18 * dpr);
  ctx.fillStyle = "#1d2430";
  ctx.fillText(note, x + 5 * dpr, y + 13 * dpr);
  ctx.restore();
}
// placeLabels writes each point's label next to it where it overlaps
// neither another label, a point, nor the plot's edge: right, left, above,
// below, the diagonals, then the same farther out with a leader line. With
// no free place it takes the one overlapping least, or, for a point whose
// labelOptional is set, none. The boxes placed are
// kept on the chart element (el.labelBoxes, CSS pixels relative to the
// plot; data-point-labels counts them) for tests.
function placeLabels(u, ctx, pts, el) {
  const dpr = devicePixelRatio;
  const fontPx = 11, h = (fontPx + 3) * dpr;
  ctx.font = `${fontPx * dpr}px system-ui`;
  const B = u.bbox;
  const marks = pts.map((p) => ({ x: u.valToPos(p.x, "x", true), y: u.valToPos(p.y, "y", true), r: (p.size || 6) * dpr }));
  const inside = (m) => m.x >= B.left && m.x <= B.left + B.width && m.y >= B.top && m.y <= B.top + B.height;
  const overlap = (a, b) => Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x)) * Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));
  const placed = [];
  const order = pts.map((p, i) => i).filter((i) => pts[i].label && inside(marks[i])).sort((a, b) => (pts[b].labelPriority || 0) - (pts[a].labelPriority || 0));
  for (const i of order) {
    const m = marks[i], text = pts[i].label, w = ctx.measureText(text).width + 4 * dpr;
    let best = null;
    for (const dist of [1, 2.2, 3.6]) {
      const g = m.r + 3 * dpr * dist + (dist > 1 ? 8 * dpr * dist : 0);
      const cands = [[g, -h / 2], [-g - w, -h / 2], [-w / 2, -g - h], [-w / 2, g], [g * 0.7, -g * 0.7 - h], [g * 0.7, g * 0.7], [-g * 0.7 - w, -g * 0.7 - h], [-g * 0.7 - w, g * 0.7]];
      for (const [dx, dy] of cands) {
        const box = { x: m.x + dx, y: m.y + dy, w, h };
        let cost = 0;
        if (box.x < B.left || box.y < B.top || box.x + w > B.left + B.width || box.y + h > B.top + B.height) cost += 1e9;
        for (const q of placed) cost += overlap(box, q);
        marks.forEach((o, j) => { if (inside(o)) cost += overlap(box, { x: o.x - o.r, y: o.y - o.r, w: 2 * o.r, h: 2 * o.r }); });
        const clash = cost;
        cost += dist; // prefer near places
        if (!best || cost < best.cost) best = { ...box, cost, clash, dist, text };
      }
      if (best.cost < 10) break;
    }
    // An optional label (a configuration off the Pareto front) is left to
    // the tooltip when it has no free place.
    if (pts[i].labelOptional && best.clash > 0) continue;
    placed.push(best);
    if (best.dist > 1) {
      ctx.strokeStyle = "#9aa3b2"; ctx.lineWidth = dpr; ctx.setLineDash([]);
      ctx.beginPath(); ctx.moveTo(m.x, m.y);
      ctx.lineTo(Math.min(Math.max(m.x, best.x), best.x + best.w), Math.min(Math.max(m.y, best.y), best.y + best.h)); ctx.stroke();
    }
    ctx.fillStyle = "rgba(255,255,255,.8)";
    ctx.fillRect(best.x, best.y, best.w, best.h);
    ctx.fillStyle = pts[i].labelColor || "#1d2430";
    ctx.fillText(text, best.x + 2 * dpr, best.y + h - 4 * dpr);
  }
  el.labelBoxes = placed.map((b) => ({ text: b.text, x: (b.x - B.left) / dpr, y: (b.y - B.top) / dpr, w: b.w / dpr, h: b.h / dpr, pw: B.width / dpr, ph: B.height / dpr }));
  el.dataset.pointLabels = String(placed.length);
}
function padRange(vals, log, frac = 0.08) {
  const v = vals.filter((x) => isFinite(x) && (!log || x > 0));
  if (!v.length) return undefined;
  let lo = Math.min(...v), hi = Math.max(...v);
  if (log) { const r = Math.pow(hi / lo || 10, frac) * 1.2; return [lo / r, hi * r]; }
  const d = (hi - lo) || Math.abs(hi) || 1;
  return [lo - d * frac, hi + d * frac];
}
function logspace(a, b, n) {
  const out = [], la = Math.log10(a), lb = Math.log10(b);
  for (let i = 0; i < n; i++) out.push(Math.pow(10, la + (lb - la) * i / (n - 1)));
  return out;
}

// ---------- pages ----------
function showPage() {
  const page = (location.hash || "#roofline").slice(1);
  document.querySelectorAll(".page").forEach((p) => { p.hidden = p.id !== "page-" + page; });
  document.querySelectorAll("nav a").forEach((a) => a.classList.toggle("active", a.dataset.page === page));
  for (const u of Object.values(state.charts)) {
    const el = u.root.parentElement;
    if (el && el.offsetParent && el.clientWidth && Math.abs(el.clientWidth - u.width) > 20) u.setSize({ width: el.clientWidth, height: u.height });
  }
}

// ---------- roofline ----------
async function gpuRequest() {
  const up = await readFile($("rf-gpu-file"));
  if (up) return { gpu_yaml: up.data };
  return { gpu: $("rf-gpu").value };
}

async function drawRoofline() {
  const info = $("rf-gpu-info");
  try {
    const req = await gpuRequest();
    const model = $("rf-model").value;
    if (model) {
      Object.assign(req, { model, tp: +$("rf-tp").value || 1, batch: +$("rf-batch").value || 1, prompt: +$("rf-prompt").value || 0,
        gen: +$("rf-gen").value || 0, depth: +$("rf-depth").value || 0, weights: $("rf-weights").value.trim() });
    }
    state.roof = await api("POST", "/api/roofline", req);
    const g = state.roof.gpu;
    info.textContent = `${g.description || g.name}: ${si(g.bandwidth_bytes_per_s, "B/s")} memory; profile ${g.calibrated ? "calibrated" : "default (uncalibrated)"}.`;
    renderRoofline();
  } catch (e) { showError(info, e); }
}

function spotTip(p, meas) {
  const lines = [`<b>${esc(p.precision)}</b> ${p.m}×${p.n}×${p.k}${meas ? " (measured)" : " (predicted)"}`,
    `AI ${fmtNum(p.ai)} FLOP/B · ${esc(p.bound)}`,
    `attainable (peak roofline) ${si(p.attainable_flops, "FLOP/s")}`,
    `predicted ${si(p.predicted_flops, "FLOP/s")} in ${fmtTime(p.predicted_time_s)}`,
    `bandwidth ${si(p.predicted_bandwidth, "B/s")} (predicted)`];
  if (p.predicted_kernel) lines.push(`priced as: ${esc(p.predicted_kernel)}`);
  if (p.serving_time_s) lines.push(`${esc(p.serving_kernel)}: ${fmtTime(p.serving_time_s)} (not what the agent times)`);
  if (p.measured && p.measured.status === "ok") {
    lines.push(`measured ${si(p.measured.achieved_flops, "FLOP/s")} in ${fmtTime(p.measured.time_s)}`);
    lines.push(`measured bandwidth ${si(p.measured.achieved_bandwidth, "B/s")}`);
    if (p.measured.error_pct !== null && p.measured.error_pct !== undefined) lines.push(`error ${p.measured.error_pct > 0 ? "+" : ""}${p.measured.error_pct.toFixed(1)} % (predicted vs measured)`);
    if (p.measured.kernel) lines.push(`measured kernel: ${esc(p.measured.kernel)}`);
    if (p.measured.device) lines.push(`on ${esc(p.measured.device)}`);
  }
  return lines.join("<br>");
}

function renderRoofline() {
  const r = state.roof;
  if (!r) return;
  const cal = $("rf-calibrated").checked;
  const bw = cal ? r.memory.calibrated_bytes_per_s : r.memory.peak_bytes_per_s;
  const x = logspace(0.01, 1e5, 160);
  const lines = [];
  const legend = [];
  const pts = [];
  for (const c of r.ceilings) {
    const peak = cal ? c.calibrated_flops : c.peak_flops;
    const ridge = peak / bw;
    const col = CEIL_COLORS[c.precision] || "#666";
    const xx = x.filter((v) => v > ridge * 1.0001).concat([ridge]).sort((a, b) => a - b);
    lines.push({ label: `${c.precision} ${si(peak, "FLOP/s")}`, color: col, x: xx, y: xx.map(() => peak), width: 1.5 });
    pts.push({ x: ridge, y: peak, color: col, hollow: false, shape: "square", size: 3,
      tip: `<b>ridge ${esc(c.precision)}</b><br>AI ${fmtNum(ridge)} FLOP/B<br>${si(peak, "FLOP/s")} at ${si(bw, "B/s")}` });
  }
  const topPeak = Math.max(...r.ceilings.map((c) => (cal ? c.calibrated_flops : c.peak_flops)));
  const mx = x.filter((v) => v * bw <= topPeak * 1.0001).concat([topPeak / bw]).sort((a, b) => a - b);
  lines.unshift({ label: `memory ${si(bw, "B/s")}`, color: "#1d2430", x: mx, y: mx.map((v) => v * bw), width: 2 });
  // Model phases.
  for (const ph of r.phases || []) {
    pts.push({ x: ph.ai, y: ph.achieved_flops, color: ph.phase === "prefill" ? "#444" : "#888", shape: "diamond", size: 7,
      label: `${ph.phase} ${ph.name}`, labelPriority: 1,
      tip: `<b>${esc(r.model)} ${esc(ph.phase)} (${esc(ph.name)})</b><br>AI ${fmtNum(ph.ai)} FLOP/B · ${esc(ph.bound)}<br>predicted ${si(ph.achieved_flops, "FLOP/s")}, attainable ${si(ph.attainable_flops, "FLOP/s")}<br>time ${fmtTime(ph.time_s)} · ${fmtNum(ph.tokens_per_s)} tok/s` });
  }
  // Spot-check points: hollow predicted, filled measured.
  // Precisions that land on one spot (fp16 and bf16 share a peak and a
  // profile curve) show as concentric rings: earlier ones draw larger.
  const spotKey = (p) => `${Math.round(Math.log10(p.ai) * 100)},${Math.round(Math.log10(p.predicted_flops) * 100)}`;
  const groups = new Map();
  for (const p of state.spot) if (p.status === "ok") groups.set(spotKey(p), (groups.get(spotKey(p)) || 0) + 1);
  const seenIn = new Map();
  for (const p of state.spot) {
    if (p.status !== "ok") continue;
    const col = PREC_COLORS[p.precision] || "#333";
    const k = spotKey(p), rank = seenIn.get(k) || 0;
    seenIn.set(k, rank + 1);
    const ring = 6.5 + 2.5 * (groups.get(k) - 1 - rank);
    pts.push({ x: p.ai, y: p.predicted_flops, color: col, hollow: true, size: ring, tip: spotTip(p, false), spot: true });
    if (p.measured && p.measured.status === "ok") pts.push({ x: p.ai, y: p.measured.achieved_flops, color: col, hollow: false, size: 4.5, tip: spotTip(p, true), spot: true });
  }
  const el = $("rf-chart");
  const ymin = Math.pow(10, Math.floor(Math.log10(Math.min(topPeak / 1e4, ...pts.map((p) => p.y).filter((v) => v > 0).map((v) => v / 2)))));
  const ymax = Math.pow(10, Math.ceil(Math.log10(topPeak * 1.5)));
  chart(el, {
    xlog: true, ylog: true, xlabel: "arithmetic intensity (FLOP/byte)", ylabel: "FLOP/s", height: 420,
    lines, points: pts, tip: $("rf-tip"),
    xrange: [0.01, 1e5], yrange: [ymin, ymax],
  });
  el.dataset.spotPoints = String(pts.filter((p) => p.spot).length);
  // Legend of spot-check precisions.
  const seen = PRECISIONS.filter((p) => state.spot.some((s) => s.precision === p && s.status === "ok"));
  const lg = $("rf-legend");
  lg.innerHTML = seen.map((p) => `<span><span class="sw" style="border-color:${PREC_COLORS[p]}"></span>${p.toUpperCase()}</span>`).join("") +
    (state.spot.some((s) => s.measured && s.measured.status === "ok") ? `<span><span class="sw filled" style="border-color:#555;background:#555"></span>measured</span><span><span class="sw" style="border-color:#555"></span>predicted</span>` : "") +
    ((r.phases || []).length ? `<span>◆ model phases (predicted)</span>` : "") + `<span>■ ridge points</span>` +
    `<span class="hint">${cal ? "calibrated (attainable) roofs: peak × the profile's asymptotic efficiency" : "nominal peak roofs"}</span>`;
}

function renderSpotTable() {
  const tb = $("sc-table").querySelector("tbody");
  tb.innerHTML = "";
  for (const p of state.spot) {
    const tr = document.createElement("tr");
    const m = p.measured;
    const ok = p.status === "ok";
    const mm = m ? (m.status === "ok" ? [fmtTime(m.time_s), si(m.achieved_flops, "FLOP/s"), m.error_pct == null ? "–" : (m.error_pct > 0 ? "+" : "") + m.error_pct.toFixed(1) + " %"] : [esc(m.status) + ": " + esc(m.reason || ""), "", ""]) : ["", "", ""];
    tr.innerHTML = `<td><span class="sw-dot" style="color:${PREC_COLORS[p.precision]}">●</span> ${esc(p.precision)}</td><td>${p.m}×${p.n}×${p.k}</td>` +
      (ok ? `<td>${fmtNum(p.ai)}</td><td>${si(p.attainable_flops, "FLOP/s")}</td><td>${si(p.predicted_flops, "FLOP/s")}</td><td>${fmtTime(p.predicted_time_s)}</td><td>${si(p.predicted_bandwidth, "B/s")}</td><td>${esc(p.bound)}</td>`
        : `<td colspan="6" class="hint">unsupported: ${esc(p.reason || "")}</td>`) +
      `<td>${mm[0]}</td><td>${mm[1]}</td><td>${mm[2]}</td>`;
    tr.dataset.status = p.status;
    tb.appendChild(tr);
  }
}

async function runSpot() {
  const note = $("sc-note");
  note.textContent = "";
  try {
    if (!state.roof) await drawRoofline();
    const precs = $("sc-all").checked ? PRECISIONS.slice() : [$("sc-prec").value];
    const req = await gpuRequest();
    Object.assign(req, { m: +$("sc-m").value, n: +$("sc-n").value, k: +$("sc-k").value, precisions: precs, measure: $("sc-measure").checked });
    $("sc-run").disabled = true;
    note.textContent = req.measure ? "measuring on the agent…" : "";
    const res = await api("POST", "/api/spotcheck", req);
    state.spot = state.spot.concat(res.points);
    const uns = res.points.filter((p) => p.status !== "ok").map((p) => p.precision);
    note.textContent = `${res.points.length - uns.length} predicted on ${res.gpu.name}` + (uns.length ? `; unsupported here: ${uns.join(", ")}` : "") +
      (res.agent ? `; measured on ${res.agent.device} (torch ${res.agent.torch})` : "");
    renderSpotTable();
    renderRoofline();
  } catch (e) { showError(note, e); } finally { $("sc-run").disabled = false; }
}

async function showExample() {
  const note = $("sc-note");
  try {
    const cur = ($("rf-gpu").value || "").toLowerCase();
    const ex = await api("GET", "/api/measured-example" + (cur === "h100" || cur === "h200" ? `?gpu=${cur}` : ""));
    $("rf-gpu").value = ex.gpu.name;
    $("rf-gpu-file").value = "";
    await drawRoofline();
    state.example = ex.points.filter((p) => p.measured && p.measured.status === "ok");
    state.spot = state.example;
    fillSelect($("sc-shape"), [...new Set(state.example.map((p) => `${p.m}×${p.n}×${p.k}`))].map((s) => ({ value: s, label: s })), 1);
    $("sc-shape").value = "";
    $("sc-shape-wrap").hidden = false;
    note.innerHTML = `Measured on ${esc(ex.device)} (torch ${esc(ex.torch)}) with <code>${esc(ex.command)}</code>: ${state.spot.length} measured points (filled) beside the ${esc(ex.gpu.name)} profile's predictions (hollow). Shapes: ${ex.shapes.map(esc).join(", ")}. Rows the agent could not run (fp4 on Hopper, int8 at m = 1) are in docs/${esc(ex.gpu.name)}_spotcheck.csv. Measured runs exist for: ${ex.available.map(esc).join(", ")}.`;
    renderSpotTable();
    renderRoofline();
  } catch (e) { showError(note, e); }
}

// ---------- settings (generated from GET /api/settings) ----------
// One field per deployment setting: a select for an enumeration or a
// boolean, a number input (with the setting's range) or a text input; the
// key is the field's data-key, its help the tooltip.
const settingId = (prefix, key) => `${prefix}-${key.replace(/[._]/g, "-")}`;

function settingField(s, prefix) {
  const id = settingId(prefix, s.key);
  const def = s.default === "" ? "empty" : String(s.default);
  const tip = `${s.help} (key ${s.key}, flag --${s.flag}, default ${def})`;
  const attrs = `id="${id}" data-key="${esc(s.key)}"`;
  let input;
  if (s.values || s.type === "bool") {
    const vals = s.values || ["true", "false"];
    input = `<select ${attrs}><option value="">(file's)</option>${vals.map((v) => `<option>${esc(v)}</option>`).join("")}</select>`;
  } else if (["int", "uint", "float"].includes(s.type)) {
    const lim = (s.min != null ? ` min="${s.min}"` : "") + (s.max != null ? ` max="${s.max}"` : "");
    input = `<input type="number" ${attrs}${lim} step="${s.type === "float" ? "any" : "1"}" placeholder="file">`;
  } else {
    input = `<input type="text" ${attrs} placeholder="file">`;
  }
  return `<label title="${esc(tip)}">${esc(s.key.slice(s.key.lastIndexOf(".") + 1))} ${input}</label>`;
}

// buildSettingsForm fills el: top-level settings first, each group of
// nested ones (serving.*) in a collapsed section.
function buildSettingsForm(el, settings, prefix) {
  const groups = {};
  for (const s of settings.filter((x) => x.key.includes("."))) (groups[s.key.split(".")[0]] ||= []).push(s);
  el.innerHTML = `<div class="fields">${settings.filter((x) => !x.key.includes(".")).map((x) => settingField(x, prefix)).join("")}</div>` +
    Object.entries(groups).map(([g, ss]) => `<details><summary>${esc(g)} settings (${ss.length})</summary><div class="fields">${ss.map((x) => settingField(x, prefix)).join("")}</div></details>`).join("");
}

// settingsValues returns the non-blank fields of el by key.
function settingsValues(el) {
  const out = {};
  el.querySelectorAll("[data-key]").forEach((i) => { const v = i.value.trim(); if (v !== "") out[i.dataset.key] = v; });
  return out;
}

// ---------- simulate ----------
function simChartsRender() {
  const shown = state.runs.filter((r) => r.show && r.result);
  const cur = shown[shown.length - 1];
  const sumEl = $("sim-summary");
  if (!cur) { sumEl.innerHTML = ""; return; }
  const kpi = (k, v, tip = "", key = "") => `<div class="kpi"${key ? ` data-key="${esc(key)}"` : ""} title="${esc(tip)}"><div class="v">${v}</div><div class="k">${esc(k)}</div></div>`;
  // A tile per scalar metric the server flags (traces.ResultScalars).
  const tiles = (r) => (r.result.metrics || []).filter((m) => m.tile).map((m) =>
    kpi(m.tile, fmtNum(r.result.summary[m.key], 4), m.doc.replaceAll("`", "") + (m.unit ? ` (${m.unit})` : ""), m.key)).join("");
  let html = "";
  for (const r of shown) {
    const s = r.result.summary, c = r.result.counters;
    html += `<h3 style="color:${r.color}">${esc(r.label)}${r.result.capped ? ` <span class="hint">(capped at ${r.result.max_requests} requests)</span>` : ""}</h3>` +
      (r.result.overload ? `<p class="error">${esc(r.result.overload)}</p>` : "") + `<div class="summary">` +
      kpi("completed / arrived", `${c.completed} / ${c.arrived}`) + tiles(r) +
      kpi("TTFT p50 / p99 (ms)", `${fmtNum(s.median_ttft_ms)} / ${fmtNum(s.p99_ttft_ms)}`) +
      kpi("TPOT p50 / p99 (ms)", `${fmtNum(s.median_tpot_ms)} / ${fmtNum(s.p99_tpot_ms)}`) +
      kpi("E2E p50 / p99 (ms)", `${fmtNum(s.median_e2el_ms)} / ${fmtNum(s.p99_e2el_ms)}`) +
      kpi("simulated / wall", `${fmtNum(c.simulated_s)} s / ${fmtNum(r.wall_s, 2)} s`) +
      (s.gpu_profile_status ? kpi("GPU profile", esc(s.gpu_profile_status), s.gpu_profile || "") : "") +
      (s.pools ? kpi("KV transfer p50 / p99 (ms)", `${fmtNum(s.pools.kv_transfer.median_ms)} / ${fmtNum(s.pools.kv_transfer.p99_ms)}`, "one request's KV cache from its prefill to its decode instance: link latency + bytes per GPU / bandwidth", "kv_transfer") : "") + `</div>` +
      poolsTable(s.pools) +
      (s.gpu_profile_status === "defaults" ? `<p class="hint">The GPU is priced with built-in default efficiencies, not a calibrated profile; treat its rates as rough.</p>` : "");
  }
  sumEl.innerHTML = html;
  runLegend(shown);
  const cdfChart = (id, key, label) => chart($(id), {
    xlog: true, xlabel: label, ylabel: "fraction of requests", height: 220, yrange: [0, 1], legend: false,
    lines: shown.map((r) => ({ label: r.label, color: r.color, x: r.result.cdf[key].x, y: r.result.cdf[key].p, width: 2, run: r.id })),
  });
  cdfChart("sim-cdf-ttft", "ttft_ms", "TTFT (ms)");
  cdfChart("sim-cdf-tpot", "tpot_ms", "TPOT (ms)");
  cdfChart("sim-cdf-e2e", "e2e_ms", "E2E (ms)");
  const tl = (r) => r.result.timeline;
  chart($("sim-tput"), { xlabel: "simulated time (s)", ylabel: "tokens/s", height: 220,
    lines: shown.flatMap((r) => [{ label: "decode" + runTag(r), run: r.id, color: r.color, x: tl(r).t, y: tl(r).decode_tok_s, width: 1.5 },
      { label: "prefill" + runTag(r), run: r.id, color: r.color, x: tl(r).t, y: tl(r).prefill_tok_s, dash: [4, 3], width: 1 }]) });
  chart($("sim-queue"), { xlabel: "simulated time (s)", ylabel: "requests", height: 220,
    lines: shown.flatMap((r) => [{ label: "running" + runTag(r), run: r.id, color: r.color, x: tl(r).t, y: tl(r).running, width: 1.5 },
      { label: "waiting" + runTag(r), run: r.id, color: r.color, x: tl(r).t, y: tl(r).waiting, dash: [4, 3], width: 1.5 }]) });
  chart($("sim-kv"), { xlabel: "simulated time (s)", ylabel: "KV blocks", height: 220,
    lines: shown.flatMap((r) => [{ label: "used" + runTag(r), run: r.id, color: r.color, x: tl(r).t, y: tl(r).kv_used, width: 1.5 },
      { label: "capacity" + runTag(r), run: r.id, color: r.color, x: tl(r).t, y: tl(r).t.map(() => tl(r).kv_total), dash: [2, 4], width: 1 }]) });
  // The step split of the newest shown run, in that run's colour: the
  // parts told apart by dash (lines) and by shade (bar), named in a legend.
  const sp = cur.result.split;
  const parts = [["compute", sp.compute_ms, sp.compute_s, [], 1], ["memory", sp.memory_ms, sp.memory_s, [6, 3], 0.7],
    ["comm", sp.comm_ms, sp.comm_s, [2, 3], 0.45], ["overhead", sp.overhead_ms, sp.overhead_s, [8, 3, 2, 3], 0.25]];
  chart($("sim-split"), { xlabel: "simulated time (s)", ylabel: "ms per step", height: 200,
    lines: parts.map(([n, ys, , dash]) => ({ label: n, color: cur.color, x: sp.t, y: ys, dash, width: 1.5, run: cur.id })) });
  const tot = parts.reduce((a, p) => a + p[2], 0) || 1;
  const shown4 = parts.filter((p) => p[2] > 0);
  $("sim-split-bar").innerHTML = `<div class="bar">` + shown4.map(([n, , v, , op]) => {
    const pct = 100 * v / tot;
    return `<div data-part="${n}" style="background:${tint(cur.color, op)};width:${pct.toFixed(2)}%;color:${op > 0.5 ? "#fff" : "#1d2430"}" title="${n}: ${fmtNum(v)} s (${pct.toFixed(1)}%)">${pct >= 12 ? `${pct.toFixed(0)}% ${n}` : ""}</div>`;
  }).join("") + `</div><div class="legend">` + shown4.map(([n, , v, , op]) =>
    `<span data-part="${n}"><span class="sq" style="background:${tint(cur.color, op)}"></span>${n} ${(100 * v / tot).toFixed(1)}% (${fmtNum(v)} s)</span>`).join("") + `</div>`;
}

// tint mixes colour c ("#rrggbb") with white: op 1 keeps it, 0 gives white.
function tint(c, op) {
  const n = parseInt(c.slice(1), 16), ch = [n >> 16, (n >> 8) & 255, n & 255].map((v) => Math.round(255 - (255 - v) * op));
  return "#" + ch.map((v) => v.toString(16).padStart(2, "0")).join("");
}

// runLegend names every shown run in its colour above the charts; every
// chart draws a run in that one colour.
function runLegend(shown) {
  $("sim-run-legend").innerHTML = shown.map((r) => `<span data-run="${r.id}"><span class="ln" style="border-color:${r.color}"></span>${esc(r.label)}</span>`).join("");
}

// poolsTable shows a disaggregated run's prefill and decode pools ("" for
// an aggregated run).
function poolsTable(p) {
  if (!p) return "";
  const row = (name, x) => `<tr data-pool="${name}"><td>${name}</td><td>${x.replicas} × TP ${x.tp} ${esc(x.gpu)}</td><td>${fmtNum(100 * x.utilization, 3)}%</td><td>${x.steps}</td>` +
    `<td>${fmtNum(x.queue.median_ms)} / ${fmtNum(x.queue.p99_ms)}</td><td>${x.kv_blocks_peak} / ${x.kv_blocks_total} (mean ${fmtNum(100 * x.kv_occupancy_mean, 3)}%)</td><td>${x.preemptions}</td></tr>`;
  return `<table class="data pools"><thead><tr><th>pool</th><th>instances</th><th>busy</th><th>steps</th><th>queue p50 / p99 (ms)</th><th>KV blocks peak / per instance</th><th>preemptions</th></tr></thead>` +
    `<tbody>${row("prefill", p.prefill)}${row("decode", p.decode)}</tbody></table>` +
    `<p class="hint">KV transfer ${fmtNum(p.kv_transfer_bytes_per_gpu_mean / 1e6)} MB per decode GPU per request: p50 ${fmtNum(p.kv_transfer.median_ms)} ms, p99 ${fmtNum(p.kv_transfer.p99_ms)} ms; wait for decode KV blocks p50 ${fmtNum(p.kv_wait.median_ms)} ms, p99 ${fmtNum(p.kv_wait.p99_ms)} ms.</p>`;
}

function runTag(r) { return state.runs.filter((x) => x.show && x.result).length > 1 ? ` #${state.runs.indexOf(r) + 1}` : ""; }

function renderRuns() {
  const el = $("sim-runs");
  if (!state.runs.length) { el.textContent = "No runs yet."; return; }
  el.className = "runs";
  el.innerHTML = "";
  state.runs.forEach((r) => {
    const d = document.createElement("div");
    d.className = "run";
    const links = r.state === "done" ? ["csv", "jsonl", "parquet"].map((f) => `<a href="/api/jobs/${r.id}/download/run-${f}.zip">${f}</a>`).join(" ") +
      ` <a href="/api/jobs/${r.id}/download/run.json">run.json</a>` : esc(r.state) + (r.error ? ": " + esc(r.error) : "");
    d.innerHTML = `<input type="checkbox" ${r.show ? "checked" : ""} ${r.result ? "" : "disabled"} title="overlay"><span class="dot" style="background:${r.color}"></span><span>${esc(r.label)}<br>${links}</span>`;
    d.querySelector("input").addEventListener("change", (ev) => { r.show = ev.target.checked; simChartsRender(); });
    el.appendChild(d);
  });
}

async function runSim() {
  const btn = $("sim-run"), prog = $("sim-progress");
  const bar = prog.querySelector(".bar"), txt = prog.querySelector("span");
  const req = {};
  try {
    const up = await readFile($("sim-file"));
    if (up) req.workload_yaml = up.data; else req.example = $("sim-example").value;
    const gpuUp = await readFile($("sim-gpu-file"));
    if (gpuUp) req.gpu_yaml = gpuUp.data;
    req.settings = settingsValues($("sim-settings"));
    for (const [k, id] of [["rate", "sim-rate"], ["max_requests", "sim-max"]]) {
      const v = $(id).value.trim();
      if (v !== "") req[k] = Number(v);
    }
    if ($("sim-label").value.trim()) req.label = $("sim-label").value.trim();
    btn.disabled = true;
    prog.hidden = false; prog.classList.remove("failed"); prog.title = ""; bar.style.width = "0"; txt.textContent = "starting…";
    const { id } = await api("POST", "/api/simulate", req);
    // Overlay at most two runs: the new one and the previous shown one.
    let shown = state.runs.filter((r) => r.show);
    while (shown.length > 1) { shown[0].show = false; shown = state.runs.filter((r) => r.show); }
    // A run keeps one colour in every chart: the first that no shown run has.
    const color = RUN_COLORS.find((c) => !shown.some((r) => r.color === c)) || RUN_COLORS[state.runs.length % RUN_COLORS.length];
    const run = { id, color, show: true, state: "queued", label: "…" };
    state.runs.push(run);
    for (;;) {
      const j = await api("GET", `/api/jobs/${id}`);
      Object.assign(run, { state: j.state, label: j.label, error: j.error, wall_s: j.wall_s });
      const frac = j.total ? Math.min(1, j.done / j.total) : 0;
      bar.style.width = (100 * frac).toFixed(1) + "%";
      txt.textContent = `${j.state}: ${j.done} / ${j.total} requests, ${j.wall_s.toFixed(1)} s`;
      if (j.state === "done") { run.result = j.result; break; }
      if (j.state === "failed") { run.show = false; throw new Error(j.error); }
      await new Promise((r) => setTimeout(r, 250));
    }
    renderRuns();
    simChartsRender();
  } catch (e) {
    // The bar turns red and says why; the summary keeps the error too.
    const msg = String(e.message || e);
    prog.hidden = false; prog.classList.add("failed"); prog.title = msg;
    bar.style.width = "100%"; txt.textContent = "failed: " + msg;
    showError($("sim-summary"), e); renderRuns();
  } finally { btn.disabled = false; }
}

// ---------- sweep ----------
// sweptColumns lists the configuration columns (column_info's settings:
// gpu, tp, dp, ep, the scheduler limits, --grid keys) with a value in some row.
function sweptColumns(res) {
  return res.column_info.filter((c) => c.setting && res.rows.some((r) => r[c.name] !== null && r[c.name] !== undefined)).map((c) => c.name);
}

// sweepSettingsText names a row's swept settings other than GPU and TP.
const sweepSettingsText = (r, swept) => swept.filter((c) => c !== "gpu" && c !== "tp" && r[c] != null).map((c) => `${esc(c)} ${esc(r[c])}`).join(", ");

// The grid builder: --grid axes from the settings list, shown as a command.
function renderGridCmd() {
  $("sw-cmd").textContent = "sim sweep --workload W.yaml " + state.grid.map((a) => `--grid ${a}`).join(" ") + (state.grid.length ? " " : "") + "--slo ttft_p99=500ms,tpot_p99=50ms --out sweep.parquet";
}

function addGridAxis() {
  const key = $("sw-key").value, vals = $("sw-values").value.split(",").map((v) => v.trim()).filter((v) => v);
  if (!key || !vals.length) return;
  state.grid = state.grid.filter((a) => !a.startsWith(key + "=")).concat([`${key}=${vals.join(",")}`]);
  renderGridCmd();
}

async function loadSweep() {
  const note = $("sw-note");
  try {
    let res;
    const up = await readFile($("sw-file"), true);
    if (up) res = await api("POST", "/api/sweep", up.data, true);
    else if ($("sw-data").value) res = await api("POST", "/api/sweep?file=" + encodeURIComponent($("sw-data").value));
    else throw new Error("choose a file to upload or one under --data");
    state.sweep = { res, sortKey: "index", asc: true };
    note.textContent = `${res.rows.length} configurations from ${res.source}.`;
    renderSweep();
  } catch (e) { showError(note, e); }
}

// layoutOf names a sweep row's deployment: "agg", or "xPyD" when both
// disaggregated pools have replicas.
function layoutOf(r) {
  const p = Number(r["disaggregation.prefill.replicas"] || 0), d = Number(r["disaggregation.decode.replicas"] || 0);
  return p > 0 && d > 0 ? `${p}P${d}D` : "agg";
}

// configName names a sweep row for a chart label: "#3 h200 tp2 dp2 ep2 1P1D".
function configName(r) {
  return `#${r.index} ${r.gpu} tp${r.tp}` + (r.dp > 1 ? ` dp${r.dp}` : "") + (r.ep > 1 ? ` ep${r.ep}` : "") + (r.layout && r.layout !== "agg" ? ` ${r.layout}` : "");
}

function renderSweep() {
  const { res, sortKey, asc } = state.sweep;
  const rows = res.rows.map((r) => ({ ...r, layout: layoutOf(r) }));
  const rec = rows.find((r) => r.recommended);
  const ok = rows.filter((r) => r.status === "ok" && r.output_tokens_per_s_per_gpu > 0 && r.tokens_per_s_per_user > 0);
  const swept = sweptColumns(res);
  const tip = (r) => `<b>#${r.index} ${esc(r.gpu)} tp${r.tp}</b><br>${sweepSettingsText(r, swept)}<br>` +
    `${fmtNum(r.output_tokens_per_s_per_gpu)} tok/s/GPU · ${fmtNum(r.tokens_per_s_per_user)} tok/s/user<br>${r.max_concurrency > 0 ? `max concurrency ${r.max_concurrency} (${fmtNum(r.max_rate_rps)} req/s)` : `max rate ${fmtNum(r.max_rate_rps)} req/s`} · TTFT p99 ${fmtNum(r.ttft_p99_ms)} ms · TPOT p99 ${fmtNum(r.tpot_p99_ms)} ms` +
    (r.cost_per_mtok != null ? `<br>$${fmtNum(r.cost_per_mtok)} per M tokens` : "") + (r.recommended ? "<br><b>recommended</b>" : r.pareto ? "<br>Pareto-optimal" : "");
  const front = ok.filter((r) => r.pareto).sort((a, b) => a.tokens_per_s_per_user - b.tokens_per_s_per_user);
  // Points are labelled with their configuration: the recommended one and
  // the Pareto ones always (placed first), the others where a free place
  // is left (a dense sweep would bury the front in text otherwise).
  const pts = ok.map((r) => ({ x: r.tokens_per_s_per_user, y: r.output_tokens_per_s_per_gpu, color: r.recommended ? "#e4572e" : r.pareto ? "#2b6cb0" : "#a8b3c4",
    hollow: !r.pareto && !r.recommended, shape: r.recommended ? "star" : undefined, size: r.recommended ? 8 : r.pareto ? 5 : 4, tip: tip(r),
    label: configName(r) + (r.recommended ? " (recommended)" : ""), labelPriority: r.recommended ? 2 : r.pareto ? 1 : 0,
    labelOptional: !r.pareto && !r.recommended, labelColor: r.pareto || r.recommended ? "#1d2430" : "#5b6575" }));
  // The TPOT bound as the tokens/s per user of a configuration at the limit
  // (tokens/s per user = 1000 / mean TPOT in ms): configurations left of it
  // cannot meet a TPOT bound; the other bounds and the target rate in a note.
  const slo = res.slo || [];
  const vlines = slo.filter((b) => b.metric === "tpot").map((b) => ({ x: 1000 / b.limit_ms, label: `TPOT ${b.stat} SLO ${fmtNum(b.limit_ms)} ms → ${fmtNum(1000 / b.limit_ms)} tok/s/user` }));
  const targets = [...new Set(rows.map((r) => r.target_rate_rps).filter((v) => v != null))];
  const note = [slo.length ? "SLO " + slo.map((b) => `${b.metric.toUpperCase()} ${b.stat} ≤ ${fmtNum(b.limit_ms)} ms`).join(", ") : "SLO not recorded in this file",
    targets.length ? `target ${targets.map((v) => fmtNum(v)).join(", ")} req/s (sets replicas, GPUs, cost)` : "no target rate"].join(" · ");
  chart($("sw-chart"), { xlog: true, ylog: true, xlabel: "tokens/s per user", ylabel: "output tokens/s per GPU", height: 420, tip: $("sw-tip"), legend: false,
    xrange: padRange(pts.map((p) => p.x).concat(vlines.map((l) => l.x)), true), yrange: padRange(pts.map((p) => p.y), true), vlines, note,
    lines: front.length ? [{ label: "Pareto front", color: "#2b6cb0", x: front.map((r) => r.tokens_per_s_per_user), y: front.map((r) => r.output_tokens_per_s_per_gpu), width: 1.5 }] : [],
    points: pts });
  $("sw-rec").innerHTML = rec ? `<b>Recommended:</b> #${rec.index} ${esc(rec.gpu)} TP ${rec.tp}, ${sweepSettingsText(rec, swept)}: ${rec.max_concurrency > 0 ? `concurrency ${rec.max_concurrency}, ` : ""}${fmtNum(rec.max_rate_rps)} req/s per replica, ${rec.replicas || "–"} replicas, ${rec.gpus_total || "–"} GPUs` +
    (rec.cost_per_mtok != null ? `, $${fmtNum(rec.cost_per_mtok)} per M output tokens` : "") +
    (rec.profile_status === "defaults" ? `<br><span class="error">warning: ${esc(rec.gpu)} is priced with built-in default efficiencies, not a calibrated profile; treat its rates as rough</span>` : "") : "No configuration is recommended (none met the SLO).";
  rows.sort((a, b) => {
    const x = a[sortKey], y = b[sortKey];
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return (x < y ? -1 : 1) * (asc ? 1 : -1);
  });
  // The columns and their headers come from the server (column_info): the
  // ones it marks for a table, a sparse one only when some row has a value,
  // with the layout column after the index when some row is disaggregated.
  const hasPD = rows.some((r) => r.layout !== "agg");
  const infos = res.column_info.filter((c) => c.table && (!c.sparse || rows.some((r) => r[c.name] !== null && r[c.name] !== undefined)));
  if (hasPD) infos.splice(1, 0, { name: "layout", label: "layout", doc: "agg, or xPyD: prefill and decode replicas of a disaggregated deployment" });
  const cols = infos.map((c) => c.name);
  const t = $("sw-table");
  t.innerHTML = "<thead><tr>" + infos.map((c) => `<th data-k="${esc(c.name)}" title="${esc(c.name + (c.unit ? " (" + c.unit + ")" : "") + ": " + c.doc)}">${esc(c.label)}${c.unit && !c.label.includes("/") ? `<span class="unit"> ${esc(c.unit)}</span>` : ""}${c.name === sortKey ? `<span class="arrow">${asc ? " ▲" : " ▼"}</span>` : ""}</th>`).join("") + "</tr></thead><tbody>" +
    rows.map((r) => `<tr class="${r.recommended ? "rec" : ""} ${r.pareto ? "pareto" : ""}">` + cols.map((c) => `<td>${r[c] === null || r[c] === undefined ? "–" : typeof r[c] === "number" ? (Number.isInteger(r[c]) ? r[c] : fmtNum(r[c], 4)) : esc(r[c])}</td>`).join("") + "</tr>").join("") + "</tbody>";
  t.querySelectorAll("th").forEach((th) => th.addEventListener("click", () => {
    const k = th.dataset.k;
    state.sweep.asc = state.sweep.sortKey === k ? !state.sweep.asc : true;
    state.sweep.sortKey = k;
    renderSweep();
  }));
}

// ---------- validation ----------
async function loadValidation() {
  const out = $("va-out");
  try {
    let res;
    const up = await readFile($("va-file"));
    if (up) res = await api("POST", "/api/validate", up.data, true);
    else if ($("va-data").value) res = await api("POST", "/api/validate?file=" + encodeURIComponent($("va-data").value));
    else throw new Error("choose a report to upload or one under --data");
    renderValidation(res);
  } catch (e) { showError(out, e); }
}

async function runValidation() {
  const note = $("vr-note"), btn = $("vr-run");
  try {
    if (!$("vr-file").value) throw new Error("choose a file or directory under --data");
    btn.disabled = true;
    note.textContent = "running (a serving validation takes a few seconds)…";
    const res = await api("POST", "/api/validate/run", { kind: $("vr-kind").value, gpu: $("vr-gpu").value, file: $("vr-file").value });
    note.textContent = "";
    renderValidation(res);
  } catch (e) { showError(note, e); } finally { btn.disabled = false; }
}

function renderValidation(res) {
  const out = $("va-out");
  out.innerHTML = "";
  const rep = res.report;
  const head = document.createElement("div");
  head.className = "panel";
  const scalars = Object.entries(rep).filter(([, v]) => v === null || typeof v !== "object");
  head.innerHTML = `<h2>${esc(res.source)}</h2>` + scalars.map(([k, v]) => `<span class="hint">${esc(k)}: <b>${esc(typeof v === "number" ? fmtNum(v, 4) : v)}</b></span>`).join(" · ");
  // Error summaries given as objects ({median_ape_pct, ...}).
  for (const [k, v] of Object.entries(rep)) {
    if (v && typeof v === "object" && !Array.isArray(v) && Object.values(v).every((x) => typeof x !== "object")) {
      head.innerHTML += `<div class="hint"><b>${esc(k)}</b>: ` + Object.entries(v).map(([a, b]) => `${esc(a)} ${typeof b === "number" ? fmtNum(b, 4) : esc(b)}`).join(", ") + "</div>";
    }
  }
  out.appendChild(head);
  for (const [key, arr] of Object.entries(rep)) {
    if (!Array.isArray(arr) || !arr.length || typeof arr[0] !== "object") continue;
    const panel = document.createElement("div");
    panel.className = "panel";
    panel.innerHTML = `<h3>${esc(key)} (${arr.length})</h3>`;
    out.appendChild(panel);
    // Scatter: every measured_X with a predicted_X.
    const metrics = Object.keys(arr[0]).filter((c) => c.startsWith("measured_") && ("predicted_" + c.slice(9)) in arr[0]).map((c) => c.slice(9));
    if (metrics.length) {
      const grid = document.createElement("div");
      grid.className = "grid2";
      panel.appendChild(grid);
      metrics.forEach((m, mi) => {
        const box = document.createElement("div");
        box.style.position = "relative";
        box.innerHTML = `<h3>predicted vs measured ${esc(m)}</h3>`;
        const ch = document.createElement("div");
        ch.id = `va-chart-${key}-${mi}`;
        ch.className = "chart small";
        const tip = document.createElement("div");
        tip.className = "tip"; tip.hidden = true;
        box.appendChild(ch); box.appendChild(tip);
        grid.appendChild(box);
        const groupKey = ["gpu", "kind", "phase", "workload_segment"].find((k) => k in arr[0]) || null;
        const groups = [...new Set(arr.map((r) => (groupKey ? r[groupKey] : "")))];
        const pts = arr.filter((r) => r["measured_" + m] > 0 && r["predicted_" + m] > 0).map((r) => ({
          x: r["measured_" + m], y: r["predicted_" + m], color: GROUP_COLORS[groups.indexOf(groupKey ? r[groupKey] : "") % GROUP_COLORS.length], size: 4,
          tip: Object.entries(r).filter(([, v]) => typeof v !== "object").slice(0, 12).map(([a, b]) => `${esc(a)}: ${typeof b === "number" ? fmtNum(b, 4) : esc(b)}`).join("<br>"),
        }));
        const vals = pts.flatMap((p) => [p.x, p.y]);
        const lo = Math.min(...vals) / 1.5, hi = Math.max(...vals) * 1.5;
        chart(ch, { xlog: true, ylog: true, xlabel: "measured " + m, ylabel: "predicted " + m, height: 300, tip, legend: false, xrange: [lo, hi], yrange: [lo, hi],
          lines: [{ label: "y = x", color: "#999", x: [lo, hi], y: [lo, hi], dash: [4, 4] }], points: pts });
        if (groupKey) {
          const lg = document.createElement("div");
          lg.className = "legend";
          lg.innerHTML = groups.map((g, i) => `<span><span class="sw filled" style="border-color:${GROUP_COLORS[i % GROUP_COLORS.length]};background:${GROUP_COLORS[i % GROUP_COLORS.length]}"></span>${esc(g)}</span>`).join("");
          box.appendChild(lg);
        }
      });
    }
    // Table.
    if (arr.length > 500) panel.querySelector("h3").textContent += ` (table shows the first 500)`;
    const cols = Object.keys(arr[0]).filter((c) => arr.some((r) => r[c] === null || typeof r[c] !== "object" || isFlat(r[c])));
    const flat = (v) => v === null || v === undefined ? "–" : typeof v === "number" ? fmtNum(v, 4) : typeof v === "object" ? Object.entries(v).map(([a, b]) => `${esc(a)} ${typeof b === "number" ? fmtNum(b, 3) : esc(b)}`).join(", ") : esc(v);
    const wrap = document.createElement("div");
    wrap.className = "scroll";
    wrap.innerHTML = `<table class="data"><thead><tr>${cols.map((c) => `<th>${esc(c)}</th>`).join("")}</tr></thead><tbody>` +
      arr.slice(0, 500).map((r) => `<tr>${cols.map((c) => `<td>${flat(r[c])}</td>`).join("")}</tr>`).join("") + "</tbody></table>";
    panel.appendChild(wrap);
  }
}
function isFlat(o) { return o && typeof o === "object" && !Array.isArray(o) && Object.values(o).every((v) => v === null || typeof v !== "object"); }

// ---------- start ----------
async function init() {
  window.addEventListener("hashchange", showPage);
  showPage();
  try {
    const [info, gpus, models, examples, data, settings] = await Promise.all([api("GET", "/api/info"), api("GET", "/api/gpus"), api("GET", "/api/models"), api("GET", "/api/examples"), api("GET", "/api/data"), api("GET", "/api/settings")]);
    state.settings = settings;
    buildSettingsForm($("sim-settings"), settings, "sim-set");
    fillSelect($("sw-key"), settings.filter((x) => x.sweep).map((x) => ({ value: x.key, label: x.key })));
    renderGridCmd();
    state.info = info;
    fillSelect($("rf-gpu"), gpus.map((g) => ({ value: g.name, label: `${g.name}${g.calibrated ? " (calibrated)" : ""}` })));
    $("rf-gpu").value = gpus.some((g) => g.name === "h100") ? "h100" : gpus[0].name;
    fillSelect($("rf-model"), models.map((m) => ({ value: m.name, label: m.name })), 1);
    $("rf-model").value = models.some((m) => m.name === "llama-3.1-8b") ? "llama-3.1-8b" : "";
    fillSelect($("sim-example"), examples.map((e) => ({ value: e.name, label: e.name })));
    const desc = () => { const e = examples.find((x) => x.name === $("sim-example").value); $("sim-example-desc").textContent = e ? e.description : ""; };
    $("sim-example").addEventListener("change", desc); desc();
    fillSelect($("sc-prec"), PRECISIONS.map((p) => ({ value: p, label: p.toUpperCase() })));
    const files = data.filter((d) => !d.dir);
    fillSelect($("sw-data"), files.filter((f) => /\.(parquet|csv)$/i.test(f.path)).map((f) => ({ value: f.path, label: f.path })), 1);
    fillSelect($("va-data"), files.filter((f) => /\.(json|csv)$/i.test(f.path)).map((f) => ({ value: f.path, label: f.path })), 1);
    fillSelect($("vr-file"), data.filter((d) => d.dir || /\.csv$/i.test(d.path)).map((d) => ({ value: d.path, label: d.path + (d.dir ? "/" : "") })), 1);
    fillSelect($("vr-gpu"), gpus.map((g) => ({ value: g.name, label: g.name })));
    $("vr-gpu").value = $("rf-gpu").value;
    if (info.measure_url) { $("sc-measure").disabled = false; $("sc-measure-wrap").title = "measurement agent: " + info.measure_url; }
    $("sim-max").max = info.max_requests;
    setStatus(`${info.measure_url ? "agent " + info.measure_url + " · " : ""}${info.data_dir ? "data: " + info.data_dir + " · " : ""}simulations capped at ${info.max_requests} requests, ${info.sim_timeout_s} s`);
  } catch (e) { setStatus(String(e.message || e), true); return; }
  $("rf-draw").addEventListener("click", drawRoofline);
  $("rf-calibrated").addEventListener("change", renderRoofline);
  $("rf-gpu").addEventListener("change", () => { $("rf-gpu-file").value = ""; state.spot = []; renderSpotTable(); drawRoofline(); });
  $("rf-gpu-file").addEventListener("change", () => { state.spot = []; renderSpotTable(); drawRoofline(); });
  document.querySelectorAll(".preset").forEach((b) => b.addEventListener("click", () => { $("sc-m").value = b.dataset.m; $("sc-n").value = b.dataset.n; $("sc-k").value = b.dataset.k; }));
  $("sc-run").addEventListener("click", runSpot);
  $("sc-example").addEventListener("click", showExample);
  $("sc-shape").addEventListener("change", () => {
    const v = $("sc-shape").value;
    state.spot = (state.example || []).filter((p) => !v || `${p.m}×${p.n}×${p.k}` === v);
    renderSpotTable(); renderRoofline();
  });
  $("sc-clear").addEventListener("click", () => {
    $("sc-shape-wrap").hidden = true; state.spot = []; renderSpotTable(); renderRoofline(); $("sc-note").textContent = ""; });
  $("sim-run").addEventListener("click", runSim);
  $("sim-file").addEventListener("change", () => { const f = $("sim-file").files[0]; $("sim-file-name").textContent = f ? `using ${f.name} instead of the example` : ""; });
  $("sw-load").addEventListener("click", loadSweep);
  $("sw-add").addEventListener("click", addGridAxis);
  $("sw-reset").addEventListener("click", () => { state.grid = []; renderGridCmd(); });
  $("sw-file").addEventListener("change", loadSweep);
  $("va-load").addEventListener("click", loadValidation);
  $("va-file").addEventListener("change", loadValidation);
  $("vr-run").addEventListener("click", runValidation);
  // Redraw on resize only when a chart's box changed width (a full-page
  // screenshot resizes the window without changing the layout).
  const resized = (id) => { const u = state.charts[id], el = $(id); return u && el.clientWidth && Math.abs(el.clientWidth - u.width) > 20; };
  window.addEventListener("resize", () => {
    if (state.roof && resized("rf-chart")) renderRoofline();
    if (state.sweep && resized("sw-chart")) renderSweep();
    if (resized("sim-cdf-ttft")) simChartsRender();
  });
  await drawRoofline();
}
init();
