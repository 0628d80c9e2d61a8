(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('tfb-data').textContent);
  var rep = data.report;
  var hasChart = typeof Chart !== 'undefined';
  var nCharts = 0;
  var PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f'];
  var VERDICT = { highly: 'Highly input-bound', moderately: 'Moderately input-bound',
    potentially: 'Potentially input-bound', not: 'Not input-bound' };

  var el = tfbPage.el, add = tfbPage.add, val = tfbPage.val, num = tfbPage.num, pct = tfbPage.pct,
    table = tfbPage.table, si = tfbPage.si, bytes = tfbPage.bytes;
  function when(t) {
    if (t === null || t === undefined) return '\u2013';
    return new Date(t * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  }
  function dur(s) {
    if (s === null || s === undefined || !isFinite(s)) return '\u2013';
    if (s < 60) return (+s.toPrecision(3)) + ' s';
    s = Math.round(s);
    var h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
    var p2 = function (v) { return (v < 10 ? '0' : '') + v; };
    return (h ? h + 'h ' + p2(m) + 'm ' : m + 'm ') + p2(r) + 's';
  }
  function chartBox(parent, title, wide) {
    var box = add(parent, el('div', 'chart' + (wide ? ' wide' : '')));
    add(box, el('h4', null, title));
    var c = add(box, el('canvas'));
    return c;
  }
  function scalarChart(parent, tag, points, color) {
    if (!hasChart) return;
    var canvas = chartBox(parent, tag, false);
    var line = [], bad = [], lo = Infinity, hi = -Infinity;
    points.forEach(function (p) {
      var v = val(p[1]);
      if (isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    });
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    points.forEach(function (p) {
      var v = val(p[1]);
      if (isFinite(v)) line.push({ x: p[0], y: v });
      else {
        line.push({ x: p[0], y: null });
        /* Non-finite values stay visible: marked on the chart's edge. */
        bad.push({ x: p[0], y: v < 0 ? lo : hi, raw: num(v) });
      }
    });
    var sets = [{ label: tag, data: line, borderColor: color, backgroundColor: color,
      pointRadius: line.length > 60 ? 0 : 2, borderWidth: 1.5, spanGaps: false }];
    if (bad.length) sets.push({ label: 'NaN/Inf', data: bad, type: 'scatter', showLine: false,
      pointStyle: 'crossRot', pointRadius: 6, borderColor: '#c0392b', backgroundColor: '#c0392b' });
    new Chart(canvas, { type: 'line', data: { datasets: sets },
      options: { animation: false, maintainAspectRatio: false, parsing: false, normalized: true,
        interaction: { mode: 'nearest', intersect: false },
        plugins: { legend: { display: bad.length > 0 }, tooltip: { callbacks: {
          label: function (c) { return c.raw.raw ? 'step ' + c.raw.x + ': ' + c.raw.raw : 'step ' + c.raw.x + ': ' + num(c.raw.y); } } } },
        scales: { x: { type: 'linear', title: { display: true, text: 'step' } }, y: { title: { display: false } } } } });
    nCharts++;
  }
  function pipelineChart(parent, steps) {
    if (!hasChart || !steps.length) return;
    var canvas = chartBox(parent, 'Step time per step: input wait vs the rest (ms)', true);
    var labels = [], input = [], rest = [];
    steps.forEach(function (s) {
      labels.push(s[0]); input.push(s[2]); rest.push(Math.max(0, s[1] - s[2]));
    });
    new Chart(canvas, { type: 'bar', data: { labels: labels, datasets: [
      { label: 'input wait', data: input, backgroundColor: '#e15759', stack: 's' },
      { label: 'rest of step', data: rest, backgroundColor: '#4e79a7', stack: 's' }] },
      options: { animation: false, maintainAspectRatio: false,
        scales: { x: { stacked: true, title: { display: true, text: 'step' } },
          y: { stacked: true, title: { display: true, text: 'ms' } } } } });
    nCharts++;
  }
  function pipelineSection(sec, p, steps) {
    add(sec, el('h3', null, 'Input pipeline'));
    if (!p) { add(sec, el('p', 'muted', 'No pipeline/step_ms and pipeline/input_ms scalars.')); return; }
    add(sec, el('p', 'verdict v-' + p.verdict, (VERDICT[p.verdict] || p.verdict) + ': ' +
      pct(p.input_fraction) + ' of step time waiting for input (mean step ' + num(p.mean_step_ms) +
      ' ms, mean input wait ' + num(p.mean_input_ms) + ' ms, ' + p.steps + ' steps)'));
    var rows = [['step', p.step_ms], ['input', p.input_ms]].map(function (r) {
      var s = r[1];
      return [r[0], num(s.mean), num(s.stddev), num(s.min), num(s.p50), num(s.p90), num(s.p99), num(s.max)];
    });
    table(sec, ['ms', 'mean', 'stddev', 'min', 'p50', 'p90', 'p99', 'max'], rows);
    if (p.has_trace) add(sec, el('p', null, 'From the trace: other host time ' + pct(p.other_host_fraction) +
      ' of step time; ' + pct(p.gpu_idle_in_input_fraction) + ' of GPU idle time inside input waits.'));
    // Each piece of advice is written out once, under Advice at the top;
    // the run lists its titles with its own figures.
    var adv = p.advice || [];
    if (adv.length) {
      add(sec, el('p', 'muted', 'Advice (written out once under Advice above), with this run\'s figures:'));
      var ul = add(sec, el('ul', 'recs'));
      adv.forEach(function (a) { add(ul, el('li', null, a.title + (a.detail ? ': ' + a.detail : ''))); });
    }
    pipelineChart(sec, steps || []);
  }
  // The Efficiency dashboard's figures (server/plugins/efficiency/API.md):
  // null when the run has no step timing or perf scalars.
  function efficiencySection(sec, e) {
    if (!e) return;
    add(sec, el('h3', null, 'Efficiency'));
    var g = e.goodput || {};
    var mfu = e.mfu_pct === null ? 'peak unknown' : num(e.mfu_pct) + ' % of ' + num(e.peak_tflops) + ' TFLOP/s (' + e.peak_source + ' peak, ' +
      e.dtype + (e.dtype_assumed ? ' assumed' : '') + ')';
    var rows = [['throughput', num(e.samples_per_s) + ' samples/s, ' + num(e.tokens_per_s) + ' tokens/s, ' + num(e.tflops) + ' TFLOP/s'],
      ['MFU', mfu + (e.device ? ' on ' + e.device : '') + (e.flops_estimated ? ' (6\u00b7N\u00b7T estimate)' : '')]];
    if (g.goodput !== null && g.goodput !== undefined) rows.push(['goodput', pct(g.goodput) + ' of ' + num(g.wall_s) + ' s wall (input ' + num(g.input_s) +
      ' s, comm ' + num(g.comm_s) + ' s, startup ' + num(g.startup_s) + ' s, gaps ' + num(g.gap_s) + ' s, checkpoint ' + num(g.checkpoint_s) + ' s)']);
    if (e.energy_j !== null) rows.push(['energy', num(e.energy_j) + ' J (' + num(e.energy_wh) + ' Wh' + (e.gco2 !== null ? ', ' + num(e.gco2) + ' gCO2' : '') +
      '), ' + num(e.j_per_sample) + ' J/sample, ' + num(e.j_per_token) + ' J/token' + (e.energy_source === 'power_x_time' ? ' (power\u00d7time: no energy counter)' : '')]);
    table(sec, ['figure', 'value'], rows);
  }
  function alertsSection(sec, alerts) {
    add(sec, el('h3', null, 'Health alerts'));
    if (!alerts.length) { add(sec, el('p', 'muted', 'No NaN or Inf values.')); return; }
    add(sec, el('p', 'alert', alerts.length + ' tag' + (alerts.length > 1 ? 's' : '') +
      ' held NaN/Inf; the first is where the trouble started.'));
    table(sec, ['tag', 'first step', 'first time', 'NaN', '+Inf', '-Inf', 'events'], alerts.map(function (a) {
      return [a.tag, a.first_step, when(a.first_wall_time), a.nan, a.pos_inf, a.neg_inf, a.events];
    }));
  }
  function gradSection(sec, flags) {
    add(sec, el('h3', null, 'Gradient flags'));
    if (!flags.length) { add(sec, el('p', 'muted', 'None.')); return; }
    var groups = {}, order = [];
    flags.forEach(function (f) {
      var k = f.layer + '\u0000' + f.kind;
      if (!groups[k]) { groups[k] = { layer: f.layer, kind: f.kind, n: 0, first: f.step, last: f.step }; order.push(k); }
      var g = groups[k]; g.n++; g.first = Math.min(g.first, f.step); g.last = Math.max(g.last, f.step);
    });
    table(sec, ['layer', 'kind', 'flagged steps', 'first step', 'last step'], order.map(function (k) {
      var g = groups[k]; return [g.layer, g.kind, g.n, g.first, g.last];
    }));
  }
  function gpuSection(sec, gpu) {
    add(sec, el('h3', null, 'GPU'));
    if (!gpu) { add(sec, el('p', 'muted', 'Not traced.')); return; }
    if (gpu.error) { add(sec, el('p', 'alert', 'Trace error: ' + gpu.error)); return; }
    var devs = gpu.devices || [];
    // The step window the figures cover (tfboard report --window).
    var w = gpu.window;
    if (w) {
      add(sec, el('p', 'gpu-window', 'Window: ' + w.mode + (w.steps === null || w.steps === undefined ? ' (the whole trace, ' :
        ' (' + w.steps + ' ProfilerStep' + (w.steps === 1 ? '' : 's') + ', ') + num(w.duration_ns / 1e6) + ' ms)' +
        (w.note ? '; ' + w.note : '')));
    }
    // The device as the trace names it (deviceProperties): name, SMs,
    // memory, compute capability.
    function devName(d) {
      var p = [d.name];
      if (d.sm_count) p.push(d.sm_count + ' SMs');
      if (d.total_mem !== null && d.total_mem !== undefined) p.push((d.total_mem / 1073741824).toFixed(1) + ' GiB');
      if (d.compute_capability) p.push('compute ' + d.compute_capability);
      return p.join(', ');
    }
    if (devs.length) table(sec, ['device', 'name', 'kernels', 'busy', 'span', 'utilization', 'host wait', 'kernel wait', 'other idle'],
      devs.map(function (d) {
        var idle = d.idle || {};
        return [d.id, devName(d), d.kernels, num((d.busy_ns || 0) / 1e6) + ' ms', num((d.span_ns || 0) / 1e6) + ' ms',
          pct(d.busy_fraction), num((idle.host_wait_ns || 0) / 1e6) + ' ms',
          num((idle.kernel_wait_ns || 0) / 1e6) + ' ms', num((idle.other_ns || 0) / 1e6) + ' ms'];
      }));
    var dist = gpu.distributed;
    if (dist) {
      add(sec, el('p', 'gpu-distributed', 'Distributed: rank ' + (dist.rank === null ? '?' : dist.rank) + ' of world size ' +
        (dist.world_size === null ? '?' : dist.world_size) + (dist.backend ? ', backend ' + dist.backend : '') + ', ' +
        (dist.process_groups || []).length + ' process group' + ((dist.process_groups || []).length === 1 ? '' : 's')));
    }
    (gpu.notes || []).forEach(function (n) { add(sec, el('p', 'alert gpu-note', 'Trace note: ' + n.text)); });
    var ks = gpu.kernels || [];
    if (ks.length) {
      add(sec, el('p', 'muted', 'Top kernels by total time'));
      table(sec, ['kernel', 'count', 'total', 'mean', 'share'], ks.map(function (k) {
        return [k.name, k.count, num(k.total_ns / 1e6) + ' ms', num(k.mean_ns / 1e3) + ' \u00b5s', pct(k.share)];
      }));
    }
  }
  function gpuMemorySection(sec, m) {
    if (!m) return;
    if (m.error) { add(sec, el('p', 'alert', 'GPU memory events error: ' + m.error)); return; }
    /* the one number format, as the text report and the GPU page */
    function allocRows(v) { return v.map(function (a) {
      return [bytes(a.bytes), '+' + si((a.t_ns - m.first_ns) / 1e9, 's'), a.stream === null ? '-' : a.stream,
        a.kernel || '-', a.range || '-']; }); }
    (m.devices || []).forEach(function (d) {
      add(sec, el('p', null, 'GPU memory ' + d.device + ': peak ' + bytes(d.peak_bytes) + ' at +' +
        si((d.peak_t_ns - m.first_ns) / 1e9, 's') + ' from the first memory event, ' + d.live_at_peak_total +
        ' allocations live; ' + bytes(d.end_bytes) + ' at the end'));
      if (d.live_at_peak.length) table(sec, ['bytes', 'at', 'stream', 'kernel', 'NVTX range'], allocRows(d.live_at_peak));
      if (d.post_mortem) {
        add(sec, el('p', 'alert', 'OOM post-mortem: the trace ends with memory high, still allocating; last allocations, most recent first'));
        table(sec, ['bytes', 'at', 'stream', 'kernel', 'NVTX range'], allocRows(d.last_allocs || []));
      }
    });
  }
  function ranksSection(sec, rk, g) {
    if (!rk) return;
    add(sec, el('h3', null, 'Distributed job ' + rk.job));
    if (rk.section_run !== undefined) {
      add(sec, el('p', 'muted', 'Rank ' + rk.rank + ' of job ' + rk.job +
        '; the job\'s section is under run ' + rk.section_run + '.'));
      return;
    }
    add(sec, el('p', null, rk.n_ranks + ' ranks (world size ' + rk.world_size + '), ' + rk.n_steps + ' steps.'));
    if (!rk.stragglers.length) add(sec, el('p', 'muted', 'No straggler.'));
    rk.stragglers.forEach(function (s) { add(sec, el('p', 'alert', s.sentence)); });
    var sk = rk.skew || {};
    if (sk.n) add(sec, el('p', null, 'Skew (last minus first rank to finish a step): p50 ' + num(sk.p50_ms) +
      ' ms, p90 ' + num(sk.p90_ms) + ' ms, max ' + num(sk.max_ms) + ' ms at step ' + sk.max_step + '.'));
    table(sec, ['rank', 'steps', 'step p50 ms', 'step p90 ms', 'input ms', 'comm ms', 'compute p50 ms', 'vs median', 'straggler'],
      rk.ranks.map(function (r) {
        return [r.rank, r.steps, num(r.step_ms.p50), num(r.step_ms.p90), num(r.input_ms.mean), num(r.comm_ms.mean),
          num(r.compute_ms.p50), pct(r.slowdown), r.straggler ? 'yes' : ''];
      }));
    if (g && g.n_traced) {
      add(sec, el('p', null, 'GPU (HTA temporal breakdown, shares of the trace span); job comm/compute overlap ' + pct(g.overlap) + '.'));
      table(sec, ['rank', 'compute', 'communication', 'memory', 'idle', 'busy', 'overlap'],
        g.ranks.filter(function (r) { return r.has_trace; }).map(function (r) {
          var t = (r.compute_ns + r.comm_ns + r.memory_ns + r.idle_ns) || 1;
          return [r.rank, pct(r.compute_ns / t), pct(r.comm_ns / t), pct(r.memory_ns / t), pct(r.idle_ns / t),
            num(r.busy_pct) + '%', pct(r.overlap)];
        }));
    }
    (rk.notes || []).concat((g && g.notes) || []).forEach(function (n) { add(sec, el('p', 'muted', 'Note: ' + n.text)); });
  }
  var meta = document.getElementById('meta');
  var nAlerts = rep.runs.reduce(function (s, r) { return s + r.alerts.length; }, 0);
  meta.textContent = 'Logdir ' + rep.logdir + ' \u2014 ' + rep.runs.length + ' run' +
    (rep.runs.length === 1 ? '' : 's') + ', ' + nAlerts + ' alert' + (nAlerts === 1 ? '' : 's');
  var main = document.getElementById('runs');
  function statusClass(st) {
    return st === 'ok' ? 'st-ok' : st === 'diverged' ? 'st-bad' : 'st-warn';
  }
  // The first screen, as in the text report: a line per run, the findings
  // ranked (one line for the same finding on several runs), then the
  // advice, each once with the runs it applies to.
  function summarySection(sm) {
    var sec = add(main, el('section', 'summary'));
    sec.id = 'summary';
    add(sec, el('h2', null, 'Summary'));
    var t = add(sec, el('table', 'summary-runs'));
    var tr = add(add(t, el('thead')), el('tr'));
    ['run', 'steps', 'duration', 'status', 'headline'].forEach(function (h) { add(tr, el('th', null, h)); });
    var tb = add(t, el('tbody'));
    sm.runs.forEach(function (r, i) {
      var row = add(tb, el('tr'));
      var a = add(add(row, el('td')), el('a', null, r.run));
      a.href = '#run-' + i;
      add(row, el('td', null, r.steps === null ? '\u2013' : r.steps));
      add(row, el('td', null, dur(r.duration_s)));
      var st = add(row, el('td', 'status'));
      (r.labels.length ? r.labels : ['ok']).forEach(function (l) {
        add(st, el('span', 'badge ' + statusClass(l), l));
      });
      add(row, el('td', 'headline', r.headline ? r.headline.tag + ' ' + num(r.headline.last) : ''));
    });
    add(sec, el('h3', null, 'Top findings'));
    if (!sm.findings.length) add(sec, el('p', 'muted', 'None: no run diverged, straggled or waited on input.'));
    else {
      var ol = add(sec, el('ol', 'findings'));
      sm.findings.forEach(function (f) {
        var li = add(ol, el('li', statusClass(f.label)));
        add(li, el('strong', null, f.runs.join(', ')));
        add(li, el('span', null, ' \u2014 ' + f.text));
      });
    }
    if (sm.advice.length) {
      add(sec, el('h3', null, 'Advice'));
      add(sec, el('p', 'muted', 'Each piece of advice once, with the runs it applies to (each run\'s figures are in its section).'));
      var ul = add(sec, el('ul', 'advice'));
      sm.advice.forEach(function (a) {
        var li = add(ul, el('li', null, a.advice + ' '));
        add(li, el('span', 'muted', '\u2014 runs ' + a.runs.join(', ')));
      });
    }
  }
  if (rep.summary) summarySection(rep.summary);
  rep.runs.forEach(function (run, i) {
    var extra = data.charts[i] || {};
    var sec = add(main, el('section', 'run'));
    sec.id = 'run-' + i;
    add(sec, el('h2', null, 'Run ' + run.run));
    add(sec, el('p', 'muted', 'last step ' + (run.steps === null ? '\u2013' : run.steps) + ' \u00b7 duration ' +
      dur(run.duration_s) + ' \u00b7 ' + when(run.first_wall_time) + ' to ' + when(run.last_wall_time)));
    alertsSection(sec, run.alerts);
    pipelineSection(sec, run.pipeline, extra.pipeline);
    efficiencySection(sec, run.efficiency);
    gradSection(sec, run.gradient_flags);
    gpuSection(sec, run.gpu);
    gpuMemorySection(sec, run.gpu_memory);
    ranksSection(sec, run.ranks, run.ranks_gpu);
    add(sec, el('h3', null, 'Scalars'));
    var tags = Object.keys(run.scalars);
    if (!tags.length) add(sec, el('p', 'muted', 'None.'));
    else table(sec, ['tag', 'last', 'min', 'max', 'count'], tags.map(function (t) {
      var s = run.scalars[t]; return [t, num(s.last), num(s.min), num(s.max), s.count];
    }));
    var grid = add(sec, el('div', 'grid'));
    (extra.scalars || []).forEach(function (s, k) { scalarChart(grid, s.tag, s.points, PALETTE[k % PALETTE.length]); });
    // The last image of each image tag, from a data: URL (the only image
    // source the page's policy allows).
    var imgs = extra.images || [];
    if (imgs.length) {
      add(sec, el('h3', null, 'Images (last of each tag)'));
      var ig = add(sec, el('div', 'images'));
      imgs.forEach(function (im) {
        var fig = add(ig, el('figure', 'image'));
        if (im.src) { var img = add(fig, document.createElement('img')); img.src = im.src; img.alt = im.tag; }
        else add(fig, el('p', 'alert', im.error));
        add(fig, el('figcaption', 'muted', im.tag + ' \u00b7 step ' + im.step));
      });
    }
  });
  if (!hasChart) add(main, el('p', 'muted', 'Charts are not available in this build.'));
  document.body.setAttribute('data-charts', String(nCharts));
  document.body.setAttribute('data-rendered', '1');
})();
