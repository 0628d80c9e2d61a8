// "Export this view" (UI.md "Beyond TensorBoard", issue 20): one
// self-contained HTML file that opens offline, from a file:// URL, in any
// browser and draws the charts of the current view again. Inlined into it:
// the page's stylesheet, Chart.js (vendor/), the number formatting of
// core/format.js (so ticks read the same) and a small viewer script; the
// data is the points each scalar chart drew (the same downsampled series,
// the same axis ranges), as JSON. Other canvases of the page (heat maps,
// plain charts) go in as PNG images. Nothing in the file is fetched.
//
// Strings from event files (run and tag names) travel as JSON inside a
// <script type="application/json"> with every '<' escaped, and the viewer
// sets them with textContent: never markup.
import { INLINE_MAX, remember } from './selection.js';
import { h } from './dom.js';

// JSON that is safe inside a <script> element.
function scriptJson(v) {
  return JSON.stringify(v).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}
// Script text that cannot close its <script> element early.
function scriptText(s) { return s.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--'); }

// format.js as a classic script: its exports become plain declarations.
function classic(src) { return src.replace(/^export\s+/gm, ''); }

// The viewer inside the exported file. It runs with format.js's functions
// in scope and window.Chart from the inlined Chart.js. window.__export
// says what it drew (tests/webui/test_newcomer.js compares it with the
// live page).
function viewer() {
  const spec = JSON.parse(document.getElementById('tfb-data').textContent);
  const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
  document.getElementById('tfb-title').textContent = spec.title;
  document.getElementById('tfb-sub').textContent = spec.subtitle;
  const css = getComputedStyle(document.documentElement);
  Chart.defaults.color = css.getPropertyValue('--muted').trim();
  Chart.defaults.borderColor = css.getPropertyValue('--grid').trim();
  Chart.defaults.font.size = 11;
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  const grid = document.getElementById('tfb-grid');
  const drawn = [];
  const xfmt = (mode) => (mode === 'relative' ? (v) => rel(v) : mode === 'wall' ? (v) => wallShort(v) : linearTicks);
  for (const c of spec.charts) {
    const card = el('div', 'card');
    card.appendChild(el('div', 'card-title', c.title));
    if (c.sub) card.appendChild(el('div', 'card-sub', c.sub));
    const wrap = el('div', 'chart-wrap');
    card.appendChild(wrap);
    grid.appendChild(card);
    if (c.image) {
      const img = el('img', 'export-img');
      img.src = c.image;
      img.alt = c.title;
      wrap.style.height = 'auto';
      wrap.appendChild(img);
      drawn.push({ title: c.title, image: true });
      continue;
    }
    const canvas = el('canvas');
    wrap.appendChild(canvas);
    if (c.outliers && !c.outliers.shown) {
      const parts = [];
      if (c.outliers.above) parts.push(c.outliers.above + ' point' + (c.outliers.above === 1 ? '' : 's') + ' above');
      if (c.outliers.below) parts.push(c.outliers.below + ' below');
      wrap.appendChild(el('span', 'outlier-marker', (c.outliers.above ? '▲ ' : '▼ ') + parts.join(', ')));
    }
    const marks = {
      id: 'tfbMarks',
      afterDatasetsDraw(chart) {
        const g = chart.ctx, a = chart.chartArea, xs = chart.scales.x;
        g.save();
        g.font = 'bold 11px sans-serif';
        g.textAlign = 'center';
        for (const s of c.nonfinite || []) {
          g.fillStyle = s.color;
          for (const [x, kind] of s.marks) {
            if (x < xs.min || x > xs.max) continue;
            const px = xs.getPixelForValue(x);
            if (kind === 'neg_inf') { g.textBaseline = 'bottom'; g.fillText('▼', px, a.bottom); } else if (kind === 'pos_inf') { g.textBaseline = 'top'; g.fillText('▲', px, a.top); } else { g.textBaseline = 'top'; g.fillText('✕', px, a.top + 12); }
          }
        }
        g.restore();
      },
    };
    const chart = new Chart(canvas, {
      type: 'line',
      data: { datasets: c.datasets.map((d) => ({ ...d, data: d.data.map((p) => ({ x: p[0], y: p[1] })), pointBackgroundColor: d.borderColor, fill: false })) },
      options: {
        parsing: false, normalized: true, spanGaps: true,
        elements: { point: { radius: 0 }, line: { tension: 0 } },
        plugins: { legend: { display: c.legend, position: 'bottom', labels: { boxWidth: 10, filter: (it) => !/ \(raw\)$/.test(it.text) } }, tooltip: { mode: 'nearest', intersect: false } },
        scales: {
          x: { type: 'linear', min: c.x.min, max: c.x.max, title: { display: true, text: c.x.title }, ticks: { maxRotation: 0, autoSkipPadding: 12, includeBounds: false, callback: xfmt(c.x.mode) } },
          y: { type: c.y.log ? 'logarithmic' : 'linear', min: c.y.min, max: c.y.max, title: { display: !!c.y.title, text: c.y.title }, ticks: { autoSkipPadding: 6, includeBounds: false, maxTicksLimit: 8, callback: c.y.log ? logTicks : linearTicks } },
          // A multi-tag chart's second unit, on the right as drawn.
          ...(c.y1 ? { y1: { type: c.y.log ? 'logarithmic' : 'linear', position: 'right', min: c.y1.min, max: c.y1.max, grid: { drawOnChartArea: false }, title: { display: !!c.y1.title, text: c.y1.title }, ticks: { autoSkipPadding: 6, includeBounds: false, maxTicksLimit: 8, callback: c.y.log ? logTicks : linearTicks } } } : {}),
        },
      },
      plugins: [marks],
    });
    drawn.push({
      title: c.title,
      datasets: chart.data.datasets.map((d) => ({ label: d.label, n: d.data.length })),
      y: [chart.scales.y.min, chart.scales.y.max],
      y1: chart.scales.y1 ? { range: [chart.scales.y1.min, chart.scales.y1.max], position: chart.scales.y1.position, title: chart.scales.y1.options.title.display ? chart.scales.y1.options.title.text : '' } : null,
      ticks: { y: chart.scales.y.ticks.map((t) => t.label) },
    });
  }
  window.__export = { ready: true, charts: drawn };
}

// The charts of the main area, in page order: scalar charts as data, any
// other canvas as an image. Hidden (collapsed, not yet drawn) ones are left
// out: the file holds what the view shows.
function collect(main) {
  const charts = [];
  for (const cv of main.querySelectorAll('canvas')) {
    if (!cv.width || !cv.height || cv.offsetParent === null) continue;
    const card = cv.closest('.card');
    const titleEl = card && card.querySelector('.card-title, .card-h, h3');
    const title = (titleEl ? titleEl.textContent : '') || (card && card.dataset.tag) || 'chart';
    if (cv.$scalarChart) {
      charts.push({ title, ...cv.$scalarChart.exportSpec() });
    } else {
      try { charts.push({ title, image: cv.toDataURL('image/png') }); } catch (e) { /* a tainted canvas: left out */ }
    }
  }
  return charts;
}

async function text(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(url + ': HTTP ' + r.status);
  return r.text();
}

// Builds the file's text for the current view.
export async function buildExport({ main, tab, runs }) {
  const [css, chartjs, fmt] = await Promise.all([text('style.css'), text('vendor/chart.umd.min.js'), text('js/core/format.js')]);
  const charts = collect(main);
  const when = new Date();
  // A long selection is named by its id (core/selection.js) and the view's
  // URL state (brush ranges included), not by thousands of names.
  const long = JSON.stringify(runs).length > INLINE_MAX;
  const spec = {
    title: 'tfboard · ' + tab,
    subtitle: `${runs.length} run${runs.length === 1 ? '' : 's'}: ${runs.slice(0, 20).join(', ')}${runs.length > 20 ? ', …' : ''} · exported ${when.toLocaleString()} · ${charts.length} chart${charts.length === 1 ? '' : 's'}`,
    tab, runCount: runs.length, charts, view: location.hash,
    ...(long ? { selection: remember(runs) } : { runs }),
  };
  const theme = document.documentElement.dataset.theme || '';
  return '<!doctype html>\n<html lang="en"' + (theme === 'dark' || theme === 'light' ? ` data-theme="${theme}"` : '') + '>\n<head>\n<meta charset="utf-8">\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>tfboard export</title>\n' +
    '<style>\n' + css.replace(/<\/style/gi, '<\\/style') + '\n' +
    'body { display: block; overflow: auto; } .export-head { padding: 12px 18px; background: var(--topbar); color: var(--topbar-ink); }\n' +
    '.export-head h1 { margin: 0; font-size: 17px; } .export-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: 12px; padding: 14px 18px; }\n' +
    '.export-img { max-width: 100%; display: block; } .card { padding: 10px 12px; }\n</style>\n</head>\n<body>\n' +
    '<header class="export-head"><h1 id="tfb-title"></h1><div id="tfb-sub" class="small"></div></header>\n' +
    '<main id="tfb-grid" class="export-grid"></main>\n' +
    '<script type="application/json" id="tfb-data">' + scriptJson(spec) + '</script>\n' +
    '<script>' + scriptText(chartjs) + '</script>\n' +
    '<script>(function () {\n' + scriptText(classic(fmt)) + '\n(' + scriptText(viewer.toString()) + ')();\n})();</script>\n' +
    '</body>\n</html>\n';
}

// Builds the file and hands it to the browser as a download.
export async function exportView(opts) {
  const html = await buildExport(opts);
  const blob = new Blob([html], { type: 'text/html' });
  const a = h('a', { href: URL.createObjectURL(blob), download: `tfboard-${opts.tab}-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, '')}.html` });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  return html.length;
}
