// HTTP access to the tfboard JSON API (DESIGN.md "HTTP API").
// At most MAX_INFLIGHT requests run at once, so a page with hundreds of
// charts does not flood the server or the browser's connection pool.

const MAX_INFLIGHT = 6;
let inflight = 0;
const waiting = [];
let activeListener = null;

export class HttpError extends Error {
  constructor(status, message, url) {
    super(message);
    this.status = status;
    this.url = url;
  }
}

// Called with the number of requests in flight, for the busy indicator.
export function onActivity(fn) { activeListener = fn; }

function acquire() {
  if (inflight < MAX_INFLIGHT) { inflight++; return Promise.resolve(); }
  return new Promise((resolve) => waiting.push(resolve));
}

function release() {
  const next = waiting.shift();
  if (next) next();
  else inflight--;
}

export function url(path, params) {
  const q = new URLSearchParams();
  if (params) {
    // An array value repeats the key (`run=a&run=b`), as the batched
    // scalars route takes its runs.
    for (const [k, v] of Object.entries(params)) {
      if (Array.isArray(v)) { for (const x of v) q.append(k, String(x)); }
      else if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
    }
  }
  const s = q.toString();
  return s ? path + '?' + s : path;
}

// GET path?params and parse JSON. Rejects with HttpError (status 0 for a
// network failure); a 4xx/5xx carries the server's {"error": "..."} text.
export async function getJSON(path, params) {
  const u = url(path, params);
  await acquire();
  if (activeListener) activeListener(inflight + waiting.length);
  try {
    let res;
    try {
      res = await fetch(u, { cache: 'no-store' });
    } catch (e) {
      throw new HttpError(0, 'server unreachable', u);
    }
    const text = await res.text();
    if (!res.ok) {
      let msg = res.status + ' ' + res.statusText;
      try { const j = JSON.parse(text); if (j && j.error) msg = j.error; } catch (e) { /* not JSON */ }
      throw new HttpError(res.status, msg, u);
    }
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new HttpError(res.status, 'bad JSON from ' + path, u);
    }
  } finally {
    release();
    if (activeListener) activeListener(inflight + waiting.length);
  }
}

// As getJSON but null for 404 (a route or run without this kind of data).
export async function getOptional(path, params) {
  try {
    return await getJSON(path, params);
  } catch (e) {
    if (e instanceof HttpError && (e.status === 404 || e.status === 501)) return null;
    throw e;
  }
}

// The API writes non-finite numbers as the strings "NaN", "Infinity",
// "-Infinity" (TensorBoard's convention). num() turns a value in a numeric
// position back into a number; it is applied only where a number is
// expected, so a text entry that says "NaN" stays text.
export function num(v) {
  if (typeof v === 'number') return v;
  if (v === 'NaN') return NaN;
  if (v === 'Infinity' || v === '+Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  if (v === null || v === undefined) return null;
  const f = Number(v);
  return Number.isNaN(f) ? NaN : f;
}
