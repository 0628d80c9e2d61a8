// The Projector's Web Worker: t-SNE and UMAP of a sample of the embedding,
// off the page's thread so the view stays fluid while they run. Written
// here (no npm package): both are short algorithms, and our own code keeps
// the seed, the progress and the stop under the page's control.
//
// Message in:  {method: 'tsne' | 'umap', data: Float32Array (n x d, row
//               major, transferred), n, d, dim: 2 | 3, seed, perplexity,
//               iterations (t-SNE), neighbors, epochs (UMAP)}
// Messages out: {type: 'progress', phase, done, total, coords?} about every
//               PROGRESS_MS, {type: 'done', coords, iterations} at the end,
//               {type: 'error', message}. coords is a Float32Array n x dim.
// Stop: the page terminates the worker and keeps the last coords it got;
// nothing here needs to be told.
'use strict';

// How often the page gets new coordinates while a method runs: often
// enough to watch the layout form, rarely enough that copying n x dim
// floats costs nothing (a copy of 10,000 x 3 floats is 120 KB).
const PROGRESS_MS = 100;

// A small seeded generator (mulberry32), so one seed gives one layout and
// the browser test sees the same picture every run.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function gauss(r) {
  const u = Math.max(r(), 1e-12), v = r();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

// The k nearest neighbours of every row by squared Euclidean distance,
// brute force one row at a time (n distances in memory, not n^2): the
// indices and distances, k per row, nearest first.
function knn(data, n, d, k, report) {
  const idx = new Int32Array(n * k), dist = new Float32Array(n * k);
  const row = new Float64Array(n);
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const oi = i * d;
    for (let j = 0; j < n; j++) {
      if (j === i) { row[j] = Infinity; continue; }
      let s = 0;
      const oj = j * d;
      for (let c = 0; c < d; c++) { const t = data[oi + c] - data[oj + c]; s += t * t; }
      row[j] = s;
    }
    // Partial selection of the k smallest: keep a sorted list of k.
    let m = 0;
    for (let j = 0; j < n; j++) {
      const v = row[j];
      if (m === k && v >= row[order[m - 1]]) continue;
      let p = m < k ? m++ : k - 1;
      while (p > 0 && row[order[p - 1]] > v) { order[p] = order[p - 1]; p--; }
      order[p] = j;
    }
    for (let q = 0; q < k; q++) { idx[i * k + q] = order[q]; dist[i * k + q] = row[order[q]]; }
    if ((i & 63) === 0) report('neighbours', i, n);
  }
  return { idx, dist };
}

function throttle() {
  let last = 0;
  return (force) => {
    const now = Date.now();
    if (!force && now - last < PROGRESS_MS) return false;
    last = now;
    return true;
  };
}

// t-SNE (van der Maaten & Hinton 2008) on the sparse perplexity-calibrated
// affinities of the 3 x perplexity nearest neighbours (as Barnes-Hut t-SNE
// does), with the exact O(n^2) repulsion per iteration: the page caps n
// (TSNE_MAX_POINTS in page.js) so an iteration stays in tens of ms.
function tsne(msg, post) {
  const { data, n, d, dim } = msg;
  const perplexity = Math.min(msg.perplexity || 30, Math.max(1, (n - 1) / 3));
  const iters = msg.iterations || 500;
  const r = rng(msg.seed || 1);
  const due = throttle();
  const report = (phase, done, total) => { if (due()) post({ type: 'progress', phase, done, total }); };
  const k = Math.min(n - 1, Math.floor(3 * perplexity));
  const { idx, dist } = knn(data, n, d, k, report);
  // Per row, the Gaussian's precision beta that gives the perplexity
  // (binary search on the entropy), then p_j|i.
  const P = new Float64Array(n * k);
  const target = Math.log(perplexity);
  for (let i = 0; i < n; i++) {
    let beta = 1, lo = -Infinity, hi = Infinity;
    const o = i * k;
    // Distances relative to the nearest keep exp() in range.
    const d0 = dist[o];
    for (let it = 0; it < 64; it++) {
      let sum = 0, sumDP = 0;
      for (let q = 0; q < k; q++) { const e = Math.exp(-(dist[o + q] - d0) * beta); P[o + q] = e; sum += e; sumDP += (dist[o + q] - d0) * e; }
      const H = Math.log(sum) + beta * sumDP / sum;
      for (let q = 0; q < k; q++) P[o + q] /= sum;
      if (Math.abs(H - target) < 1e-5) break;
      if (H > target) { lo = beta; beta = hi === Infinity ? beta * 2 : (beta + hi) / 2; }
      else { hi = beta; beta = lo === -Infinity ? beta / 2 : (beta + lo) / 2; }
    }
  }
  // Symmetric P_ij = (p_j|i + p_i|j) / 2n: each directed pair lends half
  // its weight to both ends when the forces are summed.
  for (let q = 0; q < n * k; q++) P[q] /= 2 * n;
  const Y = new Float64Array(n * dim), G = new Float64Array(n * dim), U = new Float64Array(n * dim), gains = new Float64Array(n * dim).fill(1);
  for (let q = 0; q < n * dim; q++) Y[q] = gauss(r) * 1e-4;
  const lr = Math.max(n / 12, 50);
  const EXAGGERATE_ITERS = 250;
  const out = () => Float32Array.from(Y);
  for (let it = 0; it < iters; it++) {
    const exag = it < EXAGGERATE_ITERS ? 12 : 1;
    G.fill(0);
    // Attraction along the neighbour edges.
    for (let i = 0; i < n; i++) {
      for (let q = 0; q < k; q++) {
        const j = idx[i * k + q];
        let s = 0;
        for (let c = 0; c < dim; c++) { const t = Y[i * dim + c] - Y[j * dim + c]; s += t * t; }
        const f = exag * P[i * k + q] / (1 + s);
        for (let c = 0; c < dim; c++) { const t = f * (Y[i * dim + c] - Y[j * dim + c]); G[i * dim + c] += t; G[j * dim + c] -= t; }
      }
    }
    // Exact repulsion: every pair once; its unnormalized q and Z.
    const R = new Float64Array(n * dim);
    let Z = 0;
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        let s = 0;
        for (let c = 0; c < dim; c++) { const t = Y[i * dim + c] - Y[j * dim + c]; s += t * t; }
        const qu = 1 / (1 + s);
        Z += 2 * qu;
        const f = qu * qu;
        for (let c = 0; c < dim; c++) { const t = f * (Y[i * dim + c] - Y[j * dim + c]); R[i * dim + c] += t; R[j * dim + c] -= t; }
      }
    }
    const mom = it < EXAGGERATE_ITERS ? 0.5 : 0.8;
    for (let q = 0; q < n * dim; q++) {
      const g = 4 * (G[q] - R[q] / Z);
      gains[q] = Math.sign(g) !== Math.sign(U[q]) ? gains[q] + 0.2 : Math.max(gains[q] * 0.8, 0.01);
      U[q] = mom * U[q] - lr * gains[q] * g;
      Y[q] += U[q];
    }
    // Keep the layout centred.
    for (let c = 0; c < dim; c++) {
      let m = 0;
      for (let i = 0; i < n; i++) m += Y[i * dim + c];
      m /= n;
      for (let i = 0; i < n; i++) Y[i * dim + c] -= m;
    }
    if (due(it === iters - 1)) post({ type: 'progress', phase: 'iteration', done: it + 1, total: iters, coords: out() });
  }
  post({ type: 'done', coords: out(), iterations: iters });
}

// UMAP (McInnes, Healy & Melville 2018): the fuzzy k-neighbour graph
// (rho, sigma per point), its fuzzy union, then the SGD of the reference
// implementation with negative sampling, min_dist 0.1 / spread 1 (a, b
// below are the reference's fit for them), from a random start.
function umap(msg, post) {
  const { data, n, d, dim } = msg;
  const k = Math.min(n - 1, msg.neighbors || 15);
  const epochs = msg.epochs || 300;
  const r = rng(msg.seed || 1);
  const due = throttle();
  const report = (phase, done, total) => { if (due()) post({ type: 'progress', phase, done, total }); };
  const { idx, dist } = knn(data, n, d, k, report);
  const target = Math.log2(k);
  const W = new Map();
  for (let i = 0; i < n; i++) {
    const o = i * k;
    const rho = Math.sqrt(dist[o]);
    let lo = 0, hi = Infinity, sigma = 1;
    for (let it = 0; it < 64; it++) {
      let s = 0;
      for (let q = 0; q < k; q++) s += Math.exp(-Math.max(0, Math.sqrt(dist[o + q]) - rho) / sigma);
      if (Math.abs(s - target) < 1e-5) break;
      if (s > target) { hi = sigma; sigma = (lo + hi) / 2; }
      else { lo = sigma; sigma = hi === Infinity ? sigma * 2 : (lo + hi) / 2; }
    }
    for (let q = 0; q < k; q++) {
      const j = idx[o + q];
      const w = Math.exp(-Math.max(0, Math.sqrt(dist[o + q]) - rho) / Math.max(sigma, 1e-3 * rho || 1e-12));
      const key = i < j ? i * n + j : j * n + i;
      const prev = W.get(key);
      // Fuzzy union: a + b - ab.
      W.set(key, prev === undefined ? w : prev + w - prev * w);
    }
  }
  const m = W.size;
  const ea = new Int32Array(m), eb = new Int32Array(m), ew = new Float64Array(m);
  let q = 0, wmax = 0;
  for (const [key, w] of W) { ea[q] = Math.floor(key / n); eb[q] = key % n; ew[q] = w; if (w > wmax) wmax = w; q++; }
  const every = new Float64Array(m), next = new Float64Array(m);
  for (let e = 0; e < m; e++) { every[e] = ew[e] > 0 ? wmax / ew[e] : Infinity; next[e] = every[e]; }
  const A = 1.577, B = 0.8951, NEG = 5;
  const Y = new Float64Array(n * dim);
  for (let i = 0; i < n * dim; i++) Y[i] = r() * 20 - 10;
  const clip = (v) => (v > 4 ? 4 : v < -4 ? -4 : v);
  const out = () => Float32Array.from(Y);
  for (let ep = 1; ep <= epochs; ep++) {
    const alpha = 1 - (ep - 1) / epochs;
    for (let e = 0; e < m; e++) {
      if (next[e] > ep) continue;
      const i = ea[e], j = eb[e];
      let s = 0;
      for (let c = 0; c < dim; c++) { const t = Y[i * dim + c] - Y[j * dim + c]; s += t * t; }
      const ga = s > 0 ? (-2 * A * B * Math.pow(s, B - 1)) / (1 + A * Math.pow(s, B)) : 0;
      for (let c = 0; c < dim; c++) {
        const g = clip(ga * (Y[i * dim + c] - Y[j * dim + c])) * alpha;
        Y[i * dim + c] += g;
        Y[j * dim + c] -= g;
      }
      for (let t = 0; t < NEG; t++) {
        const o = Math.floor(r() * n);
        if (o === i) continue;
        let s2 = 0;
        for (let c = 0; c < dim; c++) { const v = Y[i * dim + c] - Y[o * dim + c]; s2 += v * v; }
        const gr = (2 * B) / ((0.001 + s2) * (1 + A * Math.pow(s2, B)));
        for (let c = 0; c < dim; c++) Y[i * dim + c] += (gr > 0 ? clip(gr * (Y[i * dim + c] - Y[o * dim + c])) : 4) * alpha;
      }
      next[e] += every[e];
    }
    if (due(ep === epochs)) post({ type: 'progress', phase: 'epoch', done: ep, total: epochs, coords: out() });
  }
  post({ type: 'done', coords: out(), iterations: epochs });
}

self.onmessage = (ev) => {
  const msg = ev.data;
  const post = (m) => self.postMessage(m);
  try {
    if (!(msg.n >= 2) || !(msg.d >= 1) || !(msg.dim === 2 || msg.dim === 3) || !(msg.data instanceof Float32Array) || msg.data.length !== msg.n * msg.d) throw new Error('bad request');
    if (msg.method === 'tsne') tsne(msg, post);
    else if (msg.method === 'umap') umap(msg, post);
    else throw new Error('unknown method ' + String(msg.method));
  } catch (e) {
    post({ type: 'error', message: String(e && e.message || e) });
  }
};
