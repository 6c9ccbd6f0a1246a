/* SPDX-License-Identifier: Apache-2.0 */
/* manager/console/console.js - the console page of `iofleet serve`
 * (docs/console.md): starts from the state the server put in the page
 * (#state), then follows GET /api/v1/events. Every name is set with
 * textContent, never as HTML. Charts need Chart.js (/chart.js, Debian's
 * libjs-chart.js); without it the tables still work. */
'use strict';

const $ = (id) => document.getElementById(id);
const FIGS = {
  total: ['iops', 'mibps', 'p99_ms'],
  read: ['read_iops', 'read_mibps', 'read_p99_ms'],
  write: ['write_iops', 'write_mibps', 'write_p99_ms'],
};
const CHARTS = ['chart-iops', 'chart-mibps', 'chart-p99'];
const COLORS = ['#222', '#47c', '#c63', '#3a7', '#a4c', '#c9a227', '#2aa', '#d45', '#777'];

let state = JSON.parse($('state').textContent);
let seq = state.seq;
let charts = [];

function fmt(v, d) {
  return v === null || v === undefined ? '-' : Number(v).toFixed(d);
}

function size(b) {
  if (!b) return '-';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return b.toFixed(i ? 1 : 0) + ' ' + u[i];
}

function cell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

/* --- fleet --- */

function disks(inv) {
  const out = [];
  if (inv.workdir && inv.workdir.path)
    out.push('workdir ' + inv.workdir.path + ' (' + (inv.workdir.fstype || '?') +
             (inv.workdir.free !== undefined ? ', ' + size(inv.workdir.free) + ' free' : '') +
             (inv.workdir.ram_backed === true ? ', RAM' : '') + ')');
  for (const t of inv.targets || [])
    out.push(t.path + ' ' + size(t.size) + (t.model ? ' ' + t.model : '') +
             (t.ram_backed === true ? ' (RAM)' : ''));
  return out.join('; ') || '-';
}

function showAgents(list) {
  const body = $('agents-body');
  body.replaceChildren();
  for (const a of list.agents || []) {
    const inv = (a.hello && a.hello.inventory) || {};
    const tr = document.createElement('tr');
    cell(tr, a.name, 'name');
    cell(tr, a.status, a.status === 'connected' ? 'ok' : 'bad');
    cell(tr, a.certificate || 'none (plain TCP)', 'wrap cert');
    cell(tr, a.status === 'connected' ? 'now, since ' + (a.connected_at || '-') : (a.disconnected_at || '-'),
         'seen');
    cell(tr, inv.cpus !== undefined ? String(inv.cpus) : '-');
    cell(tr, size(inv.memory_bytes), 'wide');
    cell(tr, disks(inv), 'wrap');
    cell(tr, (a.hello && a.hello.software) || '-', 'wide');
    cell(tr, a.status === 'connected' ? a.endpoint : (a.reason || ''), 'wrap wide');
    body.appendChild(tr);
  }
  $('agents-count').textContent =
      (list.agents || []).filter((a) => a.status === 'connected').length + ' connected';
  state.agents = list;
  document.dispatchEvent(new Event('iof-agents')); /* the editor's target pickers follow */
}

/* --- the run --- */

function figRow(body, name, f, cls) {
  const tr = document.createElement('tr');
  tr.className = cls;
  cell(tr, name, 'name');
  cell(tr, fmt(f.iops, 0));
  cell(tr, fmt(f.read_iops, 0), 'wide');
  cell(tr, fmt(f.write_iops, 0), 'wide');
  cell(tr, fmt(f.mibps, 2));
  cell(tr, fmt(f.read_avg_ms, 3), 'wide');
  cell(tr, fmt(f.write_avg_ms, 3), 'wide');
  cell(tr, fmt(f.read_p99_ms, 3));
  cell(tr, fmt(f.write_p99_ms, 3));
  body.appendChild(tr);
  return tr;
}

function showHead(r) {
  $('run-id').textContent = r ? '#' + r.id : '';
  $('run-plan').textContent = r ? r.plan : 'no run yet';
  $('run-state').textContent = !r ? '' : r.state === 'running' ?
      (r.stopping ? 'stopping' : 'running') : r.status;
  $('run-state').className = r && r.state === 'done' && r.status !== 'ok' ? 'bad' : '';
  $('run-test').textContent = r && r.test ?
      'test ' + r.test.index + '/' + r.tests + ': ' + r.test.spec +
      (r.test.cycle ? ' [' + r.test.cycle + ']' : '') : '';
  $('stop-button').disabled = !(r && r.state === 'running');
}

function showInterval(iv) {
  const body = $('interval-body');
  body.replaceChildren();
  if (!iv) return;
  $('interval-at').textContent = 'test ' + iv.test + ', interval ' + (iv.k + 1) + ', ' +
      fmt(iv.t, 0) + ' s into the run';
  figRow(body, 'ALL', iv.all, 'all');
  for (const n of iv.nodes) figRow(body, n.name, n, 'node');
}

function addTest(t) {
  const body = $('summary-body');
  const tr = figRow(body, t.index + '. ' + t.spec + (t.cycle ? ' [' + t.cycle + ']' : ''),
                    t.all, 'all' + (t.status === 'ok' ? '' : ' bad'));
  cell(tr, t.status, 'l');
  for (const n of t.nodes) cell(figRow(body, n.name, n, 'node'), n.status, 'l');
}

/* --- Iometer's bars: per figure one bar per node and ALL, scaled to the largest --- */

const BARS = [['iops', 'Total I/Os per second', 0], ['mibps', 'MiB/s', 2],
              ['avg_ms', 'mean latency (ms)', 3], ['p99_ms', 'p99 latency (ms)', 3]];
let barsPick = null; /* the user's pick in #bars-test; null: the newest */

/* The rows the bars show: [name, figures] for ALL and each node, or null. */
function barsRows(r) {
  const pick = $('bars-test').value;
  const t = pick !== 'live' && r && (r.finished || []).find((x) => String(x.index) === pick);
  const iv = r && r.intervals && r.intervals.length ? r.intervals[r.intervals.length - 1] : null;
  const src = t || (pick === 'live' ? iv : null);
  return src ? [['ALL', src.all]].concat(src.nodes.map((n) => [n.name, n])) : null;
}

function showBars(r) {
  const sel = $('bars-test');
  const tests = (r && r.finished) || [];
  const want = barsPick !== null ? barsPick : r && r.state !== 'running' && tests.length ?
      String(tests[tests.length - 1].index) : 'live';
  const opts = [['live', 'last interval']].concat(tests.map((t) => [String(t.index),
      'test ' + t.index + ': ' + t.spec + (t.cycle ? ' [' + t.cycle + ']' : '')]));
  sel.replaceChildren(...opts.map(([v, text]) => {
    const o = document.createElement('option');
    o.value = v;
    o.textContent = text;
    return o;
  }));
  sel.value = opts.some((o) => o[0] === want) ? want : 'live';
  const box = $('bars');
  const rows = barsRows(r);
  box.replaceChildren();
  if (!rows) return;
  for (const [key, title, d] of BARS) {
    const set = document.createElement('div');
    set.className = 'barset';
    const h = document.createElement('h4');
    h.textContent = title;
    set.appendChild(h);
    const max = Math.max(0, ...rows.map(([, f]) => Number(f[key]) || 0));
    for (const [name, f] of rows) {
      const row = document.createElement('div');
      row.className = 'bar-row' + (name === 'ALL' ? ' all' : '');
      const label = document.createElement('span');
      label.className = 'bar-name';
      label.textContent = name;
      const bar = document.createElement('span');
      bar.className = 'bar';
      const fill = document.createElement('span');
      fill.className = 'bar-fill';
      /* Its width a class w0..w100 (console.css), as the first HTML has it. */
      fill.className = 'bar-fill w' + Math.round(max > 0 ? (Number(f[key]) || 0) / max * 100 : 0);
      bar.appendChild(fill);
      const v = document.createElement('span');
      v.className = 'bar-value';
      v.textContent = fmt(f[key], d);
      row.append(label, bar, v);
      set.appendChild(row);
    }
    box.appendChild(set);
  }
}

/* --- charts --- */

function chartData(r, fig) {
  const names = ['ALL'].concat(r ? r.nodes : []);
  const sets = names.map((name, i) => ({
    label: name, data: [], borderColor: COLORS[i % COLORS.length],
    backgroundColor: COLORS[i % COLORS.length], borderWidth: i ? 1 : 2, pointRadius: 0,
  }));
  for (const iv of (r && r.intervals) || []) pushPoint(sets, iv, fig);
  return sets;
}

function pushPoint(sets, iv, fig) {
  const add = (name, f) => {
    let d = sets.find((s) => s.label === name);
    if (!d) {
      const i = sets.length;
      d = {label: name, data: [], borderColor: COLORS[i % COLORS.length],
           backgroundColor: COLORS[i % COLORS.length], borderWidth: 1, pointRadius: 0};
      sets.push(d);
    }
    d.data.push({x: iv.t, y: f[fig]});
  };
  add('ALL', iv.all);
  for (const n of iv.nodes) add(n.name, n);
}

function makeCharts() {
  if (typeof Chart === 'undefined') {
    $('no-charts').hidden = false;
    return;
  }
  const figs = FIGS[$('chart-dir').value];
  const titles = ['IOPS', 'MiB/s', 'p99 latency (ms)'];
  charts.forEach((c) => c.destroy());
  charts = CHARTS.map((id, i) => new Chart($(id), {
    type: 'line',
    data: {datasets: chartData(state.run, figs[i])},
    options: {
      animation: false, parsing: false, normalized: true, maintainAspectRatio: false,
      spanGaps: true,
      plugins: {title: {display: true, text: titles[i]}, legend: {labels: {boxWidth: 10}}},
      scales: {x: {type: 'linear', title: {display: true, text: 's'}}, y: {beginAtZero: true}},
    },
  }));
}

function chartInterval(iv) {
  const figs = FIGS[$('chart-dir').value];
  charts.forEach((c, i) => { pushPoint(c.data.datasets, iv, figs[i]); c.update('none'); });
}

/* --- the whole state, and the events --- */

function showRun(r) {
  showHead(r);
  $('summary-body').replaceChildren();
  for (const t of (r && r.finished) || []) addTest(t);
  showInterval(r && r.intervals.length ? r.intervals[r.intervals.length - 1] : null);
  showBars(r);
  makeCharts();
}

async function reload() {
  const [run, agents] = await Promise.all([
    fetch('/api/v1/runs/last').then((x) => x.ok ? x.json() : null),
    fetch('/api/v1/agents').then((x) => x.json()),
  ]);
  state.run = run;
  showAgents(agents);
  showRun(run);
}

function listen() {
  const es = new EventSource('/api/v1/events?after=' + seq);
  const on = (type, fn) => es.addEventListener(type, (e) => {
    seq = Number(e.lastEventId) || seq;
    fn(JSON.parse(e.data));
  });
  es.onopen = () => { $('conn').textContent = 'live'; };
  es.onerror = () => { $('conn').textContent = 'reconnecting'; };
  on('agents', showAgents);
  on('run', (r) => {
    state.run = Object.assign(r, {intervals: [], finished: [], test: null});
    barsPick = null;
    showRun(state.run);
    loadHistory();
  });
  on('interval', (iv) => {
    if (!state.run || iv.id !== state.run.id) return;
    state.run.intervals.push(iv);
    state.run.test = {index: iv.test, spec: iv.spec || '', cycle: iv.cycle || ''};
    showHead(state.run);
    showInterval(iv);
    if ($('bars-test').value === 'live') showBars(state.run);
    chartInterval(iv);
  });
  on('test', (t) => {
    if (!state.run || t.id !== state.run.id) return;
    state.run.finished.push(t);
    addTest(t);
    showBars(state.run);
  });
  on('end', (e) => {
    if (!state.run || e.id !== state.run.id) return;
    Object.assign(state.run, {state: 'done', status: e.status, exit_code: e.exit_code});
    showHead(state.run);
    showBars(state.run);
    loadHistory();
  });
  es.addEventListener('resync', () => { reload(); });
}

/* --- the history (GET /api/v1/runs) and the comparison of two runs --- */

const PAGE = 20;
/* GET /api/v1/runs lists oldest first: a page is [offset, offset + limit), shown newest first. */
let hist = {q: '', tag: '', offset: 0, limit: PAGE, total: 0, last: true};

function historyMsg(text, bad) {
  $('history-message').textContent = text;
  $('history-message').className = bad ? 'bad' : 'ok';
}

function errText(r) {
  return (r.json && r.json.error && r.json.error.message) || 'HTTP ' + r.status;
}

// A run's downloads, as console_page.c page_downloads lists them: the report
// and the result files `iofleet runs export` writes.
const DOWNLOADS = [
  ['report.html', '.html', 'report'],
  ['results.csv', '.csv', 'csv'],
  ['iometer.csv', '-iometer.csv', 'iometer'],
  ['results.json', '.json', 'json'],
];

function historyRow(r) {
  const tr = document.createElement('tr');
  tr.dataset.id = String(r.id);
  const pick = document.createElement('input');
  pick.type = 'checkbox';
  pick.className = 'pick';
  pick.value = String(r.id);
  pick.setAttribute('aria-label', 'compare run ' + r.id);
  cell(tr, '').appendChild(pick);
  cell(tr, String(r.id));
  cell(tr, r.plan || '', 'name');
  cell(tr, r.start_time || '', 'l');
  cell(tr, r.status || '', 'l' + (r.status === 'failed' || r.status === 'interrupted' ? ' bad' : ''));
  cell(tr, r.tag || '', 'name');
  cell(tr, (typeof r.tests === 'number' ? String(r.tests) : '') +
       (typeof r.tests_planned === 'number' ? '/' + r.tests_planned : ''));
  const act = cell(tr, '', 'l');
  for (const [cls, text] of [['tag', 'tag'], ['delete', 'delete']]) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = cls;
    b.textContent = text;
    act.appendChild(b);
  }
  for (const [path, suffix, label] of DOWNLOADS) {
    const a = document.createElement('a');
    a.href = '/api/v1/runs/' + r.id + '/' + path;
    a.download = 'iofleet-run-' + r.id + suffix;
    a.textContent = label;
    act.appendChild(a);
  }
  return tr;
}

function showHistory(list) {
  const body = $('history-body');
  const keep = new Set(picked());
  body.replaceChildren();
  if (!list) return;
  for (const r of list.runs.slice().reverse()) {
    const tr = historyRow(r);
    if (keep.has(String(r.id))) tr.querySelector('input.pick').checked = true;
    body.appendChild(tr);
  }
  Object.assign(hist, {offset: list.offset, total: list.total});
  const n = list.runs.length;
  $('history-total').textContent = n ? 'runs ' + (list.offset + 1) + '-' + (list.offset + n) +
      ' of ' + list.total : hist.q || hist.tag ? 'no run matches' : 'no run recorded';
  $('history-prev').disabled = list.offset + n >= list.total;
  $('history-next').disabled = list.offset === 0;
  picked();
}

function loadHistory() {
  return loadPage().catch((e) => historyMsg('the history could not be read: ' + e, true));
}

async function getRuns(offset, limit) {
  const p = new URLSearchParams({limit: String(limit), offset: String(offset)});
  if (hist.q) p.set('q', hist.q);
  if (hist.tag) p.set('tag', hist.tag);
  const r = await fetch('/api/v1/runs?' + p);
  let j = null;
  try { j = await r.json(); } catch (e) { /* not JSON */ }
  if (!r.ok) throw new Error(errText({status: r.status, json: j}));
  return j;
}

/* The page shown (hist.last: the newest runs, as they come). */
async function loadPage() {
  let j = await getRuns(hist.last ? 0 : hist.offset, hist.last ? PAGE : hist.limit);
  if (hist.last && j.total > PAGE) j = await getRuns(j.total - PAGE, PAGE);
  else if (!j.runs.length && j.total) { hist.last = true; return loadPage(); }
  showHistory(j);
}

function picked() {
  const ids = [...document.querySelectorAll('#history-body input.pick:checked')].map((e) => e.value);
  $('compare-button').disabled = ids.length !== 2;
  return ids;
}

async function historyAction(ev) {
  const tr = ev.target.closest('tr');
  if (!tr || ev.target.tagName !== 'BUTTON') return;
  const id = tr.dataset.id;
  if (ev.target.classList.contains('tag')) {
    const tag = window.prompt('Tag of run ' + id + ' (empty: none)', tr.cells[5].textContent);
    if (tag === null) return;
    const r = await post('/api/v1/runs/' + id + '/tag', JSON.stringify({tag: tag}));
    if (r.status === 200) historyMsg(tag ? 'run ' + id + ' tagged ' + tag : 'run ' + id + ' untagged');
    else historyMsg(errText(r), true);
  } else if (ev.target.classList.contains('delete')) {
    if (!window.confirm('Delete run ' + id + ' from the history?')) return;
    const x = await fetch('/api/v1/runs/' + id, {method: 'DELETE'});
    let j = null;
    try { j = await x.json(); } catch (e) { /* not JSON */ }
    if (x.ok) historyMsg('run ' + id + ' deleted');
    else historyMsg(errText({status: x.status, json: j}), true);
  }
  loadHistory();
}

function jtext(v) {
  return v === null || v === undefined ? '-' : typeof v === 'string' ? v : JSON.stringify(v);
}

const SPLIT = [['read_iops', 0], ['write_iops', 0], ['read_mibps', 2], ['write_mibps', 2],
               ['avg_read_lat_ms', 3], ['avg_write_lat_ms', 3]];

function showCompare(c) {
  const [a, b] = c.runs;
  $('compare-runs').textContent = 'A #' + a.id + ' ' + a.plan_name + ', B #' + b.id + ' ' +
      b.plan_name;
  const changes = $('compare-changes-body');
  changes.replaceChildren();
  for (const ch of b.plan_changes || []) {
    const tr = document.createElement('tr');
    cell(tr, ch.path, 'wrap');
    cell(tr, jtext(ch.a), 'wrap');
    cell(tr, jtext(ch.b), 'wrap');
    changes.appendChild(tr);
  }
  $('compare-none').hidden = !!(b.plan_changes && b.plan_changes.length);
  const body = $('compare-body');
  body.replaceChildren();
  for (const t of c.tests) {
    const [fa, fb] = t.runs;
    const head = document.createElement('tr');
    head.className = 'all';
    cell(head, t.name, 'name').colSpan = 4;
    body.appendChild(head);
    const row = (key, d, ratio) => {
      const tr = document.createElement('tr');
      tr.className = 'node';
      cell(tr, key, 'l');
      cell(tr, fmt(fa && fa[key], d));
      cell(tr, fmt(fb && fb[key], d));
      const r = cell(tr, ratio ? fmt(ratio.ratio, 2) + (ratio.change === 'better' ? ' \u25b2 better' :
          ratio.change === 'worse' ? ' \u25bc worse' : ' =') : '-');
      if (ratio) r.className = ratio.change === 'better' ? 'ok' : ratio.change === 'worse' ? 'bad' : '';
      body.appendChild(tr);
    };
    for (const m of c.metrics) row(m, m === 'iops' ? 0 : m === 'mibps' ? 2 : 3, t.ratios[1] && t.ratios[1][m]);
    for (const [key, d] of SPLIT) row(key, d, null);
  }
  $('compare').hidden = false;
}

async function compare() {
  const [x, y] = picked().map(Number).sort((p, q) => p - q);
  const r = await fetch('/api/v1/runs/compare?a=' + x + '&b=' + y);
  let j = null;
  try { j = await r.json(); } catch (e) { /* not JSON */ }
  if (!r.ok) { historyMsg(errText({status: r.status, json: j}), true); return; }
  historyMsg('');
  showCompare(j);
}

$('history-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  Object.assign(hist, {q: $('history-q').value.trim(), tag: $('history-tag').value.trim(),
                       last: true});
  loadHistory();
});
$('history-next').addEventListener('click', () => { /* older */
  hist.limit = Math.min(PAGE, hist.offset);
  hist.offset -= hist.limit;
  hist.last = false;
  loadHistory();
});
$('history-prev').addEventListener('click', () => { /* newer */
  hist.offset += hist.limit;
  hist.limit = PAGE;
  hist.last = hist.offset + PAGE >= hist.total;
  loadHistory();
});
/* Prune (POST /api/v1/runs/prune): keep the newest N and/or remove runs older than D days;
 * a dry run first, to confirm with how many runs would go. */
async function prune(ev) {
  ev.preventDefault();
  const keep = $('prune-keep').value.trim();
  const days = $('prune-days').value.trim();
  const rule = {};
  const words = [];
  if (keep !== '') {
    if (!/^\d+$/.test(keep)) { historyMsg('prune: keep the newest: a whole number, 0 or more, got ' + keep, true); return; }
    rule.keep = Number(keep);
    words.push('all but the newest ' + keep);
  }
  if (days !== '') {
    if (!/^[1-9]\d*$/.test(days)) { historyMsg('prune: older than: a whole number of days, 1 or more, got ' + days, true); return; }
    rule.older_than = days + 'd';
    words.push('started more than ' + days + ' day' + (days === '1' ? '' : 's') + ' ago');
  }
  if (!words.length) {
    historyMsg('prune: give the number of newest runs to keep, or an age in days, or both', true);
    return;
  }
  const what = 'runs ' + words.join(' and ');
  const dry = await post('/api/v1/runs/prune', JSON.stringify(Object.assign({dry_run: true}, rule)));
  if (dry.status !== 200) { historyMsg(errText(dry), true); return; }
  const ids = dry.json.runs || [];
  if (!ids.length) { historyMsg('prune: no ' + what + ': nothing to remove'); return; }
  const n = ids.length + ' run' + (ids.length === 1 ? '' : 's');
  if (!window.confirm('Remove ' + n + ' (' + what + ': ' + ids.map((x) => '#' + x).join(', ') +
                      ') from the history?')) return;
  /* Only the runs listed here go, even if the rule would pick others by now. */
  const r = await post('/api/v1/runs/prune', JSON.stringify(Object.assign({runs: ids}, rule)));
  if (r.status !== 200) historyMsg(errText(r), true);
  else historyMsg('pruned ' + r.json.removed + ' run' + (r.json.removed === 1 ? '' : 's') + ': ' +
                  (r.json.runs || []).map((x) => '#' + x).join(', '));
  loadHistory();
}

$('prune-form').addEventListener('submit', prune);
$('history-body').addEventListener('change', picked);
$('history-body').addEventListener('click', historyAction);
$('compare-button').addEventListener('click', compare);

/* --- the start form and the stop button --- */

async function post(url, body) {
  const r = await fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'},
                              body: body});
  let j = null;
  try { j = await r.json(); } catch (e) { /* not JSON */ }
  return {status: r.status, json: j};
}

function say(text, bad) {
  $('plan-message').textContent = text;
  $('plan-message').className = bad ? 'bad' : 'ok';
}

async function check() {
  const r = await post('/api/v1/plans/check', $('plan-text').value);
  if (r.status === 200) say('valid: ' + r.json.tests + ' test' + (r.json.tests === 1 ? '' : 's'));
  else say((r.json && r.json.error && r.json.error.message) || 'HTTP ' + r.status, true);
  return r.status === 200;
}

async function start(ev) {
  ev.preventDefault();
  const r = await post('/api/v1/runs', $('plan-text').value);
  if (r.status === 202) say('run ' + r.json.id + ' started');
  else say((r.json && r.json.error && r.json.error.message) || 'HTTP ' + r.status, true);
}

async function stop() {
  const r = await post('/api/v1/runs/current/stop', '{}');
  if (r.status !== 202) {
    say((r.json && r.json.error && r.json.error.message) || 'HTTP ' + r.status, true);
  } else if (state.run && state.run.id === r.json.id && state.run.state === 'running') {
    state.run.stopping = true;
    showHead(state.run);
  }
}

$('plan-file').addEventListener('change', async () => {
  const f = $('plan-file').files[0];
  if (f) {
    $('plan-text').value = await f.text();
    $('plan-text').dispatchEvent(new Event('input')); /* the editor re-reads it */
    check();
  }
});
$('check-button').addEventListener('click', check);
$('start-form').addEventListener('submit', start);
$('stop-button').addEventListener('click', stop);
$('chart-dir').addEventListener('change', makeCharts);
$('bars-test').addEventListener('change', () => {
  barsPick = $('bars-test').value;
  showBars(state.run);
});
/* Rendered only to a signed-in session (serve --http-tokens). */
if ($('signout-button')) {
  $('signout-button').addEventListener('click', async () => {
    const r = await post('/api/v1/session/end', '{}');
    if (r.status === 200) window.location.reload();
    else say(errText(r), true);
  });
}
showAgents(state.agents);
showRun(state.run);
if (state.history) showHistory(state.history);
listen();
