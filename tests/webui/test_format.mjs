// core/format.js without a browser (node): the axis numbers of issue 20 -
// nice limits, tick labels as people write them, log axes that label only
// decades, no "-0", natural order of names that end in numbers.
import * as f from '../../webui/js/core/format.js';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';

let failed = 0;
function eq(got, want, what) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g === w) console.log('ok - ' + what);
  else { failed++; console.log(`not ok - ${what}: got ${g}, want ${w}`); }
}
// Labels of a linear axis with these tick values, as Chart.js calls the
// callback.
const lin = (vals) => { const t = vals.map((value) => ({ value })); return vals.map((v, i) => f.linearTicks(v, i, t)); };
const log = (vals) => { const t = vals.map((value) => ({ value })); return vals.map((v, i) => f.logTicks(v, i, t)); };

eq(lin([0, 2e28, 4e28, 6e28, 8e28]), ['0', '2e28', '4e28', '6e28', '8e28'], 'huge values: scientific with the spacing\'s mantissa');
eq(lin([0, 1e-7, 2e-7, 3e-7]), ['0', '1e-7', '2e-7', '3e-7'], 'tiny values: 1e-7 style');
eq(lin([2.5e-7, 5e-7, 7.5e-7]), ['2.5e-7', '5e-7', '7.5e-7'], 'mantissa digits from the spacing');
eq(lin([-0.1, 0, 0.1, 0.2, 0.30000000000000004]), ['-0.1', '0', '0.1', '0.2', '0.3'], 'float noise snapped, decimals from the spacing');
eq(lin([0, 2500, 5000, 7500, 10000]), ['0', '2.5k', '5k', '7.5k', '10k'], 'thousands: SI');
eq(lin([0, 5e14, 1e15]), ['0', '5e14', '1e15'], 'past the SI range: scientific, never 100e15');
eq(lin([0, 2e6, 4e6]), ['0', '2M', '4M'], 'millions: SI');
eq(lin([9, 9.1, 9.2]), ['9', '9.1', '9.2'], 'plain digits, no padding');
eq(lin([-1e-17, 0.5]), ['0', '0.5'], 'no -0 from float noise');
eq(f.niceRange(0.0123, 79.93e27), [0, 8e28], 'limits on a nice step: 0 to 8e28, not 79.93e27');
eq(f.niceRange(2.13, 9.185, 10), [2, 10], 'limits 2 to 10, not 9.185');
eq(f.niceRange(2.13, 9.185, 5), [2, 10], 'and with five steps');
eq(f.niceRange(0.21, 0.98, 10), [0.2, 1], 'an accuracy gets 0.2 to 1');
eq(f.niceRange(5, 5), [4, 6], 'one value: a nice step around it');
const decades = [];
for (let e = -9; e < 3; e++) for (let m = 1; m < 10; m++) decades.push(m * 10 ** e);
eq(log(decades).filter(Boolean), ['1e-8', '1e-6', '1e-4', '0.01', '1', '100'], 'a log axis over 12 decades: every other decade, no overlap');
eq(log([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30]), ['1', '2', '', '', '5', '', '', '', '', '10', '20', ''], 'under two decades: 1, 2, 5');
eq([f.pct(-0.00001), f.fixed(-0.04, 1), f.eng(-0), f.eng(-1e-320)], ['0.0 %', '0.0', '0', '0'], 'no signed zero');
eq(['rank-10', 'rank-2', 'rank-1', 'rank-3'].sort(f.naturalCompare), ['rank-1', 'rank-2', 'rank-3', 'rank-10'], 'natural order');
eq(['run10', 'Run2', 'run2'].sort(f.naturalCompare), ['Run2', 'run2', 'run10'], 'natural order, case ties broken stably');
eq(['sweep/lr0.3_seed1', 'sweep/lr0.1_seed2', 'sweep/lr0.03_seed1', 'sweep/lr0.1_seed1'].sort(f.naturalCompare),
  ['sweep/lr0.03_seed1', 'sweep/lr0.1_seed1', 'sweep/lr0.1_seed2', 'sweep/lr0.3_seed1'], 'natural order, numbers with a fraction by value');
eq(['a', 'a1', 'a0.5', 'b'].sort(f.naturalCompare), ['a', 'a0.5', 'a1', 'b'], 'a name before its numbered ones');
// naturalSort (the run list's sort, keys made once): naturalCompare's order;
// naturalSorted gives a list already in that order back as it is.
const T_same = (a, b) => eq(a === b, true, 'naturalSorted keeps a sorted list');
for (const l of [['rank-10', 'rank-2', 'rank-1', 'rank-3'], ['run10', 'Run2', 'run2'], ['a', 'a1', 'a0.5', 'b'],
  ['sweep/lr0.3_seed1', 'sweep/lr0.1_seed2', 'sweep/lr0.03_seed1', 'sweep/lr0.1_seed1'], ['trial-00010', 'trial-00002', 'trial-2', 'x']]) {
  eq(f.naturalSort(l), l.slice().sort(f.naturalCompare), 'naturalSort as naturalCompare: ' + l.join(' '));
  eq(f.naturalSorted(l.slice()), l.slice().sort(f.naturalCompare), 'naturalSorted as naturalCompare: ' + l.join(' '));
  const s = l.slice().sort(f.naturalCompare);
  T_same(f.naturalSorted(s), s);
}
const ticks = (vals) => vals.map((v) => ({ value: v }));
const wide = ticks([1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18]);
eq([1e3, 1e9, 1e15].map((v) => f.logTicks(v, 0, wide)), ['1e3', '1e9', '1e15'], 'a log axis past 1e15: one style (no 1000, 1G, 1e15)');
const mid = ticks([1, 10, 100, 1e3, 1e4, 1e5, 1e6]);
eq([1, 1e3, 1e6].map((v) => f.logTicks(v, 0, mid)), ['1', '1000', '1M'], 'a log axis within SI range');
eq([f.scaleEnd(1.713e20), f.scaleEnd(0.008256), f.scaleEnd(9.996e4), f.scaleEnd(-2.5e-7)], ['1.71e20', '0.00826', '1e5', '-2.5e-7'], 'colour scale ends');

// The one number format (issue 27): the shared table of cases, which the
// C side (tests/unit/test_format_cases.c) reads too. Checked on the page's
// format.js and on the html report's page.js (a classic script, run here
// as the report inlines it).
const table = JSON.parse(readFileSync(new URL('../format_cases.json', import.meta.url), 'utf8')).cases;
const sandbox = {};
vm.runInNewContext(readFileSync(new URL('../../webui/report/page.js', import.meta.url), 'utf8') + '\nthis.tfbPage = tfbPage;', sandbox);
const page = sandbox.tfbPage;
const value = (c) => (c.kind === 'verdict' ? c.value : c.value === 'NaN' ? NaN : c.value === '+Inf' ? Infinity : c.value === '-Inf' ? -Infinity : c.value);
const sides = {
  'format.js': { num: f.eng, si: f.si, bytes: f.bytes, change: f.change, verdict: f.verdict },
  'report/page.js': { num: page.num, si: page.si, bytes: page.bytes, change: page.change, verdict: page.verdict },
};
let tableFailed = 0;
for (const [side, fn] of Object.entries(sides)) {
  for (const c of table) {
    const got = c.kind === 'si' ? fn.si(value(c), c.unit) : fn[c.kind](value(c));
    if (got !== c.want) { tableFailed++; console.log(`not ok - ${side} ${c.kind}(${JSON.stringify(c.value)}${c.unit ? ', ' + c.unit : ''}): got ${JSON.stringify(got)}, want ${JSON.stringify(c.want)}`); }
  }
}
eq(tableFailed, 0, `format_cases.json: ${table.length} cases on format.js and report/page.js`);
console.log('1..25');
process.exit(failed ? 1 : 0);
