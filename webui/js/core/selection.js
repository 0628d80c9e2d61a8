// Run selections the server holds (issue 27; server/API.md "Selections"):
// a long list of selected runs (a brush keeping 3,000 of 10,000) is sent
// once, PUT /data/selection, and named after by its id: the URL carries
// `runs=@ID` and the charts ask `selection=ID`, never the names (a 41 KB
// run_regex was a 414, the names a 59 KB URL).
//
// The id is the server's content hash, computed here too so the URL is
// written at once: the sum (mod 2^64) over the set's distinct names of
// base/hash.h's hash of the name's UTF-8 bytes (FNV-1a 64, then murmur3's
// fmix64), as 16 hex digits. The same set gives the same id, whatever
// its order.
import { getJSON, HttpError } from './api.js';

// A list of selected runs longer than this (as the URL's JSON) goes to the
// URL as its id: a URL must stay under 2 KB (issue 27), with the frame's
// other keys beside it.
export const INLINE_MAX = 600;

const enc = new TextEncoder();
const MASK = (1n << 64n) - 1n;

// base/hash.c's tfb_hash_bytes over the UTF-8 of s, as a BigInt. FNV-1a
// runs on two 32-bit halves (BigInt per byte is slow at 10,000 names):
// prime = 2^40 + 0x1b3, so h * prime mod 2^64 is lo * 0x1b3 into the low
// half (its carry up), and hi * 0x1b3 + lo * 2^8 into the high half.
function hashName(s) {
  const b = enc.encode(s);
  // FNV-1a 64's offset basis, 14695981039346656037, as base/hash.c.
  let hi = 0xcbf29ce4, lo = 0x84222325;
  for (let i = 0; i < b.length; i++) {
    lo = (lo ^ b[i]) >>> 0;
    const a = lo * 0x1b3;
    const carry = Math.floor(a / 4294967296);
    hi = (hi * 0x1b3 + carry + ((lo << 8) >>> 0)) >>> 0;
    lo = a >>> 0;
  }
  let h = (BigInt(hi) << 32n) | BigInt(lo);
  h ^= h >> 33n;
  h = (h * 0xff51afd7ed558ccdn) & MASK;
  h ^= h >> 33n;
  h = (h * 0xc4ceb9fe1a85ec53n) & MASK;
  h ^= h >> 33n;
  return h || 1n;
}

export function selectionId(names) {
  let sum = 0n;
  for (const n of new Set(names)) sum = (sum + hashName(n)) & MASK;
  return sum.toString(16).padStart(16, '0');
}

// id -> names, for the selections this page made or fetched: the URL's
// `@ID` reads back from here on back/forward without a request.
const known = new Map();
// id -> the promise of its PUT, once per id (forgotten when the server
// says it lost the id).
const posted = new Map();
const KNOWN_MAX = 64;

// The id of names, remembered with them.
export function remember(names) {
  const id = selectionId(names);
  if (!known.has(id)) {
    known.set(id, names.slice());
    while (known.size > KNOWN_MAX) known.delete(known.keys().next().value);
  }
  return id;
}

export function knownRuns(id) { return known.has(id) ? known.get(id).slice() : null; }

// Makes sure the server holds the selection of names; resolves to its id.
export function ensurePosted(names) {
  const id = remember(names);
  if (!posted.has(id)) {
    const p = fetch('data/selection', {
      method: 'PUT', cache: 'no-store', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ runs: known.get(id) }),
    }).then(async (res) => {
      const j = await res.json().catch(() => ({}));
      if (!res.ok) throw new HttpError(res.status, j.error || res.statusText, 'data/selection');
      if (j.id !== id) throw new Error(`the server named the selection ${j.id}, the page ${id}`);
      return id;
    });
    posted.set(id, p);
    p.catch(() => { if (posted.get(id) === p) posted.delete(id); });
  }
  return posted.get(id);
}

// Did a request fail because the server no longer holds its selection?
export function isLost(e) { return e instanceof HttpError && e.status === 404 && /unknown selection/.test(e.message); }

// GET path with the runs given as a held selection: posts it first, and
// once more when the server lost it meanwhile (evicted, or restarted).
export async function getWithSelection(path, params, names) {
  for (let attempt = 0; ; attempt++) {
    const id = await ensurePosted(names);
    try {
      return await getJSON(path, { ...params, selection: id });
    } catch (e) {
      if (attempt === 0 && isLost(e)) { posted.delete(id); continue; }
      throw e;
    }
  }
}

// The names of a selection id from the server (a link opened afresh), or
// null when it no longer holds it.
export async function fetchSelection(id) {
  if (known.has(id)) return knownRuns(id);
  try {
    const ans = await getJSON('data/selection', { id });
    if (!ans || !Array.isArray(ans.runs)) return null;
    known.set(id, ans.runs);
    posted.set(id, Promise.resolve(id));
    return ans.runs.slice();
  } catch (e) {
    if (e instanceof HttpError && e.status === 404) return null;
    throw e;
  }
}

// Pages that can rebuild a lost selection from what else the URL holds
// (the HParams brushes) register here: fn(allRuns) -> names or null.
const recoverers = [];
export function onSelectionLost(fn) { recoverers.push(fn); }
export async function recoverSelection(allRuns) {
  for (const fn of recoverers) {
    const names = await fn(allRuns);
    if (names) return names;
  }
  return null;
}
