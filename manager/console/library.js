/* SPDX-License-Identifier: Apache-2.0 */
/* manager/console/library.js - the plan library's controls in the console's start form
 * (docs/console.md): a Library select that loads a plan (GET /api/v1/plans, /plans/NAME)
 * into the form's plan text (#plan-text), "Import file..." (the file uploaded to POST
 * /api/v1/plans/import, its plan put in #plan-text and its notes listed), "Save as..."
 * (PUT /api/v1/plans/NAME) and "Export .icf" (POST /api/v1/plans/export, downloaded).
 * It knows the rest of the page by element ids only: #start-form and #plan-text; its own
 * controls are made here, and every name is set with textContent, never as HTML. */
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const form = $('start-form');
  const text = $('plan-text');
  if (!form || !text) return;

  const el = (tag, props, ...kids) => {
    const e = document.createElement(tag);
    Object.assign(e, props || {});
    for (const k of kids) e.append(k);
    return e;
  };
  const select = el('select', {id: 'library-select'});
  const file = el('input', {id: 'import-file', type: 'file',
                            accept: '.fio,.ini,.job,.icf,.vdb,.txt,text/plain'});
  const name = el('input', {id: 'library-name', type: 'text', size: 16, maxLength: 64,
                            placeholder: 'name', spellcheck: false});
  const save = el('button', {id: 'library-save', type: 'button', textContent: 'Save as\u2026'});
  const exp = el('button', {id: 'library-export', type: 'button', textContent: 'Export .icf'});
  const status = el('p', {id: 'library-message', role: 'status'});
  const notes = el('ul', {id: 'import-notes'});
  const bar = el('div', {id: 'library'},
                 el('p', {}, el('label', {}, 'Library ', select), ' ',
                    el('label', {}, 'Import file\u2026 ', file)),
                 el('p', {}, el('label', {}, 'Save as ', name), ' ', save, ' ', exp),
                 status, notes);
  form.insertBefore(bar, text);

  const say = (msg, bad) => {
    status.textContent = msg;
    status.className = bad ? 'bad' : 'ok';
  };
  const why = async (r) => {
    try {
      const j = await r.json();
      return (j && j.error && j.error.message) || 'HTTP ' + r.status;
    } catch (e) {
      return 'HTTP ' + r.status;
    }
  };
  /* The plan text set as a user's edit would: the form's own listeners see it. */
  const setPlan = (t) => {
    text.value = t;
    text.dispatchEvent(new Event('input', {bubbles: true}));
  };

  async function refresh(keep) {
    const r = await fetch('/api/v1/plans');
    if (!r.ok) { say('the plan library: ' + await why(r), true); return; }
    const list = await r.json();
    select.replaceChildren(el('option', {value: '', textContent: '(a plan of the library)'}));
    for (const source of ['user', 'shipped']) {
      const group = el('optgroup', {label: source === 'user' ? 'yours' : 'shipped'});
      for (const p of list.filter((x) => x.source === source)) {
        const o = el('option', {value: source + '/' + p.name,
                                textContent: p.name + (p.tests === null ? ' (invalid)' : '')});
        o.title = (p.description || '') + (p.tests === null ? ': ' + p.error : ', ' + p.tests +
                   ' test' + (p.tests === 1 ? '' : 's'));
        group.append(o);
      }
      if (group.children.length) select.append(group);
    }
    if (keep) select.value = keep;
  }

  select.addEventListener('change', async () => {
    const v = select.value;
    if (!v) return;
    const [source, plan] = [v.slice(0, v.indexOf('/')), v.slice(v.indexOf('/') + 1)];
    const r = await fetch('/api/v1/plans/' + encodeURIComponent(plan) + '?source=' + source);
    if (!r.ok) { say(plan + ': ' + await why(r), true); return; }
    setPlan(await r.text());
    notes.replaceChildren();
    if (source === 'user') name.value = plan;
    say('loaded ' + plan + ' (' + source + ')');
  });

  file.addEventListener('change', async () => {
    const f = file.files[0];
    if (!f) return;
    const r = await fetch('/api/v1/plans/import?name=' + encodeURIComponent(f.name), {
      method: 'POST', headers: {'Content-Type': 'application/octet-stream'}, body: f});
    notes.replaceChildren();
    if (!r.ok) { say(f.name + ': ' + await why(r), true); return; }
    const j = await r.json();
    setPlan(j.plan);
    for (const n of j.notes)
      notes.append(el('li', {textContent: (n.line === null ? '' : f.name + ':' + n.line + ': ') +
                                          n.message}));
    name.value = f.name.replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9._-]/g, '_')
                     .replace(/^\.+/, '').slice(0, 64);
    say('imported ' + f.name + ' (' + j.format + '): ' + j.notes.length + ' note' +
        (j.notes.length === 1 ? '' : 's'));
    file.value = '';
  });

  save.addEventListener('click', async () => {
    const n = name.value.trim();
    if (!n) { say('Save as: give the plan a name', true); return; }
    const r = await fetch('/api/v1/plans/' + encodeURIComponent(n), {
      method: 'PUT', headers: {'Content-Type': 'application/json'}, body: text.value});
    if (!r.ok) { say('Save as ' + n + ': ' + await why(r), true); return; }
    const j = await r.json();
    say((j.created ? 'saved ' : 'replaced ') + n + ' (' + j.tests + ' test' +
        (j.tests === 1 ? '' : 's') + ')');
    await refresh('user/' + n);
  });

  exp.addEventListener('click', async () => {
    const r = await fetch('/api/v1/plans/export?format=icf', {
      method: 'POST', headers: {'Content-Type': 'application/json'}, body: text.value});
    if (!r.ok) { say('Export: ' + await why(r), true); return; }
    const a = el('a', {href: URL.createObjectURL(await r.blob()),
                       download: (name.value.trim() || 'plan') + '.icf'});
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    say('exported ' + a.download);
  });

  refresh();
})();
