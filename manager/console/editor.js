/* SPDX-License-Identifier: Apache-2.0 */
/* manager/console/editor.js - the start form's plan editor (docs/console.md, "The plan
 * editor"): the plan of #plan-text as a form in Iometer's words (access specs and their
 * lines, run settings, worker groups). The JSON is the one copy of the plan: the form
 * edits it in place and rewrites the textarea; the textarea re-read fills the form when the
 * form can show every field, else the form names what it cannot show and stays read-only.
 * Checked as you type through POST /api/v1/plans/check. Loaded after console.js ($,
 * post, say, state); names only ever set with textContent. */
'use strict';

const ED = {
  plan: null, /* the plan the form shows (the parsed textarea) */
  timer: 0, /* the debounced check */
  seq: 0, /* the last check sent: older answers are dropped */
  fields: new Map(), /* data-path -> input, to mark the field a message names */
  stale: false, /* the form is to be drawn again when the focus leaves it */
};
const LINE_COLS = [
  ['size', 'transfer size', '4k'], ['share', '% of access', '100'], ['read', '% read', '100'],
  ['random', '% random', '100'], ['align', 'align', 'size'], ['burst', 'burst', '1'],
  ['delay', 'delay', '0'],
];
const KEYS = {
  plan: ['name', 'run', 'specs', 'workers', 'cycle'],
  cycle: ['size', 'queue_depth'],
  steps: ['from', 'to', 'step'],
  run: ['ramp', 'duration', 'interval'],
  spec: ['name', 'lines'],
  line: LINE_COLS.map((c) => c[0]),
  group: ['name', 'nodes', 'count', 'queue_depth', 'engine', 'specs', 'targets', 'rate'],
  target: ['path', 'size'],
};
const ENGINES = ['', 'libaio', 'io_uring', 'sync', 'null', 'windows'];
const RATES = [['iops', 'IOPS'], ['mibps', 'MiB/s']]; /* a group's rate, per worker */
const CHECK_MS = 400;

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isScalar = (v) => typeof v === 'string' || typeof v === 'number';

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function button(text, title, fn) {
  const b = el('button', text);
  b.type = 'button';
  if (title) b.title = title;
  b.setAttribute('aria-label', title || text);
  b.addEventListener('click', fn);
  return b;
}

/* --- what the form can show --- */

/* The paths of obj's members outside keys, or whose value check() refuses. */
function extra(obj, keys, at, out, check) {
  for (const k of Object.keys(obj)) {
    const p = at ? at + '.' + k : k;
    if (!keys.includes(k) || (check && !check(k, obj[k]))) out.push(p);
  }
}

/* Every field of plan the form cannot show, as JSON paths (empty: it shows it all). */
function unshown(plan) {
  const out = [];
  if (!isObj(plan)) return ['the plan (not a JSON object)'];
  extra(plan, KEYS.plan, '', out, (k, v) => (k === 'name' ? typeof v === 'string' :
    k === 'run' || k === 'cycle' ? isObj(v) : Array.isArray(v)));
  if (isObj(plan.cycle)) {
    extra(plan.cycle, KEYS.cycle, 'cycle', out, (k, v) => (k === 'size' ? Array.isArray(v) &&
      v.every(isScalar) : isObj(v)));
    if (isObj(plan.cycle.queue_depth))
      extra(plan.cycle.queue_depth, KEYS.steps, 'cycle.queue_depth', out, (k, v) => isScalar(v));
  }
  if (isObj(plan.run)) extra(plan.run, KEYS.run, 'run', out, (k, v) => isScalar(v));
  (Array.isArray(plan.specs) ? plan.specs : []).forEach((s, i) => {
    const at = 'specs[' + i + ']';
    if (!isObj(s)) { out.push(at); return; }
    extra(s, KEYS.spec, at, out, (k, v) => (k === 'name' ? typeof v === 'string' :
      Array.isArray(v) && v.every(isObj)));
    if (Array.isArray(s.lines))
      s.lines.forEach((l, j) => isObj(l) &&
        extra(l, KEYS.line, at + '.lines[' + j + ']', out, (k, v) => isScalar(v)));
  });
  (Array.isArray(plan.workers) ? plan.workers : []).forEach((g, i) => {
    const at = 'workers[' + i + ']';
    if (!isObj(g)) { out.push(at); return; }
    extra(g, KEYS.group, at, out, (k, v) => (
      k === 'specs' || k === 'nodes' ? Array.isArray(v) && v.every((x) => typeof x === 'string') :
      k === 'targets' ? Array.isArray(v) && v.every(isObj) :
      k === 'rate' ? isObj(v) && Object.keys(v).length === 1 && RATES.some((r) => isScalar(v[r[0]])) :
      isScalar(v)));
    if (Array.isArray(g.targets))
      g.targets.forEach((t, j) => isObj(t) && extra(t, KEYS.target, at + '.targets[' + j + ']', out,
        (k, v) => (k === 'path' ? typeof v === 'string' || (isObj(v) && Object.keys(v).length > 0 &&
          Object.values(v).every(isAbs)) : isScalar(v))));
  });
  return out;
}

/* --- the JSON and the check --- */

/* A field's text as the plan holds it: a number when it reads as one, else the text
 * (the loader then names what is wrong with it); undefined when empty (the default). */
function value(text, numeric) {
  const t = text.trim();
  if (t === '') return undefined;
  return numeric && /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : t;
}

/* Sets obj[key] (deletes it when v is undefined); a key added takes its place in order
 * (the schema's order of keys), so a field emptied and typed again does not move. */
function setKey(obj, key, v, order) {
  if (v === undefined) { delete obj[key]; return; }
  const added = !(key in obj);
  obj[key] = v;
  if (!added || !order) return;
  const rank = (k) => (order.includes(k) ? order.indexOf(k) : order.length);
  const all = Object.entries(obj).sort((a, b) => rank(a[0]) - rank(b[0]));
  for (const [k] of all) delete obj[k];
  for (const [k, x] of all) obj[k] = x;
}

/* The form changed ED.plan: the textarea follows, the check is due. */
function edited(rerender) {
  $('plan-text').value = JSON.stringify(ED.plan, null, 2);
  if (rerender) render();
  else showDestroy();
  checkSoon();
}

function checkSoon() {
  clearTimeout(ED.timer);
  ED.timer = setTimeout(checkNow, CHECK_MS);
}

/* No check due, and the answer of one under way dropped (Check, Start: theirs is shown). */
function cancelCheck() {
  clearTimeout(ED.timer);
  ED.seq++;
}

async function checkNow() {
  const seq = ++ED.seq;
  const r = await post('/api/v1/plans/check', $('plan-text').value);
  if (seq !== ED.seq) return; /* a newer check is under way */
  for (const e of ED.fields.values()) e.classList.remove('bad');
  if (r.status === 200) {
    say('valid: ' + r.json.tests + ' test' + (r.json.tests === 1 ? '' : 's'));
    return;
  }
  const msg = (r.json && r.json.error && r.json.error.message) || 'HTTP ' + r.status;
  say(msg, true);
  /* The field the loader's message names ("plan: specs[0].lines[1].read: ..."). */
  let best = '';
  for (const p of ED.fields.keys())
    if (p.length > best.length && (msg.includes(' ' + p + ':') || msg.startsWith(p + ':')))
      best = p;
  if (best) ED.fields.get(best).classList.add('bad');
}

/* The textarea changed: the form re-reads it when it can show it all. */
function reread() {
  const text = $('plan-text').value;
  let plan;
  if (text.trim()) checkSoon();
  else cancelCheck();
  if (!text.trim()) plan = {};
  else {
    try { plan = JSON.parse(text); } catch (e) {
      readOnly('the JSON does not parse (' + e.message + '): edit as JSON');
      return;
    }
  }
  const miss = unshown(plan);
  if (miss.length) {
    ED.plan = isObj(plan) ? plan : null;
    render();
    readOnly('edit as JSON: ' + miss.join(', ') + (miss.length === 1 ? ' is' : ' are') +
             ' not shown in the form');
    return;
  }
  ED.plan = plan;
  render();
}

function readOnly(why) {
  $('editor-fields').disabled = true;
  $('editor-note').textContent = why;
  $('editor-note').className = 'bad';
}

/* --- the form --- */

/* An input bound to obj[key]; path is its JSON path (data-path). */
function input(obj, key, path, opts = {}) {
  const i = el('input');
  i.type = 'text';
  i.dataset.path = path;
  i.size = opts.size || 6;
  if (opts.numeric) i.inputMode = 'decimal';
  if (opts.placeholder) i.placeholder = opts.placeholder;
  if (opts.label) i.setAttribute('aria-label', opts.label);
  i.value = obj[key] === undefined ? '' : String(obj[key]);
  i.addEventListener('input', () => {
    if (opts.before) opts.before();
    setKey(obj, key, value(i.value, opts.numeric), opts.order);
    if (opts.after) opts.after();
    edited(false);
  });
  ED.fields.set(path, i);
  return i;
}

function labelled(text, control) {
  const l = el('label', text + ' ');
  l.appendChild(control);
  return l;
}

/* Moves list[i] by d (-1 up, +1 down) when it can. */
function move(list, i, d) {
  const j = i + d;
  if (j < 0 || j >= list.length) return;
  [list[i], list[j]] = [list[j], list[i]];
  edited(true);
}

function rowTools(list, i, what) {
  const span = el('span', undefined, 'tools');
  span.append(button('\u2191', 'move ' + what + ' up', () => move(list, i, -1)),
              button('\u2193', 'move ' + what + ' down', () => move(list, i, 1)),
              button('\u2715', 'remove ' + what, () => { list.splice(i, 1); edited(true); }));
  return span;
}

function renderRun(box) {
  const p = ED.plan;
  const run = isObj(p.run) ? p.run : {};
  const bind = () => { if (!isObj(p.run)) setKey(p, 'run', run, KEYS.plan); };
  box.append(labelled('plan name', input(p, 'name', 'name', {size: 16, order: KEYS.plan})));
  for (const [key, label, ph] of [['duration', 'duration', '30s'], ['ramp', 'ramp', '0s'],
                                  ['interval', 'interval', '1s']]) {
    box.append(' ', labelled(label, input(run, key, 'run.' + key,
                                          {placeholder: ph, numeric: true, before: bind, order: KEYS.run})));
  }
}

function renderSpec(box, s, i) {
  const at = 'specs[' + i + ']';
  const f = el('fieldset', undefined, 'spec');
  const legend = el('legend');
  let was;
  const name = input(s, 'name', at + '.name', {size: 14, order: KEYS.spec,
                                               before: () => { was = s.name; },
                                               after: () => { renameSpec(was, s.name); ED.stale = true; }});
  legend.append(labelled('spec ' + (i + 1), name),
                rowTools(ED.plan.specs, i, 'spec ' + (i + 1)));
  f.appendChild(legend);
  if (!Array.isArray(s.lines)) s.lines = [];
  const table = el('table', undefined, 'lines');
  const head = el('tr');
  for (const [, label] of LINE_COLS) head.appendChild(el('th', label));
  head.appendChild(el('th'));
  table.appendChild(el('thead')).appendChild(head);
  const body = table.appendChild(el('tbody'));
  s.lines.forEach((l, j) => {
    const tr = el('tr');
    for (const [key, label, ph] of LINE_COLS) {
      const td = tr.appendChild(el('td'));
      td.appendChild(input(l, key, at + '.lines[' + j + '].' + key,
                           {size: 5, numeric: true, placeholder: ph, label: label,
                            order: KEYS.line}));
    }
    tr.appendChild(el('td')).appendChild(rowTools(s.lines, j, 'line ' + (j + 1)));
    body.appendChild(tr);
  });
  const scroll = el('div', undefined, 'scroll');
  scroll.appendChild(table);
  f.append(scroll, button('Add line', 'add a line to spec ' + (i + 1), () => {
    s.lines.push({size: '4k', read: 100, random: 100});
    edited(true);
  }));
  box.appendChild(f);
}

/* A spec renamed: the groups that name it in their specs follow (an emptied name, while
 * being retyped, as ""). */
function renameSpec(from, to) {
  for (const g of Array.isArray(ED.plan.workers) ? ED.plan.workers : []) {
    if (isObj(g) && Array.isArray(g.specs))
      g.specs = g.specs.map((x) => (x === (from === undefined ? '' : from) ? (to === undefined ? '' : to) : x));
  }
}

function renderGroup(box, g, i) {
  const at = 'workers[' + i + ']';
  const f = el('fieldset', undefined, 'group');
  const legend = el('legend');
  legend.append(labelled('group ' + (i + 1), input(g, 'name', at + '.name',
                                                   {size: 12, placeholder: at, order: KEYS.group})),
                rowTools(ED.plan.workers, i, 'group ' + (i + 1)));
  f.appendChild(legend);
  const p = el('p');
  p.append(labelled('workers', input(g, 'count', at + '.count', {numeric: true, size: 3,
                                                                  placeholder: '1', order: KEYS.group})), ' ',
           labelled('queue depth', input(g, 'queue_depth', at + '.queue_depth',
                                         {numeric: true, size: 4, placeholder: '1',
                                          order: KEYS.group})), ' ');
  const eng = el('select');
  eng.dataset.path = at + '.engine';
  for (const e of ENGINES) {
    const o = el('option', e || "each agent's default");
    o.value = e;
    eng.appendChild(o);
  }
  if (g.engine !== undefined && !ENGINES.includes(g.engine)) {
    const o = el('option', String(g.engine));
    o.value = String(g.engine);
    eng.appendChild(o);
  }
  eng.value = g.engine === undefined ? '' : String(g.engine);
  eng.addEventListener('change', () => { setKey(g, 'engine', eng.value || undefined, KEYS.group); edited(false); });
  ED.fields.set(at + '.engine', eng);
  p.append(labelled('engine', eng), ' ', rateInput(g, at));
  f.appendChild(p);
  /* Specs used: none ticked runs the plan's specs in order. */
  const used = el('p', 'specs: ');
  used.dataset.path = at + '.specs';
  ED.fields.set(at + '.specs', used);
  const specs = Array.isArray(ED.plan.specs) ? ED.plan.specs : [];
  const names = specs.map((s) => (isObj(s) ? s.name : undefined));
  /* The plan's specs by position (a rename does not stale the box), then names it lacks. */
  const boxes = names.map((n, k) => [n, k]).filter(([n]) => typeof n === 'string')
    .concat((g.specs || []).filter((n) => !names.includes(n)).map((n) => [n, -1]));
  for (const [n, k] of boxes) {
    const c = el('input');
    c.type = 'checkbox';
    c.checked = Array.isArray(g.specs) && g.specs.includes(n);
    c.addEventListener('change', () => {
      const now = k >= 0 ? specs[k].name : n;
      const list = (g.specs || []).filter((x) => x !== now);
      if (c.checked) list.push(now);
      setKey(g, 'specs', list.length ? list : undefined, KEYS.group);
      edited(false);
    });
    used.append(labelled(n, c), ' ');
  }
  if (!boxes.length) used.append(el('span', 'the plan has no named spec', 'muted'));
  else if (!g.specs) used.append(el('span', '(none ticked: every spec in order)', 'muted'));
  f.appendChild(used);
  renderTargets(f, g, at);
  box.appendChild(f);
}

/* A group's rate per worker: none, IOPS or MiB/s, and the number. */
function rateInput(g, at) {
  const span = el('span', undefined, 'rate');
  const kind = el('select');
  kind.dataset.path = at + '.rate';
  kind.setAttribute('aria-label', 'rate per worker');
  for (const [v, text] of [['', 'no rate']].concat(RATES)) {
    const o = el('option', v ? text + ' per worker' : text);
    o.value = v;
    kind.appendChild(o);
  }
  const cur = isObj(g.rate) ? RATES.find((r) => r[0] in g.rate) : null;
  kind.value = cur ? cur[0] : '';
  const holder = {n: cur ? g.rate[cur[0]] : undefined};
  const n = input(holder, 'n', at + '.rate.' + (cur ? cur[0] : 'iops'),
                  {numeric: true, size: 6, label: 'rate', placeholder: 'rate',
                   after: () => { if (kind.value) setKey(g, 'rate', {[kind.value]: holder.n}, KEYS.group); }});
  n.hidden = !cur;
  kind.addEventListener('change', () => {
    n.hidden = !kind.value;
    setKey(g, 'rate', kind.value ? {[kind.value]: holder.n === undefined ? 100 : holder.n} : undefined,
           KEYS.group);
    edited(true);
  });
  ED.fields.set(at + '.rate', kind);
  span.append(labelled('rate', kind), ' ', n);
  return span;
}

/* The cycle (Iometer's test setup cycling, where simple): transfer sizes and queue depths. */
function renderCycle(box) {
  const p = ED.plan;
  const cy = isObj(p.cycle) ? p.cycle : {};
  const qd = isObj(cy.queue_depth) ? cy.queue_depth : {};
  const bind = () => { if (!isObj(p.cycle)) setKey(p, 'cycle', cy, KEYS.plan); };
  const tidy = () => {
    if (Object.keys(qd).length) setKey(cy, 'queue_depth', qd, KEYS.cycle);
    else delete cy.queue_depth;
    if (!Object.keys(cy).length) delete p.cycle;
  };
  const sizes = {text: (cy.size || []).join(', ')};
  box.append(labelled('transfer sizes', input(sizes, 'text', 'cycle.size', {size: 16,
    placeholder: '4k, 64k', before: bind, after: () => {
      const list = (sizes.text || '').split(',').map((x) => value(x, true)).filter((x) => x !== undefined);
      setKey(cy, 'size', list.length ? list : undefined, KEYS.cycle);
      tidy();
    }})), ' queue depth ');
  for (const [key, ph] of [['from', '1'], ['to', '32'], ['step', 'x2']])
    box.append(labelled(key, input(qd, key, 'cycle.queue_depth.' + key,
                                   {size: 3, numeric: true, placeholder: ph, order: KEYS.steps,
                                    before: bind, after: tidy})), ' ');
}

/* --- targets from the inventory --- */

/* A device or an existing file: an absolute path (Linux, or Windows' C:\ and \\.\). */
const isAbs = (path) => typeof path === 'string' && /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(path);

/* The agents of GET /api/v1/agents (console.js keeps state.agents), connected first. */
function agents() {
  const list = (state.agents && state.agents.agents) || [];
  return list.filter((a) => a.status === 'connected').concat(list.filter((a) => a.status !== 'connected'));
}

function inventory(name) {
  const a = agents().find((x) => x.name === name);
  return (a && a.hello && a.hello.inventory) || {};
}

const every = (g) => g.nodes === undefined || (g.nodes.length === 1 && g.nodes[0] === '*');

/* A target's path for a node: a plain path, or a per-node map's entry of the node (else its
 * "*" entry); undefined when the map has neither. */
const pathOf = (t, node) => (isObj(t.path) ? (t.path[node] !== undefined ? t.path[node] : t.path['*']) :
  t.path);

/* The nodes a group's picks are made for: its names, or with every agent the connected ones
 * (else the names of its targets' maps, else '*' alone). */
function pickedNodes(g) {
  if (!every(g)) return g.nodes.slice();
  const up = agents().filter((a) => a.status === 'connected').map((a) => a.name);
  if (up.length) return up;
  const keys = [];
  for (const t of g.targets)
    if (isObj(t.path)) for (const k of Object.keys(t.path)) if (k !== '*' && !keys.includes(k)) keys.push(k);
  return keys.length ? keys : ['*'];
}

/* What each node of the group runs: {devices: [paths], files: bool}. The devices are the
 * absolute targets, a per-node map's entry of the node; the test files (relative paths,
 * with a size) are the group's, the same on every node. */
function picks(g) {
  const files = g.targets.some((t) => typeof t.path === 'string' && !isAbs(t.path));
  return new Map(pickedNodes(g).map((n) => [n, {
    devices: g.targets.map((t) => pathOf(t, n)).filter(isAbs), files: files}]));
}

/* Writes the group back from each node's picks, as one group: the j-th device target of
 * the group is the j-th device each node picked, a plain path when every node picked the
 * same one, else a per-node map (a node with no j-th device has no entry: the plan's
 * check names it). A map's entries for other nodes and its "*", and the target's other
 * keys (a size), are kept. */
function applyPicks(g, map, everyAgent) {
  if (!map.size) { edited(true); return; }
  const olds = g.targets.filter((t) => isObj(t.path) || isAbs(t.path));
  let files = g.targets.filter((t) => typeof t.path === 'string' && !isAbs(t.path));
  if (!files.length) files = [{path: 'iofleet.dat', size: '1g'}];
  const nodes = [...map.keys()];
  const n = Math.max(...[...map.values()].map((p) => p.devices.length));
  const devices = [];
  for (let j = 0; j < n; j++) {
    const old = olds[j] && isObj(olds[j].path) ? olds[j].path : {};
    const m = {};
    for (const k of Object.keys(old)) if (!nodes.includes(k)) m[k] = old[k];
    for (const node of nodes) {
      const d = map.get(node).devices[j];
      if (d !== undefined && (node === '*' || d !== m['*'])) m[node] = d;
    }
    const keys = Object.keys(m);
    const same = keys.length && keys.every((k) => m[k] === m[keys[0]]) &&
      keys.every((k) => k === '*' || nodes.includes(k)) && nodes.every((x) => keys.includes(x) || '*' in m);
    devices.push(Object.assign({}, olds[j], {path: same ? m[keys[0]] : m}));
  }
  const withFiles = [...map.values()].some((p) => p.files);
  g.targets = devices.concat(withFiles ? files.map((t) => Object.assign({}, t)) : []);
  if (!everyAgent) setKey(g, 'nodes', nodes, KEYS.group);
  edited(true);
}

function checkbox(text, checked, fn, cls) {
  const c = el('input');
  c.type = 'checkbox';
  c.checked = checked;
  c.addEventListener('change', () => fn(c.checked));
  const l = labelled('', c);
  l.appendChild(el('span', text, cls));
  return l;
}

/* The group's nodes (every agent, or those ticked) and per node its targets: the disks of
 * its inventory (RAM-backed ones flagged), test files in its workdir; then the test files'
 * paths and sizes. */
function renderTargets(f, g, at) {
  if (!Array.isArray(g.targets)) g.targets = [];
  const nodes = el('p', 'nodes: ', 'nodes');
  nodes.dataset.path = at + '.nodes';
  ED.fields.set(at + '.nodes', nodes);
  const all = checkbox('every agent', every(g), (on) => {
    if (on) setKey(g, 'nodes', undefined);
    else g.nodes = agents().filter((a) => a.status === 'connected').map((a) => a.name).slice(0, 1);
    edited(true);
  });
  all.dataset.node = '*';
  nodes.append(all);
  const names = agents().map((a) => a.name);
  for (const n of every(g) ? [] : g.nodes) if (!names.includes(n)) names.push(n);
  for (const n of names) {
    const a = agents().find((x) => x.name === n);
    const up = a && a.status === 'connected';
    const c = checkbox(n + (up ? '' : ' (not connected)'), !every(g) && g.nodes.includes(n), (on) => {
      const list = every(g) ? [] : g.nodes.filter((x) => x !== n);
      if (on) list.push(n);
      const map = picks(g);
      g.nodes = list.length ? list : [];
      /* A node added takes what the others run. */
      const like = map.values().next().value || {devices: [], files: true};
      applyPicks(g, new Map(list.map((x) => [x, map.get(x) || like])), false);
    }, up ? '' : 'muted');
    c.dataset.node = n;
    nodes.append(' ', c);
  }
  f.appendChild(nodes);
  const map = picks(g);
  const table = el('div', undefined, 'picks');
  for (const [node, p] of map) {
    const row = el('p', (node === '*' ? 'every agent' : node) + ': ', 'pick');
    row.dataset.node = node;
    const inv = node === '*' ? {} : inventory(node);
    const disks = (inv.targets || []).map((t) => t.path).filter((x) => typeof x === 'string');
    for (const d of p.devices) if (!disks.includes(d)) disks.push(d);
    const change = (fn) => (on) => {
      fn(map.get(node), on);
      applyPicks(g, map, every(g));
    };
    for (const d of disks) {
      const t = (inv.targets || []).find((x) => x.path === d);
      const what = t ? ' (' + [size(t.size), t.model, t.ram_backed === true ? 'RAM-backed' : '']
        .filter((x) => x && x !== '-').join(', ') + ')' : node === '*' ? '' : ' (not in its inventory)';
      const c = checkbox(d + what, p.devices.includes(d), change((q, on) => {
        q.devices = on ? disks.filter((x) => x === d || q.devices.includes(x)) :
          q.devices.filter((x) => x !== d);
      }), t && t.ram_backed === true ? 'ram' : '');
      c.dataset.disk = d;
      row.append(c, ' ');
    }
    const wd = inv.workdir || {};
    const file = checkbox('test files' + (wd.path ? ' in ' + wd.path + ' (' +
      size(wd.free) + ' free' + (wd.ram_backed === true ? ', RAM-backed' : '') + ')' : ''),
    p.files, change((q, on) => { for (const x of map.values()) x.files = on; }));
    file.dataset.disk = 'files';
    row.append(file);
    table.appendChild(row);
  }
  f.appendChild(table);
  /* The test files, shared by the nodes that run them: a path in the workdir and a size. */
  const list = el('div', undefined, 'targets');
  g.targets.forEach((t, j) => {
    if (typeof t.path !== 'string' || isAbs(t.path)) return;
    const p = el('p');
    const tat = at + '.targets[' + j + ']';
    p.append(labelled('test file', input(t, 'path', tat + '.path',
                                         {size: 18, placeholder: 'test.dat', order: KEYS.target})),
             ' ', labelled('size', input(t, 'size', tat + '.size', {size: 5, numeric: true,
                                                                    placeholder: '1g', order: KEYS.target})),
             ' ', button('\u2715', 'remove test file ' + (t.path || ''), () => {
               g.targets.splice(j, 1);
               edited(true);
             }));
    list.appendChild(p);
  });
  f.appendChild(list);
  if (g.targets.some((t) => typeof t.path === 'string' && !isAbs(t.path)))
    f.appendChild(button('Add test file', 'add a test file', () => {
      g.targets.push({path: 'iofleet' + g.targets.length + '.dat', size: '1g'});
      edited(true);
    }));
}

/* --- writes to devices: a confirmation, as dynamo's --allow-destructive --- */

/* The devices the plan writes: absolute targets of groups whose specs have a line with
 * % read under 100 (as "node: path"). */
function destroys() {
  const p = ED.plan || {};
  const specs = Array.isArray(p.specs) ? p.specs : [];
  const writes = (s) => isObj(s) && Array.isArray(s.lines) &&
    s.lines.some((l) => isObj(l) && l.read !== undefined && !(Number(l.read) >= 100));
  const out = [];
  for (const g of Array.isArray(p.workers) ? p.workers : []) {
    if (!isObj(g) || !Array.isArray(g.targets)) continue;
    const used = Array.isArray(g.specs) ? specs.filter((s) => g.specs.includes(s.name)) : specs;
    if (!used.some(writes) && !(p.cycle && Array.isArray(p.cycle.read))) continue;
    for (const t of g.targets)
      if (isObj(t) && isAbs(t.path))
        out.push((every(g) ? '*' : g.nodes.join(',')) + ': ' + t.path);
      else if (isObj(t) && isObj(t.path))
        for (const [node, path] of Object.entries(t.path)) if (isAbs(path)) out.push(node + ': ' + path);
  }
  return out;
}

/* The confirmation, unticked again whenever the devices written change. */
function showDestroy() {
  const list = destroys().join('; ');
  $('destroy').hidden = !list;
  if ($('destroy-what').textContent !== list) $('destroy-confirm').checked = false;
  $('destroy-what').textContent = list;
}

/* The form from ED.plan (a fresh plan when there is none). */
function render() {
  ED.stale = false;
  ED.fields.clear();
  if (!isObj(ED.plan)) ED.plan = {};
  const p = ED.plan;
  const fields = $('editor-fields');
  fields.disabled = false;
  $('editor-note').textContent = '';
  $('editor-note').className = 'muted';
  for (const id of ['editor-run', 'editor-specs', 'editor-groups', 'editor-cycle'])
    $(id).replaceChildren();
  renderRun($('editor-run'));
  renderCycle($('editor-cycle'));
  showDestroy();
  (Array.isArray(p.specs) ? p.specs : []).forEach((s, i) => isObj(s) && renderSpec($('editor-specs'), s, i));
  (Array.isArray(p.workers) ? p.workers : []).forEach((g, i) =>
    isObj(g) && renderGroup($('editor-groups'), g, i));
}

function addSpec() {
  const p = ED.plan;
  if (!Array.isArray(p.specs)) p.specs = [];
  p.specs.push({name: 'spec ' + (p.specs.length + 1), lines: [{size: '4k', read: 100, random: 100}]});
  edited(true);
}

function addGroup() {
  const p = ED.plan;
  if (!Array.isArray(p.workers)) p.workers = [];
  p.workers.push({name: 'group ' + (p.workers.length + 1), count: 1, queue_depth: 1,
                  targets: [{path: 'iofleet.dat', size: '1g'}]});
  /* Every agent to start with; untick it to pick nodes. */
  edited(true);
}

function view(form) {
  $('editor').hidden = !form;
  $('plan-text').hidden = form;
  $('editor-form-tab').setAttribute('aria-pressed', String(form));
  $('editor-json-tab').setAttribute('aria-pressed', String(!form));
}

$('editor-tabs').hidden = false;
$('editor-form-tab').addEventListener('click', () => view(true));
$('editor-json-tab').addEventListener('click', () => view(false));
$('spec-add').addEventListener('click', addSpec);
$('group-add').addEventListener('click', addGroup);
$('plan-text').addEventListener('input', reread);
$('check-button').addEventListener('click', cancelCheck);
$('start-form').addEventListener('submit', cancelCheck);
/* Before console.js's Start: writes to devices need the box ticked. */
document.addEventListener('submit', (ev) => {
  if (ev.target.id !== 'start-form' || $('destroy').hidden || $('destroy-confirm').checked) return;
  ev.preventDefault();
  ev.stopPropagation();
  say('this plan writes to devices (' + $('destroy-what').textContent + '), destroying their ' +
      'data: tick the box above Start first', true);
}, true);
/* The fleet changed (console.js): the pickers follow, unless the user is typing in them. */
document.addEventListener('iof-agents', () => {
  if ($('editor-fields').disabled) return;
  if ($('editor').contains(document.activeElement)) ED.stale = true;
  else render();
});
/* A form out of date (the fleet changed, a spec renamed) is drawn again once the focus
 * leaves it: never under the user's caret or click. */
$('editor').addEventListener('focusout', (ev) => {
  if (ED.stale && !$('editor-fields').disabled && !$('editor').contains(ev.relatedTarget)) render();
});
reread();
view(true);
