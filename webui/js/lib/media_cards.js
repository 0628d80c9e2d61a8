// What the media dashboards (Images, Audio) share: the rows they show,
// one per tag and sample with a card per selected run, and the step a
// card's slider lands on. Each page keeps its own card (an <img> or an
// <audio> player) and its own listing fields.
import { getJSON } from '../core/api.js';
import { naturalCompare } from '../core/format.js';

// The most cards a media page builds: each is one listing request and, on
// the Audio tab, a player; 10,000 runs x 5 image tags would otherwise ask
// for 50,000 listings at once. The rest are counted in a note that says
// how to reach them (the tag filter, the run selection).
export const MEDIA_CARDS_MAX = 300;

// The index of the last entry at or before step (0 when none is): entries
// are in step order, as the listing routes give them.
export function atStep(entries, step) {
  let lo = 0, hi = entries.length - 1, best = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (entries[mid].step <= step) { best = mid; lo = mid + 1; } else hi = mid - 1;
  }
  return best;
}

// The rows of a media dashboard for the selected runs: tags from
// data/plugin/<plugin>/tags matching re (a RegExp or null), one row per tag
// and sample ("tag [s]" when a tag has several), in natural order, and
// each row's listings, fetched together from data/plugin/<plugin>/<list>.
// Returns { keys, rows: Map key -> {tag, sample, runs}, lists, total }
// where lists holds, row by row and run by run, a listing or {error}, for
// the first `max` cards only (rows and their runs are cut to them), and
// total counts every matching card. Throws when the tags cannot be read.
export async function mediaRows(plugin, list, runs, re, max = MEDIA_CARDS_MAX) {
  const tags = await getJSON(`data/plugin/${plugin}/tags`);
  const rows = new Map();
  for (const r of runs) {
    for (const [t, info] of Object.entries(tags[r] || {})) {
      if (re && !re.test(t)) continue;
      for (let s = 0; s < Math.max(1, info.samples); s++) {
        const key = info.samples > 1 ? `${t} [${s}]` : t;
        if (!rows.has(key)) rows.set(key, { tag: t, sample: s, runs: [] });
        rows.get(key).runs.push(r);
      }
    }
  }
  const all = [...rows.keys()].sort(naturalCompare);
  const keys = [];
  let total = 0;
  for (const k of all) {
    const row = rows.get(k);
    const room = Math.max(0, max - total);
    total += row.runs.length;
    if (!room) { rows.delete(k); continue; }
    if (row.runs.length > room) row.runs = row.runs.slice(0, room);
    keys.push(k);
  }
  const lists = await Promise.all(keys.flatMap((k) => rows.get(k).runs.map((r) =>
    getJSON(`data/plugin/${plugin}/${list}`, { run: r, tag: rows.get(k).tag, sample: rows.get(k).sample })
      .catch((e) => ({ error: e.message })))));
  return { keys, rows, lists, total };
}
