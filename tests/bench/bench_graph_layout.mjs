// The Graphs tab's layout engines compared on the same inputs (issue 31):
// our layered code (server/plugins/graphs/layout.js) and, when given,
// dagre (npm @dagrejs/dagre, not vendored: DAGRE=path/to/dagre.esm.js or
// dagre.cjs). The graph is tests/bench/gen_graph_logdir.py's (20,000 nodes
// in 300 scopes, --pbtxt), read by the tab's own parser and model. Each
// engine lays out what the tab lays out: the top level with every group
// closed, a block opened (its layers closed), a layer opened (its ~70
// nodes); and, to show why only what is open is laid out, a whole scope
// tree flattened (2,000 nodes). Prints times; never fails on a time.
// usage: node bench_graph_layout.mjs GRAPH.pbtxt   [DAGRE=... env]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parsePbtxt } from '../../server/plugins/graphs/pbtxt.js';
import { buildGraph } from '../../server/plugins/graphs/model.js';
import { layeredLayout } from '../../server/plugins/graphs/layout.js';

const file = process.argv[2];
if (!file) { console.error('usage: bench_graph_layout.mjs GRAPH.pbtxt'); process.exit(2); }
const t0 = performance.now();
const text = readFileSync(file, 'utf8');
const msg = parsePbtxt(text);
const t1 = performance.now();
const g = buildGraph(msg);
const t2 = performance.now();
console.log(`graph: ${g.nodeCount} nodes, ${g.edgeCount} edges, ${g.groups.size - 1} scopes; ${(text.length / 1e6).toFixed(1)} MB pbtxt`);
console.log(`parse ${(t1 - t0).toFixed(0)} ms, model ${(t2 - t1).toFixed(0)} ms`);

// The page's box sizes (page.js size()), closed groups as boxes.
const size = (it) => (it.kind === 'node' ? { w: Math.min(180, Math.max(44, it.label.length * 6.6 + 22)), h: 26 } : { w: Math.min(230, Math.max(80, it.label.length * 6.6 + 44)), h: 40 });
function input(grp) {
  const items = grp.children;
  const idx = new Map(items.map((it, k) => [it, k]));
  const edges = [];
  for (const e of grp.edges.values()) if (idx.has(e.from) && idx.has(e.to)) edges.push({ from: idx.get(e.from), to: idx.get(e.to) });
  return { sizes: items.map(size), edges };
}
// A flattened subtree: every node under grp, edges between them.
function flat(grp, max) {
  const nodes = [];
  const walk = (x) => { for (const c of x.children) { if (nodes.length >= max) return; if (c.kind === 'node') nodes.push(c); else walk(c); } };
  walk(grp);
  const idx = new Map(nodes.map((n, k) => [n, k]));
  const edges = [];
  for (const n of nodes) for (const o of n.outputs) if (idx.has(o.node)) edges.push({ from: idx.get(n), to: idx.get(o.node) });
  return { sizes: nodes.map(size), edges };
}

let dagre = null;
if (process.env.DAGRE) {
  const p = process.env.DAGRE;
  dagre = p.endsWith('.cjs') ? createRequire(import.meta.url)(p) : (await import(p)).default;
}
const engines = { layered: (inp) => layeredLayout(inp.sizes, inp.edges) };
if (dagre) {
  engines.dagre = (inp) => {
    const dg = new dagre.graphlib.Graph({ multigraph: true });
    dg.setGraph({ rankdir: 'TB', nodesep: 16, ranksep: 44 });
    dg.setDefaultEdgeLabel(() => ({}));
    inp.sizes.forEach((s, k) => dg.setNode(String(k), { width: s.w, height: s.h }));
    inp.edges.forEach((e, k) => { if (e.from !== e.to) dg.setEdge(String(e.from), String(e.to), {}, 'e' + k); });
    dagre.layout(dg);
    return dg;
  };
}

function time(fn, inp, reps) {
  fn(inp); // warm
  const ts = [];
  for (let r = 0; r < reps; r++) { const a = performance.now(); fn(inp); ts.push(performance.now() - a); }
  ts.sort((a, b) => a - b);
  return ts[Math.floor(ts.length / 2)];
}
const blocks = g.root.children.filter((c) => c.kind === 'group' && c.children.some((x) => x.kind === 'group'));
const block = blocks[0];
const layer = block.children.find((c) => c.kind === 'group');
const cases = [
  ['top level, all closed', input(g.root), 5],
  [`a block opened (${block.children.length} boxes)`, input(block), 5],
  [`a layer opened (${layer.children.length} boxes)`, input(layer), 5],
  ['2,000 nodes flattened', flat(block, 2000), 1],
];
for (const [name, inp, reps] of cases) {
  const row = Object.entries(engines).map(([e, fn]) => `${e} ${time(fn, inp, reps).toFixed(1)} ms`);
  console.log(`${name} (${inp.sizes.length} boxes, ${inp.edges.length} edges): ${row.join(', ')}`);
}
