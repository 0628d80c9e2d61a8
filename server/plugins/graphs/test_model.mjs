// The Graphs tab's parser, model and layout under node, no browser:
// - pbtxt.js reads text_format's GraphDef: model_1's 67 nodes, written
//   here as text_format writes them from TensorBoard 2.21's own answer
//   (TFB_TESTDATA/torch_more/TENSORBOARD_ANSWERS.json), come back with the
//   same names, ops, inputs in order and attribute keys; escapes (octal
//   UTF-8, \n, quotes), comments, <> messages, list syntax; nesting past the
//   bound is an error, not a stack overflow;
// - model.js groups by scope (model_1 opens as a handful of boxes), puts
//   an edge in the deepest group holding both ends with the source's
//   shape, keeps control edges apart, and turns a cycle, a node naming
//   itself, an input naming no node, a name that is also a scope and
//   names with HTML into notes or plain labels, losing nothing else;
//   step stats sum per group;
// - layout.js: no two boxes of a layer overlap, every edge of an acyclic
//   group goes down, a cycle is laid out, constants sit next to their
//   consumer instead of all in the first row.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePbtxt, PBTXT_MAX_DEPTH } from './pbtxt.js';
import { buildGraph, applyStepStats, edgeLabel, searchNodes, attrText, GRAPH_MAX_DEPTH, GRAPH_LAZY_FIELDS } from './model.js';
import { layeredLayout } from './layout.js';

let failed = 0, passed = 0;
function ok(cond, what) { if (cond) { passed++; console.log('ok - ' + what); } else { failed++; console.log('not ok - ' + what); } }
function eq(got, want, what) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g === w) { passed++; console.log('ok - ' + what); } else { failed++; console.log(`not ok - ${what}: got ${g}, want ${w}`); }
}
function throws(fn, re, what) {
  try { fn(); failed++; console.log('not ok - ' + what + ': no error'); } catch (e) { ok(re.test(e.message), what + ' (' + e.message + ')'); }
}

// --- text_format's writer, for the answer's nodes -------------------
// Python's text_format escapes a str's UTF-8 bytes: \n \r \t \" \' \\ and
// bytes outside printable ASCII as three octal digits.
function cEscape(str) {
  let out = '';
  for (const b of new TextEncoder().encode(str)) {
    if (b === 10) out += '\\n'; else if (b === 13) out += '\\r'; else if (b === 9) out += '\\t';
    else if (b === 34) out += '\\"'; else if (b === 39) out += "\\'"; else if (b === 92) out += '\\\\';
    else if (b < 32 || b >= 127) out += '\\' + b.toString(8).padStart(3, '0');
    else out += String.fromCharCode(b);
  }
  return out;
}
function writeValue(name, v, ind) {
  const pad = ' '.repeat(ind);
  if (Array.isArray(v)) return v.map((x) => writeValue(name, x, ind)).join('');
  if (v && typeof v === 'object') return `${pad}${name} {\n${Object.entries(v).map(([k, x]) => writeValue(k, x, ind + 2)).join('')}${pad}}\n`;
  if (typeof v === 'string') return `${pad}${name}: "${cEscape(v)}"\n`;
  return `${pad}${name}: ${Number.isInteger(v) ? v : v}\n`;
}
function nodeText(n) {
  let t = 'node {\n  name: "' + cEscape(n.name) + '"\n  op: "' + cEscape(n.op) + '"\n';
  for (const i of n.input) t += '  input: "' + cEscape(i) + '"\n';
  for (const [k, v] of Object.entries(n.attr)) t += '  attr {\n    key: "' + cEscape(k) + '"\n' + writeValue('value', v, 4) + '  }\n';
  return t + '}\n';
}

const here = path.dirname(fileURLToPath(import.meta.url));
const testdata = process.env.TFB_TESTDATA || path.join(here, '..', '..', '..', '..', 'shared', 'testdata');
const answers = JSON.parse(readFileSync(path.join(testdata, 'torch_more', 'TENSORBOARD_ANSWERS.json'), 'utf8'));
const want = answers.graphs.graph.model_1;
const pb = want.nodes.map(nodeText).join('') + 'versions {\n  producer: 22\n}\n';

// --- the parser ------------------------------------------------------
const msg = parsePbtxt(pb);
eq(msg.node.length, want.node_count, 'model_1: every node of TensorBoard\'s answer');
const back = msg.node.map((n) => ({ name: n.name[0], op: n.op[0], input: n.input || [], keys: (n.attr || []).map((a) => a.key[0]) }));
eq(back, want.nodes.map((n) => ({ name: n.name, op: n.op, input: n.input, keys: Object.keys(n.attr) })), 'names, ops, inputs in order, attribute keys');
const c126 = msg.node.find((n) => n.name[0] === 'SmallNet/126');
eq(c126.attr.find((a) => a.key[0] === 'attr').value[0].s[0], want.nodes.find((n) => n.name === 'SmallNet/126').attr.attr.s, 'a constant with a newline in its text, unescaped');
eq(msg.versions[0].producer[0], 22, 'versions.producer as a number');

const tricky = parsePbtxt(`# a comment
node < name: 'caf\\303\\251 "x"' op: "A\\tB" >
node { name: "n2" input: ["a", "b:1"] attr { key: "f" value { f: -1.5e-3 } } attr { key: "t" value { type: DT_FLOAT } } }
s: "one" " two"  # joined
e: inf n: -inf`);
eq(tricky.node[0].name[0], 'café "x"', 'octal UTF-8 bytes and quotes in a single-quoted string, <> message');
eq(tricky.node[0].op[0], 'A\tB', '\\t escape');
eq(tricky.node[1].input, ['a', 'b:1'], 'list syntax');
eq(tricky.node[1].attr[0].value[0].f[0], -0.0015, 'a float');
eq(tricky.node[1].attr[1].value[0].type[0], 'DT_FLOAT', 'an enum stays its name');
eq(tricky.s[0], 'one two', 'adjacent strings joined');
eq([tricky.e[0], tricky.n[0]], [Infinity, -Infinity], 'inf and -inf');
throws(() => parsePbtxt('node { name: "a" '), /missing '\}'/, 'an unclosed message is an error');
throws(() => parsePbtxt('node { name: "a\n" }'), /newline in string/, 'a newline inside a string is an error');
throws(() => parsePbtxt('a { '.repeat(100000) + '}'.repeat(100000)), new RegExp('deeper than ' + PBTXT_MAX_DEPTH), 'nesting past the bound is an error, not a stack overflow');

// --- the model -------------------------------------------------------
const g = buildGraph(msg);
eq(g.nodeCount, 67, 'model_1: 67 nodes');
eq(g.root.children.map((c) => c.kind + ':' + c.id), ['group:SmallNet', 'group:input', 'group:output'], 'model_1 opens as three boxes');
const sn = g.groups.get('SmallNet');
ok(sn.children.length < 40 && sn.children.some((c) => c.id === 'SmallNet/Residual[block]'), 'SmallNet holds its module scopes as groups (' + sn.children.length + ' children)');
eq(sn.count, want.nodes.filter((n) => n.name.startsWith('SmallNet/')).length, 'SmallNet counts its nodes (all but the two IO nodes)');
const rootEdges = [...g.root.edges.values()].map((e) => `${e.from.id}->${e.to.id} ${edgeLabel(e)}`);
eq(rootEdges.sort(), ['SmallNet->output 2×6', 'input->SmallNet 2×3×14×14'], 'top-level edges between the boxes, with the shapes PyTorch recorded');
const bn = g.nodes.get('SmallNet/Residual[block]/BatchNorm2d[bn]/193');
eq(bn.parent.path, 'SmallNet/Residual[block]/BatchNorm2d[bn]', 'a node sits in its scope');
eq(searchNodes(g, 'batchnorm2d[BN]/19', 100).hits.map((n) => n.name), ['SmallNet/Residual[block]/BatchNorm2d[bn]/193', 'SmallNet/Residual[block]/BatchNorm2d[bn]/194'], 'search is by name, any case');
const big = g.nodes.get('SmallNet/47');
ok(attrText(big.attrs.find(([k]) => k === 'attr')[1]).length > 1024, 'the constant over 1 KiB keeps its whole text');
eq(attrText(big.attrs.find(([k]) => k === '_output_shapes')[1]), '[14×14]', '_output_shapes as text');

const hostile = buildGraph(parsePbtxt(`
node { name: "a" op: "Const" attr { key: "_output_shapes" value { list { shape { dim { size: 4 } dim { size: -1 } } } } } }
node { name: "a/b" op: "Add" input: "a" input: "^c" input: "a/b" input: "nowhere:3" }
node { name: "c" op: "NextIteration" input: "d" }
node { name: "d" op: "Merge" input: "c" input: "a/b" }
node { name: "<img src=x onerror=alert(1)>" op: "<b>op</b>" input: "a" }
node { name: "a" op: "Dup" }
node { name: "${'x/'.repeat(200)}leaf" op: "Deep" }
`));
eq(hostile.nodeCount, 6, 'a duplicate name keeps the first node; nothing else lost');
eq(hostile.nodes.get('a').parent.path, 'a', 'a node that is also a scope sits in its scope, labelled (a)');
eq(hostile.nodes.get('a').label, '(a)', 'its label');
const notes = hostile.notes.join('\n');
ok(/names itself as input/.test(notes), 'a node naming itself: a note');
ok(/"nowhere" of node "a\/b" names no node/.test(notes), 'an input naming no node: a note');
ok(/defined twice/.test(notes), 'a duplicate name: a note');
ok(new RegExp('more than ' + GRAPH_MAX_DEPTH + ' scope levels').test(notes), 'a name past the scope depth bound: a note');
const ab = [...hostile.groups.get('a').edges.values()].map((e) => `${e.from.id}->${e.to.id} ${edgeLabel(e)}`);
eq(ab, ['a->a/b 4×?'], 'an edge inside scope a, with its unknown size as ?');
const ctl = [...hostile.root.edges.values()].find((e) => e.from.id === 'c' && e.to.id === 'a');
ok(ctl && ctl.control && edgeLabel(ctl) === '', 'the ^c input is a control edge, unlabelled');
ok(hostile.nodes.get('<img src=x onerror=alert(1)>').label === '<img src=x onerror=alert(1)>', 'a name with HTML is kept as text');

const meta = parsePbtxt(`step_stats { dev_stats { device: "/job:localhost/replica:0/task:0/device:GPU:0"
  node_stats { node_name: "a/b" all_start_micros: 10 op_start_rel_micros: 1 op_end_rel_micros: 30 all_end_rel_micros: 40
    memory { allocator_name: "GPU_0_bfc" total_bytes: 4096 } }
  node_stats { node_name: "c" all_end_rel_micros: 7 output { slot: 0 tensor_description { allocation_description { requested_bytes: 512 } } } }
  node_stats { node_name: "gone" all_end_rel_micros: 99 } } }`);
eq(applyStepStats(hostile, meta), 2, 'step stats land on the two nodes they name');
eq(hostile.nodes.get('a/b').stats, { micros: 40, bytes: 4096, device: '/job:localhost/replica:0/task:0/device:GPU:0' }, 'compute time and memory of a node');
eq([hostile.groups.get('a').stats.micros, hostile.root.stats.micros, hostile.root.stats.bytes], [40, 47, 4608], 'summed per group');
eq(applyStepStats(g, parsePbtxt('step_stats { dev_stats { device: "/device:CPU:0" } }')), 0, "PyTorch's run metadata names no node");

// The tab parses attributes lazily: the same model, the same attributes.
{
  const lz = buildGraph(parsePbtxt(pb, { lazy: GRAPH_LAZY_FIELDS }));
  const view = (gr) => [...gr.nodes.values()].map((n) => [n.name, n.op, n.attrs.map(([k, v]) => k + '=' + attrText(v)), n.shapes]);
  eq(view(lz), view(g), 'lazy attributes: the same nodes, attributes and shapes');
  eq([...lz.root.edges.values()].map(edgeLabel).sort(), ['2×3×14×14', '2×6'], 'lazy: the same edge labels');
  throws(() => parsePbtxt('node { name: "a" attr { key: "k" value { s: "}" } ', { lazy: GRAPH_LAZY_FIELDS }), /missing '\}'/, 'a lazy message left open is still an error (a } in a string does not close it)');
  const q = parsePbtxt('node { attr { key: "x" value { s: "{<\\"}" } } name: "n" }', { lazy: GRAPH_LAZY_FIELDS });
  eq([q.node[0].name[0], q.node[0].attr[0].parse().value[0].s[0]], ['n', '{<"}'], 'brackets and quotes inside a lazy message\'s strings');
}

// --- the layout ------------------------------------------------------
function check(L, sizes, edges, what, acyclic) {
  let overlap = 0;
  for (let i = 0; i < sizes.length; i++) for (let j = i + 1; j < sizes.length; j++) {
    if (Math.abs(L.y[i] - L.y[j]) < 1e-6 && Math.abs(L.x[i] - L.x[j]) < (sizes[i].w + sizes[j].w) / 2) overlap++;
  }
  eq(overlap, 0, what + ': no two boxes of a layer overlap');
  ok(L.x.every(Number.isFinite) && L.y.every(Number.isFinite), what + ': every box placed');
  if (acyclic) ok(edges.every((e) => L.y[e.to] > L.y[e.from]), what + ': every edge goes down');
  ok(edges.every((e, k) => L.routes[k] && L.routes[k].length >= 2), what + ': every edge routed');
}
const sz = (n) => Array.from({ length: n }, (_, k) => ({ w: 40 + (k % 3) * 20, h: 26 }));
// SmallNet's children, laid out as the page does
{
  const items = sn.children;
  const idx = new Map(items.map((it, k) => [it, k]));
  const edges = [...sn.edges.values()].map((e) => ({ from: idx.get(e.from), to: idx.get(e.to) }));
  const L = layeredLayout(sz(items.length), edges);
  check(L, sz(items.length), edges, 'SmallNet', true);
  // prim::Constant nodes feed one op each: pulled down to it, the first
  // row is not every constant of the scope.
  const consts = items.filter((it) => it.kind === 'node' && it.op === 'prim::Constant').map((it) => idx.get(it));
  const rows = new Set(consts.map((k) => L.y[k]));
  ok(rows.size > 1, `constants sit beside their consumers (${rows.size} rows), not all in the first row`);
}
// a cycle and a long edge
{
  const edges = [{ from: 0, to: 1 }, { from: 1, to: 2 }, { from: 2, to: 0 }, { from: 0, to: 3 }, { from: 3, to: 4 }, { from: 4, to: 5 }, { from: 0, to: 5 }, { from: 5, to: 5 }];
  const L = layeredLayout(sz(6), edges);
  check(L, sz(6), edges.filter((e) => e.from !== e.to), 'a cycle', false);
  ok(L.dummies >= 1, 'a long edge goes through dummy points');
  eq(L.routes[7], null, 'a self edge is not routed');
  const r = L.routes[2];
  ok(r[0][1] > r[r.length - 1][1], 'the reversed edge of the cycle still points from its source (2) up to 0');
}
// a wide flat group: 300 boxes in a chain with skips
{
  const n = 300;
  const edges = [];
  for (let k = 1; k < n; k++) { edges.push({ from: k - 1, to: k }); if (k % 7 === 0) edges.push({ from: k - 7, to: k }); }
  const L = layeredLayout(sz(n), edges);
  check(L, sz(n), edges, '300 boxes with skips', true);
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
