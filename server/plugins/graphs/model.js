// A parsed GraphDef (graphs_pbtxt.js's objects) as the Graphs tab shows it:
// the nodes, grouped by name scope into a tree of groups, and each group's
// edges between its own children (an edge between two nodes belongs to the
// deepest group holding both, from the child holding the source to the
// child holding the target), with the tensor shape of the source's output
// (`_output_shapes`) and whether it is a control edge (`^input`). Plus the
// step stats of a RunMetadata (compute time, memory, device per node) and
// their sums per group. Everything a hostile GraphDef can hold (cycles, a
// node naming itself, inputs naming no node, duplicate names) becomes a
// note; nothing is dropped silently. One job: the model; no DOM.

// The notes kept (each says what was skipped); past this, one more note
// counts the rest, so a hostile graph cannot make the list huge.
export const GRAPH_NOTES_MAX = 50;
// Scope levels kept: a name with more '/' than this has its deeper levels
// in its label (a hostile name of 10^5 slashes would otherwise make 10^5
// nested boxes). TensorFlow and PyTorch graphs nest under 20.
export const GRAPH_MAX_DEPTH = 32;

function firstOf(msg, f, d) { const v = msg && msg[f]; return v && v.length ? v[0] : d; }

// "2×6×7×7", "?×3" for unknown sizes, "?" for an unknown rank, "" for a
// scalar.
export function shapeText(shape) {
  if (!shape) return '?';
  if (firstOf(shape, 'unknown_rank', false) === 'true' || firstOf(shape, 'unknown_rank', false) === true) return '?';
  const dims = shape.dim || [];
  return dims.map((d) => { const s = firstOf(d, 'size', -1); return s < 0 ? '?' : String(s); }).join('×') || 'scalar';
}

// "name:2" -> {name, port: 2}; "^name" -> control.
export function parseInput(s) {
  let control = false;
  if (s.charCodeAt(0) === 94) { control = true; s = s.slice(1); }
  let port = 0;
  const c = s.lastIndexOf(':');
  if (c > 0 && c < s.length - 1 && /^\d+$/.test(s.slice(c + 1))) { port = Number(s.slice(c + 1)); s = s.slice(0, c); }
  return { name: s, port, control };
}

// The fields a GraphDef's parse may leave unparsed (pbtxt.js LazyMessage):
// a node's attributes are read when the node is shown.
export const GRAPH_LAZY_FIELDS = ['node.attr'];

// A node of the graph. Its attributes ([key, AttrValue] pairs) and output
// shapes are read from the GraphDef on first use.
class GraphNode {
  constructor(name, op, device, inputs, attrSrc) {
    this.kind = 'node'; this.id = name; this.name = name; this.op = op; this.device = device;
    this.inputs = inputs; this.attrSrc = attrSrc; this.outputs = [];
    this.parent = null; this.label = ''; this.stats = null; this.scope = ''; this.uid = 0; this.depth = 0;
    this._attrs = null; this._shapes = null;
  }
  get attrs() {
    if (!this._attrs) {
      this._attrs = this.attrSrc.map((a) => {
        const m = typeof a.parse === 'function' ? a.parse() : a;
        return [String(firstOf(m, 'key', '')), firstOf(m, 'value', Object.create(null))];
      });
    }
    return this._attrs;
  }
  get shapes() {
    if (!this._shapes) {
      const sa = this.attrs.find(([k]) => k === '_output_shapes');
      this._shapes = sa ? ((firstOf(sa[1], 'list', null) || {}).shape || []).map(shapeText) : [];
    }
    return this._shapes;
  }
}

// graphMsg: a parsed GraphDef (or a message with `node`). Returns
// {root, nodes: Map name -> node, groups: Map path -> group, notes, nodeCount, edgeCount}.
export function buildGraph(graphMsg) {
  const notes = [];
  let dropped = 0;
  const note = (t) => { if (notes.length < GRAPH_NOTES_MAX) notes.push(t); else dropped++; };
  const defs = (graphMsg && graphMsg.node) || [];
  const nodes = new Map();
  for (const d of defs) {
    const name = String(firstOf(d, 'name', ''));
    if (!name) { note('a node without a name was skipped'); continue; }
    if (nodes.has(name)) { note(`node "${name}" is defined twice: the first is shown`); continue; }
    const n = new GraphNode(name, String(firstOf(d, 'op', '')), String(firstOf(d, 'device', '')),
      (d.input || []).map((x) => parseInput(String(x))), d.attr || []);
    nodes.set(name, n);
  }

  // Groups: every proper prefix of a name. A node whose name is also a
  // scope ("a" beside "a/b") sits in its own scope's group, as "(a)".
  const root = newGroup('', null);
  const groups = new Map([['', root]]);
  function newGroup(path, parent) {
    return { kind: 'group', id: path, path, label: path.slice(path.lastIndexOf('/') + 1), parent, children: [],
      expanded: parent === null, edges: new Map(), count: 0, depth: parent ? parent.depth + 1 : 0,
      device: undefined, stats: null, layout: null };
  }
  // Iterative: a name's depth is bounded, but the stack need not be.
  function groupOf(path) {
    const known = groups.get(path);
    if (known) return known;
    const parts = path.split('/');
    let g = root;
    for (let k = 1; k <= parts.length; k++) {
      const p = parts.slice(0, k).join('/');
      let c = groups.get(p);
      if (!c) { c = newGroup(p, g); groups.set(p, c); g.children.push(c); }
      g = c;
    }
    return g;
  }
  let deep = 0;
  const scopeOf = (name) => {
    const cut = name.lastIndexOf('/');
    if (cut <= 0) return '';
    if (name.length > GRAPH_MAX_DEPTH) { // only then can it have that many levels
      const parts = name.split('/');
      if (parts.length - 1 > GRAPH_MAX_DEPTH) { deep++; return parts.slice(0, GRAPH_MAX_DEPTH).join('/'); }
    }
    return name.slice(0, cut);
  };
  for (const n of nodes.values()) {
    n.scope = scopeOf(n.name);
    if (n.scope) groupOf(n.scope);
  }
  if (deep) note(`${deep} node names have more than ${GRAPH_MAX_DEPTH} scope levels: the deeper levels are part of their labels`);
  for (const n of nodes.values()) {
    const own = groups.get(n.name);
    const g = own || (n.scope ? groups.get(n.scope) : root);
    n.parent = g;
    n.label = own ? '(' + own.label + ')' : n.name.slice(n.scope.length ? n.scope.length + 1 : 0);
    g.children.push(n);
    for (let a = g; a; a = a.parent) a.count++;
  }

  // Numbers for the edge keys of a group (child uid pairs).
  let uid = 0;
  for (const g of groups.values()) g.uid = uid++;
  for (const n of nodes.values()) { n.uid = uid++; n.depth = n.parent.depth + 1; }
  let edgeCount = 0;
  for (const dst of nodes.values()) {
    for (const inp of dst.inputs) {
      const src = nodes.get(inp.name);
      if (!src) { note(`input "${inp.name}" of node "${dst.name}" names no node`); continue; }
      if (src === dst) { note(`node "${dst.name}" names itself as input: that edge is not drawn`); continue; }
      src.outputs.push({ node: dst, port: inp.port, control: inp.control });
      edgeCount++;
      // The deepest group holding both, and its children on each side:
      // climb to the same depth, then together to the same parent.
      let from = src, to = dst;
      while (from.depth > to.depth) from = from.parent;
      while (to.depth > from.depth) to = to.parent;
      while (from.parent !== to.parent) { from = from.parent; to = to.parent; }
      const g = from.parent;
      const key = from.uid * 67108864 + to.uid;
      let e = g.edges.get(key);
      if (!e) { e = { from, to, count: 0, control: true, ports: [] }; g.edges.set(key, e); }
      e.count++;
      if (!inp.control) {
        e.control = false;
        e.ports.push(src, inp.port); // its shape is read when the edge is drawn
      }
    }
  }
  // A group's device: the one all its nodes share, else 'mixed'
  // (deepest groups first, so each reads its children's).
  const byDepth = [...groups.values()].sort((a, b) => b.depth - a.depth);
  for (const g of byDepth) {
    let d;
    for (const c of g.children) {
      const cd = c.device;
      d = d === undefined ? cd : (d === cd ? d : 'mixed');
    }
    g.device = d === undefined ? '' : d;
  }
  if (dropped) notes.push(`and ${dropped} more notes`);
  return { root, nodes, groups, notes, nodeCount: nodes.size, edgeCount };
}

// The text of an edge's label: its shape, or how many tensors it carries;
// an unknown shape labels nothing (a PyTorch constant has none).
export function edgeLabel(e) {
  if (e.control) return '';
  const shapes = new Set();
  for (let k = 0; k < e.ports.length; k += 2) {
    const sh = e.ports[k].shapes;
    if (e.ports[k + 1] < sh.length) shapes.add(sh[e.ports[k + 1]]);
  }
  if (!shapes.size) return '';
  if (shapes.size === 1 && e.count === 1) return [...shapes][0];
  if (shapes.size === 1) return [...shapes][0] + ' ×' + e.count;
  return e.count + ' tensors';
}

// RunMetadata's step stats onto the graph: per node {micros, bytes,
// device}, summed per group. Returns how many nodes got stats (0: the run
// metadata has none, e.g. PyTorch's, which names the device only).
export function applyStepStats(graph, runMeta) {
  for (const n of graph.nodes.values()) n.stats = null;
  for (const g of graph.groups.values()) g.stats = null;
  const ss = firstOf(runMeta, 'step_stats', null);
  let matched = 0;
  for (const ds of (ss && ss.dev_stats) || []) {
    const device = String(firstOf(ds, 'device', ''));
    for (const st of ds.node_stats || []) {
      const n = graph.nodes.get(String(firstOf(st, 'node_name', '')));
      if (!n) continue;
      let micros = Number(firstOf(st, 'all_end_rel_micros', 0));
      if (!micros) micros = Number(firstOf(st, 'op_end_rel_micros', 0)) - Number(firstOf(st, 'op_start_rel_micros', 0));
      let bytes = 0;
      for (const o of st.output || []) {
        const td = firstOf(o, 'tensor_description', null);
        const ad = td && firstOf(td, 'allocation_description', null);
        if (ad) bytes += Number(firstOf(ad, 'requested_bytes', 0)) || 0;
      }
      if (!bytes) for (const m of st.memory || []) bytes += Number(firstOf(m, 'total_bytes', 0)) || 0;
      if (!n.stats) { n.stats = { micros: 0, bytes: 0, device }; matched++; }
      n.stats.micros += Math.max(0, micros || 0);
      n.stats.bytes += bytes;
      for (let g = n.parent; g; g = g.parent) {
        if (!g.stats) g.stats = { micros: 0, bytes: 0, device: '' };
        g.stats.micros += Math.max(0, micros || 0);
        g.stats.bytes += bytes;
      }
    }
  }
  return matched;
}

// The groups from the root down to an item (exclusive), to expand so that
// it shows.
export function ancestors(item) {
  const out = [];
  for (let g = item.parent; g; g = g.parent) out.push(g);
  return out.reverse();
}

// Nodes whose name contains `q` (case-insensitive), at most `max`, and
// how many matched in all.
export function searchNodes(graph, q, max) {
  const needle = q.toLowerCase();
  const hits = [];
  let total = 0;
  if (!needle) return { hits, total };
  for (const n of graph.nodes.values()) {
    if (n.name.toLowerCase().includes(needle)) {
      total++;
      if (hits.length < max) hits.push(n);
    }
  }
  return { hits, total };
}

// An AttrValue as one line of text: s, i, f, b, type, shape, a list of
// them, a tensor's dtype and shape; anything else as compact pbtxt.
export function attrText(v) {
  if (!v) return '';
  if ('s' in v) return String(v.s[0]);
  if ('i' in v) return String(v.i[0]);
  if ('f' in v) return String(v.f[0]);
  if ('b' in v) return String(v.b[0]);
  if ('type' in v) return String(v.type[0]);
  if ('shape' in v) return shapeText(v.shape[0]);
  if ('list' in v) {
    const l = v.list[0];
    const parts = [];
    for (const [k, vals] of Object.entries(l)) {
      for (const x of vals) parts.push(k === 'shape' ? shapeText(x) : (typeof x === 'object' ? compact(x) : String(x)));
    }
    return '[' + parts.join(', ') + ']';
  }
  if ('tensor' in v) {
    const t = v.tensor[0];
    return 'tensor ' + String(firstOf(t, 'dtype', '')) + ' ' + shapeText(firstOf(t, 'tensor_shape', null));
  }
  return compact(v);
}

function compact(m) {
  return Object.entries(m).map(([k, vals]) => vals.map((x) => (typeof x === 'object' ? `${k} { ${compact(x)} }` : `${k}: ${typeof x === 'string' ? JSON.stringify(x) : String(x)}`)).join(' ')).join(' ');
}
