(function () {
  'use strict';
  var c = JSON.parse(document.getElementById('tfb-data').textContent);
  var el = tfbPage.el, add = tfbPage.add, val = tfbPage.val, num = tfbPage.num, pct = tfbPage.pct,
    table = tfbPage.table;
  /* the one number format (page.js): "+12.3 %", "\u00d71.126e5", "new" */
  var change = tfbPage.change;
  function ms(ns) { return ns === null || ns === undefined ? '\u2013' : tfbPage.si(val(ns) / 1e9, 's'); }
  function msv(x) { return x === null || x === undefined ? '\u2013' : tfbPage.si(val(x) / 1e3, 's'); }
  /* For figures where higher is worse (times): colour the change. */
  function timeChange(x) {
    var v = val(x);
    return { t: change(x), cls: typeof v === 'number' && v > 0.05 ? 'worse' : typeof v === 'number' && v < -0.05 ? 'better' : null };
  }
  document.getElementById('meta').textContent = 'A (baseline): ' + c.a + ' \u2014 B: ' + c.b +
    ' \u2014 changes are (B \u2212 A) / |A|';
  var main = document.getElementById('runs');
  var sec = add(main, el('section', 'run'));
  add(sec, el('h2', null, 'Scalars'));
  add(sec, el('p', 'muted', c.scalars.length + ' shared tags, ' + c.scalars_only_a + ' only in A, ' + c.scalars_only_b + ' only in B'));
  if (c.scalars.length) table(sec, ['tag', 'final A', 'final B', 'change', 'min A', 'min B', 'change'], c.scalars.map(function (s) {
    return [s.tag, num(s.last_a), num(s.last_b), change(s.last_change), num(s.min_a), num(s.min_b), change(s.min_change)];
  }));
  sec = add(main, el('section', 'run'));
  add(sec, el('h2', null, 'Input pipeline'));
  var p = c.pipeline;
  if (!p.steps_a && !p.steps_b) add(sec, el('p', 'muted', 'Neither run has pipeline/step_ms and pipeline/input_ms scalars.'));
  else table(sec, ['figure', 'A', 'B', 'change'], [
    ['mean step time', msv(p.step_ms_a), msv(p.step_ms_b), timeChange(p.step_ms_change)],
    ['mean input wait', msv(p.input_ms_a), msv(p.input_ms_b), timeChange(p.input_ms_change)],
    ['input share', pct(p.input_share_a), pct(p.input_share_b),
      p.input_share_change === null ? '\u2013' : ((p.input_share_change >= 0 ? '+' : '') + (100 * p.input_share_change).toFixed(1) + ' pts')],
    ['verdict', tfbPage.verdict(p.verdict_a), tfbPage.verdict(p.verdict_b), '']]);
  sec = add(main, el('section', 'run'));
  add(sec, el('h2', null, 'Efficiency'));
  var e = c.efficiency;
  if (!e.has_a && !e.has_b) add(sec, el('p', 'muted', 'Neither run has step timing or perf scalars.'));
  else table(sec, ['figure', 'A', 'B', 'change'], [
    ['MFU %', e.mfu_a === null ? 'peak unknown' : num(e.mfu_a), e.mfu_b === null ? 'peak unknown' : num(e.mfu_b), change(e.mfu_change)],
    ['tokens/s', num(e.tokens_per_s_a), num(e.tokens_per_s_b), change(e.tokens_per_s_change)],
    ['J/token', num(e.j_per_token_a), num(e.j_per_token_b), timeChange(e.j_per_token_change)]]);
  sec = add(main, el('section', 'run'));
  add(sec, el('h2', null, 'GPU kernel time'));
  var g = c.gpu;
  if (g.error_a) add(sec, el('p', 'alert', 'Run A\'s trace could not be read: ' + g.error_a));
  if (g.error_b) add(sec, el('p', 'alert', 'Run B\'s trace could not be read: ' + g.error_b));
  if (!g.traced_a && !g.traced_b) add(sec, el('p', 'muted', 'Neither run was traced.'));
  else {
    var slower = g.kernels.filter(function (k) { return k.slower; }).length;
    add(sec, el('p', null, 'All kernels: ' + ms(g.kernel_ns_a) + ' \u2192 ' + ms(g.kernel_ns_b) + ' (' + change(g.kernel_change) + '); ' +
      slower + ' kernel' + (slower === 1 ? '' : 's') + ' slower'));
    table(sec, ['kernel', 'count A', 'count B', 'total A', 'total B', 'change'], g.kernels.map(function (k) {
      return [k.name, k.count_a, k.count_b, ms(k.total_ns_a), ms(k.total_ns_b), change(k.change)];
    }), function (i) { return g.kernels[i].slower ? 'worse' : null; });
  }
  // HTA's TraceDiff (server/analysis/trace_diff.h): null without a trace
  // in both runs.
  sec = add(main, el('section', 'run'));
  add(sec, el('h2', null, 'Trace diff (kernels and CPU ops)'));
  var d = c.trace_diff;
  if (!d) add(sec, el('p', 'muted', 'Needs a trace in both runs.'));
  else {
    var kinds = function (x) {
      return x.added + ' added, ' + x.deleted + ' deleted, ' + x.increased + ' increased, ' + x.decreased + ' decreased, ' + x.unchanged + ' unchanged';
    };
    add(sec, el('p', null, 'Kernels: ' + kinds(d.kernels) + '. CPU ops: ' + kinds(d.ops) + ' (in count).'));
    var moved = d.rows.filter(function (r) { return r.diff_count !== 0 || r.diff_ns !== 0; });
    if (!moved.length) add(sec, el('p', 'muted', 'No kernel or op changed in count or time.'));
    else table(sec, ['name', 'on', 'change', 'count A', 'count B', 'total A', 'total B', 'B - A'], moved.map(function (r) {
      return [r.name, r.device, r.change, r.count_a, r.count_b, ms(r.total_ns_a), ms(r.total_ns_b), ms(r.diff_ns)];
    }));
  }
  sec = add(main, el('section', 'run'));
  add(sec, el('h2', null, 'Hparams that differ'));
  var hp = c.hparams;
  add(sec, el('p', 'muted', 'A logged ' + hp.count_a + ', B logged ' + hp.count_b));
  if (!hp.differ.length) add(sec, el('p', 'muted', 'None.'));
  else table(sec, ['hparam', 'A', 'B'], hp.differ.map(function (h) {
    return [h.name, h.a === null ? '(not set)' : h.a, h.b === null ? '(not set)' : h.b];
  }));
  document.body.setAttribute('data-rendered', '1');
})();
