// Protobuf text format into plain objects: what TensorBoard's graphs
// routes answer (`/graph`: a GraphDef, `/run_metadata`: a RunMetadata, both
// as Python's text_format writes them). No schema: a message is an object
// whose keys are field names and whose values are arrays (every field may
// repeat), each value a string, a number, or a message. Strings are
// decoded from their escapes (text_format writes non-ASCII bytes as octal)
// as UTF-8; enums and booleans stay identifiers (strings).
// One job: the syntax. What a GraphDef means is graphs_model.js's.

// Nesting deeper than this is refused: a hostile answer cannot exhaust the
// stack; the server refuses the same depth (Python protobuf's recursion limit,
// TFB_PBTXT_MAX_DEPTH). A GraphDef is 6 levels deep (node, attr, value, list, shape, dim;
// a RunMetadata's step stats about 8).
export const PBTXT_MAX_DEPTH = 100;

export class PbtxtError extends Error {}

// A message not parsed yet: its body's span in the text. `opts.lazy` names
// the fields (dotted paths from the top: 'node.attr') kept this way: a
// GraphDef's attributes are most of its text and its objects, and the tab
// needs them only for the nodes it shows (the panel, the shapes of drawn
// edges): a 20,000-node graph parses 3x faster. parse() reads it (once).
export class LazyMessage {
  constructor(text, start, end) { this.text = text; this.start = start; this.end = end; this.value = null; }
  parse() {
    if (!this.value) this.value = parsePbtxt(this.text.slice(this.start, this.end));
    return this.value;
  }
}

// Messages inherit from an empty prototype with no Object.prototype above
// it: a field named __proto__ or constructor is an ordinary key, and the
// objects stay in V8's fast mode (Object.create(null) objects do not:
// 3x slower on a 20,000-node GraphDef, mostly in the collector).
const MSG_PROTO = Object.freeze(Object.create(null));
const DEC = new TextDecoder('utf-8');
const ENC = new TextEncoder();

function isIdentStart(c) { return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95; }
function isIdent(c) { return isIdentStart(c) || (c >= 48 && c <= 57) || c === 46; }
function isSpace(c) { return c === 32 || c === 10 || c === 13 || c === 9 || c === 11 || c === 12; }

// Parses `text`; returns the top message. Throws PbtxtError naming the line.
// opts.lazy: field paths whose messages stay LazyMessage (their braces and
// strings are still checked to balance).
export function parsePbtxt(text, opts) {
  const lazy = new Set((opts && opts.lazy) || []);
  const s = String(text);
  const n = s.length;
  let i = 0;

  function lineOf(pos) {
    let l = 1;
    for (let k = 0; k < pos && k < n; k++) if (s.charCodeAt(k) === 10) l++;
    return l;
  }
  function fail(msg) { throw new PbtxtError(`pbtxt: ${msg} at line ${lineOf(i)}`); }

  function skip() {
    for (;;) {
      while (i < n && isSpace(s.charCodeAt(i))) i++;
      if (i < n && s.charCodeAt(i) === 35) { // '#': a comment to the end of line
        while (i < n && s.charCodeAt(i) !== 10) i++;
        continue;
      }
      return;
    }
  }

  function ident() {
    const start = i;
    if (i < n && s.charCodeAt(i) === 91) { // [extension.name] or [type.url/Any]
      const end = s.indexOf(']', i);
      if (end < 0) fail('unclosed [');
      i = end + 1;
      return s.slice(start, i);
    }
    if (i >= n || !isIdentStart(s.charCodeAt(i))) fail('expected a field name');
    while (i < n && isIdent(s.charCodeAt(i))) i++;
    return s.slice(start, i);
  }

  // One quoted literal; adjacent literals are joined ("a" "b" is "ab").
  function string() {
    let out = '';
    do {
      const q = s.charCodeAt(i);
      i++;
      const start = i;
      let bytes = null;
      let plainFrom = start;
      for (;;) {
        if (i >= n) fail('unterminated string');
        const c = s.charCodeAt(i);
        if (c === q) break;
        if (c === 10) fail('newline in string');
        if (c !== 92) { i++; continue; }
        // An escape: from here on, collect bytes so octal UTF-8 decodes.
        if (!bytes) bytes = [];
        if (i > plainFrom) for (const b of ENC.encode(s.slice(plainFrom, i))) bytes.push(b);
        i++;
        if (i >= n) fail('unterminated string');
        const e = s[i];
        i++;
        if (e >= '0' && e <= '7') {
          let v = e.charCodeAt(0) - 48;
          for (let k = 0; k < 2 && i < n && s[i] >= '0' && s[i] <= '7'; k++) v = v * 8 + s.charCodeAt(i++) - 48;
          bytes.push(v & 255);
        } else if (e === 'x' || e === 'X') {
          const m = /^[0-9a-fA-F]{1,2}/.exec(s.slice(i, i + 2));
          if (!m) fail('bad \\x escape');
          i += m[0].length;
          bytes.push(parseInt(m[0], 16));
        } else if (e === 'u' || e === 'U') {
          const len = e === 'u' ? 4 : 8;
          const hex = s.slice(i, i + len);
          if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) fail('bad \\' + e + ' escape');
          i += len;
          const cp = parseInt(hex, 16);
          if (cp > 0x10ffff) fail('code point out of range');
          for (const b of ENC.encode(String.fromCodePoint(cp))) bytes.push(b);
        } else {
          const simple = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11, '\\': 92, "'": 39, '"': 34, '?': 63 }[e];
          if (simple === undefined) fail('bad escape \\' + e);
          bytes.push(simple);
        }
        plainFrom = i;
      }
      if (bytes) {
        if (i > plainFrom) for (const b of ENC.encode(s.slice(plainFrom, i))) bytes.push(b);
        out += DEC.decode(new Uint8Array(bytes));
      } else out += s.slice(start, i);
      i++; // the closing quote
      skip();
    } while (i < n && (s[i] === '"' || s[i] === "'"));
    return out;
  }

  function scalar() {
    const c = s[i];
    if (c === '"' || c === "'") return string();
    // the common case, a plain integer, without a regex
    let j = i;
    while (j < n && s.charCodeAt(j) >= 48 && s.charCodeAt(j) <= 57) j++;
    if (j > i && j - i < 16) {
      const d = s.charCodeAt(j);
      if (j >= n || isSpace(d) || d === 125 || d === 62 || d === 44 || d === 59 || d === 93 || d === 35) {
        const v = Number(s.slice(i, j));
        i = j;
        return v;
      }
    }
    const m = /^-?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fF]?|inf(?:inity)?|nan)/i.exec(s.slice(i, i + 64));
    if (m && (m[0][0] === '-' || /[\d.]/.test(m[0][0]) || !isIdent(s.charCodeAt(i + m[0].length)))) {
      i += m[0].length;
      let t = m[0].replace(/[fF]$/, '');
      if (/^-?0x/i.test(t)) return t[0] === '-' ? -parseInt(t.slice(1), 16) : parseInt(t, 16);
      if (/inf/i.test(t)) return t[0] === '-' ? -Infinity : Infinity;
      if (/nan/i.test(t)) return NaN;
      return Number(t);
    }
    if (i < n && isIdentStart(s.charCodeAt(i))) return ident(); // enum, true/false
    fail('expected a value');
  }

  // close: the char code that ends this message (125 '}' or 62 '>'), 0
  // for the top. No closures per field: a large GraphDef has 10^5 fields.
  function message(depth, close, path) {
    if (depth > PBTXT_MAX_DEPTH) fail(`nesting deeper than ${PBTXT_MAX_DEPTH}`);
    const msg = Object.create(MSG_PROTO);
    for (;;) {
      skip();
      if (i >= n) {
        if (close) fail(`missing '${String.fromCharCode(close)}'`);
        return msg;
      }
      if (close && s.charCodeAt(i) === close) { i++; return msg; }
      const name = ident();
      skip();
      let colon = false;
      if (s.charCodeAt(i) === 58) { colon = true; i++; skip(); }
      let list = msg[name];
      if (!list) { list = []; msg[name] = list; }
      if (colon && s.charCodeAt(i) === 91) { // list syntax: f: [1, 2] or f: [{...}, {...}]
        i++;
        skip();
        while (s.charCodeAt(i) !== 93) {
          if (i >= n) fail("missing ']'");
          list.push(value(depth, colon, name, path));
          skip();
          if (s.charCodeAt(i) === 44) { i++; skip(); }
        }
        i++;
      } else list.push(value(depth, colon, name, path));
      skip();
      const c = s.charCodeAt(i);
      if (c === 44 || c === 59) i++; // ',' or ';'
    }
  }

  function value(depth, colon, name, path) {
    const c = s.charCodeAt(i);
    if (c === 123 || c === 60) {
      i++;
      const sub = path ? path + '.' + name : name;
      if (lazy.size && lazy.has(sub)) return skipMessage(c === 123 ? 125 : 62);
      return message(depth + 1, c === 123 ? 125 : 62, sub);
    }
    if (!colon) fail(`expected ':' after ${name}`);
    return scalar();
  }

  // Past a message body to its closing bracket, without objects: strings
  // (which may hold brackets) are stepped over with their escapes.
  // The regexes jump to the next character that matters (native scan).
  function skipMessage(close) {
    const start = i;
    const stack = [close];
    const special = /[{}<>"'#]/g;
    const inDq = /["\\\n]/g, inSq = /['\\\n]/g;
    while (stack.length) {
      special.lastIndex = i;
      if (!special.exec(s)) { i = n; fail(`missing '${String.fromCharCode(stack[stack.length - 1])}'`); }
      i = special.lastIndex - 1;
      const c = s.charCodeAt(i);
      if (c === 34 || c === 39) {
        const re = c === 34 ? inDq : inSq;
        i++;
        for (;;) {
          re.lastIndex = i;
          if (!re.exec(s)) { i = n; fail('unterminated string'); }
          i = re.lastIndex - 1;
          const d = s.charCodeAt(i);
          if (d === 10) fail('newline in string');
          if (d === 92) { i += 2; continue; }
          break;
        }
        i++;
      } else if (c === 35) { const e = s.indexOf('\n', i); i = e < 0 ? n : e; }
      else if (c === 123 || c === 60) {
        if (stack.length > PBTXT_MAX_DEPTH) fail(`nesting deeper than ${PBTXT_MAX_DEPTH}`);
        stack.push(c === 123 ? 125 : 62); i++;
      } else if (c === stack[stack.length - 1]) { stack.pop(); i++; }
      else i++;
    }
    return new LazyMessage(s, start, i - 1);
  }

  return message(0, 0, '');
}

// The first value of a field, or `dflt`.
export function first(msg, field, dflt) {
  const v = msg && msg[field];
  return v && v.length ? v[0] : dflt;
}
