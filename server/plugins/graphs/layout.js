// Layered (Sugiyama) layout of one group's children: boxes of given sizes
// and directed edges between them, drawn top to bottom (inputs above).
// The Graphs tab lays out each expanded group on its own (a closed group
// is one box), so a call sees tens to hundreds of boxes, never the whole
// graph. Steps: break cycles (reverse DFS back edges), layers by longest
// path (sources pulled down next to their first consumer, so a graph's
// many constants do not all crowd the first row), long edges split by
// dummy points, order within layers by barycenter sweeps, x by the
// neighbours' mean with overlaps pushed apart, y by layer.
// Chosen over dagre by measurement (the plugin's API.md "Layout").
// One job: geometry; no DOM, no graph semantics.

export const LAYOUT_RANK_SEP = 44;   // px between layers (room for a shape label)
export const LAYOUT_NODE_SEP = 16;   // px between boxes of a layer
export const LAYOUT_SWEEPS = 6;      // barycenter sweeps (down + up each)
export const LAYOUT_X_PASSES = 4;    // x alignment passes
// Dummy points for long edges, at most: past this, long edges are drawn
// straight (a group of thousands of direct children with long edges would
// otherwise spend its time on points no one sees).
export const LAYOUT_MAX_DUMMIES = 20000;
export const DUMMY_W = 6;

// sizes: [{w, h}] per box; edges: [{from, to}] box indices.
// Returns {width, height, x[], y[] (centres), routes: [[ [x,y], ... ] per edge]}.
export function layeredLayout(sizes, edges) {
  const n = sizes.length;
  const out = Array.from({ length: n }, () => []);
  const inn = Array.from({ length: n }, () => []);
  const E = [];
  for (let k = 0; k < edges.length; k++) {
    const { from, to } = edges[k];
    if (from === to || from < 0 || to < 0 || from >= n || to >= n) { E.push(null); continue; }
    E.push({ from, to, rev: false, idx: k });
  }
  // 1. Cycles: iterative DFS; an edge to a node on the stack is reversed.
  const adj = Array.from({ length: n }, () => []);
  E.forEach((e, k) => { if (e) adj[e.from].push(k); });
  const state = new Uint8Array(n); // 0 new, 1 on stack, 2 done
  for (let s = 0; s < n; s++) {
    if (state[s]) continue;
    const stack = [[s, 0]];
    state[s] = 1;
    while (stack.length) {
      const top = stack[stack.length - 1];
      const [v, j] = top;
      if (j < adj[v].length) {
        top[1]++;
        const e = E[adj[v][j]];
        if (state[e.to] === 1) e.rev = true;
        else if (state[e.to] === 0) { state[e.to] = 1; stack.push([e.to, 0]); }
      } else { state[v] = 2; stack.pop(); }
    }
  }
  for (const e of E) {
    if (!e) continue;
    const a = e.rev ? e.to : e.from, b = e.rev ? e.from : e.to;
    e.a = a; e.b = b;
    out[a].push(b); inn[b].push(a);
  }
  // 2. Layers: longest path from the sources (Kahn order).
  const indeg = inn.map((l) => l.length);
  const topo = [];
  for (let v = 0; v < n; v++) if (!indeg[v]) topo.push(v);
  for (let q = 0; q < topo.length; q++) for (const w of out[topo[q]]) if (--indeg[w] === 0) topo.push(w);
  const layer = new Int32Array(n);
  for (const v of topo) for (const w of out[v]) layer[w] = Math.max(layer[w], layer[v] + 1);
  for (let q = topo.length - 1; q >= 0; q--) {
    const v = topo[q];
    if (inn[v].length || !out[v].length) continue;
    let m = Infinity;
    for (const w of out[v]) m = Math.min(m, layer[w]);
    layer[v] = m - 1;
  }
  let nl = 0;
  for (let v = 0; v < n; v++) nl = Math.max(nl, layer[v] + 1);
  // 3. Long edges through dummy points (ids n, n+1, ...).
  const W = sizes.map((s) => s.w), H = sizes.map((s) => s.h);
  const lay = Array.from(layer);
  const up = inn.map((l) => l.slice()), down = out.map((l) => l.slice());
  let dummies = 0;
  for (const e of E) {
    if (!e) continue;
    e.chain = [e.a];
    const span = lay[e.b] - lay[e.a];
    if (span > 1 && dummies + span - 1 <= LAYOUT_MAX_DUMMIES) {
      let prev = e.a;
      for (let l = lay[e.a] + 1; l < lay[e.b]; l++) {
        const d = W.length;
        W.push(DUMMY_W); H.push(0); lay.push(l); up.push([prev]); down.push([]);
        down[prev].push(d);
        prev = d;
        e.chain.push(d);
        dummies++;
      }
      down[prev].push(e.b); up[e.b].push(prev);
      // the direct a->b link is replaced by the chain
      rm(down[e.a], e.b); rm(up[e.b], e.a);
    }
    e.chain.push(e.b);
  }
  const N = W.length;
  // 4. Order: first seen in a DFS from the sources, then barycenter sweeps.
  const layers = Array.from({ length: nl }, () => []);
  const seen = new Uint8Array(N);
  const visit = (s) => {
    const st = [s];
    while (st.length) {
      const v = st.pop();
      if (seen[v]) continue;
      seen[v] = 1;
      layers[lay[v]].push(v);
      for (let k = down[v].length - 1; k >= 0; k--) if (!seen[down[v][k]]) st.push(down[v][k]);
    }
  };
  for (const v of topo) if (!up[v].length) visit(v);
  for (let v = 0; v < N; v++) if (!seen[v]) visit(v);
  const pos = new Float64Array(N);
  const index = () => { for (const L of layers) L.forEach((v, k) => { pos[v] = k; }); };
  index();
  const bary = new Float64Array(N);
  for (let s = 0; s < LAYOUT_SWEEPS; s++) {
    const downward = s % 2 === 0;
    for (let li = downward ? 1 : nl - 2; downward ? li < nl : li >= 0; li += downward ? 1 : -1) {
      const L = layers[li];
      for (const v of L) {
        const nb = downward ? up[v] : down[v];
        if (!nb.length) { bary[v] = pos[v]; continue; }
        let sum = 0;
        for (const w of nb) sum += pos[w];
        bary[v] = sum / nb.length;
      }
      L.sort((p, q) => bary[p] - bary[q] || pos[p] - pos[q]);
      L.forEach((v, k) => { pos[v] = k; });
    }
  }
  // 5. x: pack, then align to the neighbours' mean without overlap.
  const x = new Float64Array(N);
  for (const L of layers) {
    let cur = 0;
    for (const v of L) { x[v] = cur + W[v] / 2; cur += W[v] + LAYOUT_NODE_SEP; }
  }
  const want = new Float64Array(N);
  const gap = (a, b) => (W[a] + W[b]) / 2 + LAYOUT_NODE_SEP;
  for (let p = 0; p < LAYOUT_X_PASSES; p++) {
    const downward = p % 2 === 0;
    for (let li = downward ? 1 : nl - 2; downward ? li < nl : li >= 0; li += downward ? 1 : -1) {
      const L = layers[li];
      if (!L.length) continue;
      for (const v of L) {
        const nb = downward ? up[v] : down[v];
        if (!nb.length) { want[v] = x[v]; continue; }
        let sum = 0;
        for (const w of nb) sum += x[w];
        want[v] = sum / nb.length;
      }
      // push right from the left, push left from the right, average, and
      // a last push right so no two boxes overlap
      const l2r = L.map((v) => want[v]);
      for (let k = 1; k < L.length; k++) l2r[k] = Math.max(l2r[k], l2r[k - 1] + gap(L[k - 1], L[k]));
      const r2l = L.map((v) => want[v]);
      for (let k = L.length - 2; k >= 0; k--) r2l[k] = Math.min(r2l[k], r2l[k + 1] - gap(L[k], L[k + 1]));
      for (let k = 0; k < L.length; k++) x[L[k]] = (l2r[k] + r2l[k]) / 2;
      for (let k = 1; k < L.length; k++) x[L[k]] = Math.max(x[L[k]], x[L[k - 1]] + gap(L[k - 1], L[k]));
    }
  }
  let minX = Infinity, maxX = -Infinity;
  for (let v = 0; v < N; v++) { minX = Math.min(minX, x[v] - W[v] / 2); maxX = Math.max(maxX, x[v] + W[v] / 2); }
  if (!N) { minX = 0; maxX = 0; }
  for (let v = 0; v < N; v++) x[v] -= minX;
  // 6. y: each layer as tall as its tallest box.
  const y = new Float64Array(N);
  const layerTop = new Float64Array(nl), layerH = new Float64Array(nl);
  let top = 0;
  for (let li = 0; li < nl; li++) {
    let hmax = 0;
    for (const v of layers[li]) hmax = Math.max(hmax, H[v]);
    for (const v of layers[li]) y[v] = top + hmax / 2;
    layerTop[li] = top;
    layerH[li] = hmax;
    top += hmax + LAYOUT_RANK_SEP;
  }
  const height = nl ? top - LAYOUT_RANK_SEP : 0;
  // 7. Routes: bottom of the source, each dummy straight down through its
  // whole layer (so a long edge passes beside a tall box, not through its
  // corner), top of the target; in the edge's own direction.
  const routes = edges.map(() => null);
  for (const e of E) {
    if (!e) continue;
    const pts = [[x[e.a], y[e.a] + H[e.a] / 2]];
    for (let k = 1; k < e.chain.length - 1; k++) {
      const d = e.chain[k], li = lay[d];
      pts.push([x[d], layerTop[li]]);
      if (layerH[li] > 0) pts.push([x[d], layerTop[li] + layerH[li]]);
    }
    pts.push([x[e.b], y[e.b] - H[e.b] / 2]);
    if (e.rev) pts.reverse();
    routes[e.idx] = pts;
  }
  return { width: maxX - minX, height, x: Array.from(x.subarray(0, n)), y: Array.from(y.subarray(0, n)), routes, layers: nl, dummies };
}

function rm(list, v) { const k = list.indexOf(v); if (k >= 0) list.splice(k, 1); }
