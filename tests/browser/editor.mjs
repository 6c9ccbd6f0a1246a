// SPDX-License-Identifier: Apache-2.0
// tests/browser/editor.mjs - the console's plan editor (docs/console.md, "The plan editor")
// in Debian's chromium, as a user drives it: serve with a dynamo agent dialled in; a plan
// built in the form (a spec of two lines in Iometer's words, run settings, a worker group)
// and the JSON following it; a line's % read broken (150) shows the plan loader's own
// message, word for word what `iofleet validate` says, and marks the field; lines
// reordered; the JSON edited by hand comes back into the form, and a field the form cannot
// show makes it read-only, naming it, without losing it; targets picked from the two
// agents' inventories (a disk each: one group whose target is a per-node map, read back
// into the form as each node's pick), Start refused until the devices' confirmation is ticked; a queue depth cycle and a rate; the
// run started from the form; its bars per node (ALL, node1, node2: IOPS, MiB/s, mean and
// p99 latency) for the live interval and the ended test, no CSP violation, 390 px wide.
// A spec name holding <img onerror> markup shows as text, window.__pwned stays undefined;
// at 390 px nothing scrolls sideways. Screenshots: editor, bars (whole page), form and
// bars-only (the elements alone).
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, check, ok, sleep, test, until } from './lib/harness.mjs';

const IMG = '<img src=x onerror="window.__pwned=1">';

test('editor', async (h) => {
    const serve = h.start(join(BIN, 'iofleet'), ['serve', '--http', '127.0.0.1:0', '--listen',
        '127.0.0.1:0', '--insecure', '--db', join(h.dir, 'runs.db')], 'iofleet serve');
    const m = await h.waitFor(serve, /API on (http:\/\/127\.0\.0\.1:\d+)\/api\/v1\/.*agents on (127\.0\.0\.1:\d+)/);
    const [origin, listen] = [m[1], m[2]];
    // Each node offers a disk of its own (--allow): a sparse file in /dev/shm, RAM-backed.
    const disks = ['a', 'b'].map((x) => `/dev/shm/iof-editor-${process.pid}-${x}.img`);
    h.onCleanup(() => disks.forEach((d) => rmSync(d, { force: true })));
    for (const [i, d] of disks.entries()) {
        writeFileSync(d, '');
        truncateSync(d, 64 << 20);
        h.start(join(BIN, 'dynamo'), ['--manager', listen, '--insecure', '--name', `node${i + 1}`,
            '--workdir', join(h.dir, `work${i + 1}`), '--allow', d], `dynamo node${i + 1}`);
    }
    await until('node1 and node2 connected to serve', async () => {
        const r = await fetch(`${origin}/api/v1/agents`).then((x) => x.json()).catch(() => null);
        return r?.agents?.filter((a) => a.status === 'connected').length === 2;
    });
    const browser = await h.launch();
    const { page, errors } = await h.watchedPage(1100, 900);
    await page.goto(`${origin}/`);
    await until('the event stream live', () => page.$eval('#conn', (e) => e.textContent === 'live'), 20000);

    // A screenshot of one element (docs/images/console-*.png are made from these).
    const part = async (sel, name) => {
        mkdirSync(h.shots, { recursive: true });
        const path = join(h.shots, `editor-${name}.png`);
        await (await page.$(sel)).screenshot({ path });
        return path;
    };
    const field = (path) => `#editor [data-path="${path}"]`;
    // Types text into the field of the JSON path, as a user does (select all, type).
    const fill = async (path, text) => {
        await page.click(field(path), { clickCount: 3 });
        await page.keyboard.press('Backspace');
        if (text !== '')
            await page.type(field(path), text);
    };
    const json = async () => JSON.parse(await page.$eval('#plan-text', (e) => e.value));
    const message = () => page.$eval('#plan-message', (e) => ({ text: e.textContent, cls: e.className }));
    const clickText = (scope, text) => page.evaluate((s, t) => {
        const b = [...document.querySelectorAll(`${s} button`)].find((x) => x.textContent === t ||
            x.getAttribute('aria-label') === t);
        if (!b)
            throw new Error(`no button '${t}' in ${s}`);
        b.click();
    }, scope, text);

    // The form is shown instead of the textarea; an empty plan to start from.
    const shown = await page.evaluate(() => ({ editor: !document.getElementById('editor').hidden,
        text: !document.getElementById('plan-text').hidden }));
    check(shown.editor && !shown.text, `the form at load: ${JSON.stringify(shown)}`);

    // Build a plan in the form: run settings, a spec of two lines, a worker group.
    await fill('name', 'editor plan');
    await page.click('#spec-add');
    await fill('specs[0].name', `two lines ${IMG}`);
    await clickText('#editor-specs', 'Add line');
    const lines = [['4k', '70', '70', '100'], ['64k', '30', '100', '0']];
    for (const [j, [size, share, read, random]] of lines.entries()) {
        await fill(`specs[0].lines[${j}].size`, size);
        await fill(`specs[0].lines[${j}].share`, share);
        await fill(`specs[0].lines[${j}].read`, read);
        await fill(`specs[0].lines[${j}].random`, random);
    }
    await page.click('#group-add');
    await page.select(field('workers[0].engine'), 'null');
    await fill('workers[0].queue_depth', '2');
    await fill('workers[0].targets[0].path', 'ed.dat');
    await fill('workers[0].targets[0].size', '1m');
    // The run settings last: "run" still takes its place after "name" in the JSON.
    await fill('run.duration', '2s');
    await fill('run.ramp', '1s');
    await fill('run.interval', '1s');
    const built = await json();
    const want = [{ size: '4k', share: 70, read: 70, random: 100 },
        { size: '64k', share: 30, read: 100, random: 0 }];
    check(JSON.stringify(built.specs) === JSON.stringify([{ name: `two lines ${IMG}`, lines: want }]) &&
        Object.keys(built).join(',') === 'name,run,specs,workers' &&
        built.run.duration === '2s' && built.workers[0].engine === 'null' &&
        built.workers[0].queue_depth === 2 && built.workers[0].targets[0].size === '1m',
    `the JSON after building the plan in the form: ${JSON.stringify(built)}`);
    const valid = await until('the form\'s plan checked as typed', async () => {
        const s = await message();
        return s.cls === 'ok' && s.text ? s : null;
    }, 20000);
    check(valid.text === 'valid: 1 test', `the check of the built plan: '${valid.text}'`);
    ok(`a two-line spec built in the form, the JSON follows (${JSON.stringify(built.specs[0].lines)}); ` +
        `checked as typed: '${valid.text}'`);

    // A bad % read: the loader's own message, as iofleet validate says it; the field marked.
    await fill('specs[0].lines[0].read', '150');
    const badPlan = h.file('bad.json', await page.$eval('#plan-text', (e) => e.value));
    const v = spawnSync(join(BIN, 'iofleet'), ['validate', badPlan], { encoding: 'utf8' });
    const why = v.stderr.trim().replace(`${badPlan}: `, '');
    check(v.status !== 0 && /read: must be 0\.\.100, got 150$/.test(why), `iofleet validate: ${v.stderr}`);
    const bad = await until('the bad read\'s message', async () => {
        const s = await message();
        return s.cls === 'bad' ? s : null;
    }, 20000);
    const marked = await page.$eval(field('specs[0].lines[0].read'), (e) => e.classList.contains('bad'));
    check((bad.text === why || bad.text.endsWith(`: ${why}`)) && marked,
        `the bad read: message '${bad.text}' (iofleet validate: '${why}'), field marked ${marked}`);
    await fill('specs[0].lines[0].read', '70');
    await until('valid again', async () => (await message()).cls === 'ok', 20000);
    ok(`% read 150: '${bad.text}' beside the form (as iofleet validate), the field marked`);

    // Reorder: line 1 up, then back.
    await clickText('#editor-specs', 'move line 2 up');
    const moved = await json();
    check(moved.specs[0].lines[0].size === '64k' && moved.specs[0].lines[1].size === '4k',
        `after moving line 2 up: ${JSON.stringify(moved.specs[0].lines)}`);
    const shownSize = await page.$eval(field('specs[0].lines[0].size'), (e) => e.value);
    check(shownSize === '64k', `the form after moving line 2 up shows '${shownSize}' first`);
    await clickText('#editor-specs', 'move line 1 down');
    check(JSON.stringify((await json()).specs[0].lines) === JSON.stringify(want), 'moving back');
    ok('lines reordered in the form, the JSON follows');

    // The group runs the spec ticked; renamed, the group's list follows.
    await page.$eval('#editor-groups p[data-path="workers[0].specs"] input', (e) => e.click());
    const ticked = (await json()).workers[0].specs;
    await fill('specs[0].name', `2 lines ${IMG}`);
    const renamed = (await json()).workers[0].specs;
    check(JSON.stringify(ticked) === JSON.stringify([`two lines ${IMG}`]) &&
        JSON.stringify(renamed) === JSON.stringify([`2 lines ${IMG}`]),
    `the group's specs: ticked ${JSON.stringify(ticked)}, after the spec's rename ${JSON.stringify(renamed)}`);
    await until('the renamed spec checked', async () => (await message()).text === 'valid: 1 test', 20000);
    ok(`the group's spec ticked, the spec renamed: the group's list follows (${JSON.stringify(renamed)})`);

    // The JSON edited by hand: the form re-reads it; a field it cannot show makes it
    // read-only, naming the field, and the field stays in the JSON.
    await page.click('#editor-json-tab');
    const setText = (t) => page.$eval('#plan-text', (e, x) => {
        e.value = x;
        e.dispatchEvent(new Event('input'));
    }, t);
    const hand = await json();
    hand.specs[0].lines[1].size = '128k';
    await setText(JSON.stringify(hand, null, 2));
    await page.click('#editor-form-tab');
    const reread = await page.$eval(field('specs[0].lines[1].size'), (e) => e.value);
    check(reread === '128k', `the form after the JSON's edit shows '${reread}'`);
    hand.workers[0].pattern = 'repeat';
    hand.cycle = { read: [100, 0] };
    await setText(JSON.stringify(hand, null, 2));
    const ro = await page.evaluate(() => ({ note: document.getElementById('editor-note').textContent,
        disabled: document.getElementById('editor-fields').disabled }));
    check(ro.disabled && ro.note.includes('workers[0].pattern') && ro.note.includes('cycle') &&
        ro.note.startsWith('edit as JSON: '), `the form with fields it cannot show: ${JSON.stringify(ro)}`);
    const kept = await json();
    check(kept.workers[0].pattern === 'repeat' && kept.cycle.read.length === 2,
        `the fields the form cannot show were lost: ${JSON.stringify(kept)}`);
    delete hand.workers[0].pattern;
    delete hand.cycle;
    hand.specs[0].lines[1].size = '64k';
    await setText(JSON.stringify(hand, null, 2));
    const rw = await page.$eval('#editor-fields', (e) => e.disabled);
    check(!rw, 'the form stayed read-only after the JSON came back to what it shows');
    ok(`the JSON edited by hand: the form follows; with a field it cannot show: '${ro.note}', ` +
        'read-only, the field kept');

    // Targets from the inventory: node1's disk on node1, node2's on node2. Their paths
    // differ: one group whose device target is a per-node map.
    const tick = (group, node, disk) => page.$eval(`#editor-groups > fieldset.group:nth-of-type(${group}) ` +
        `p.pick[data-node="${node}"] label[data-disk="${disk}"] input`, (e) => e.click());
    const pickedNow = () => page.$$eval('#editor-groups p.pick', (ps) => ps.map((p) => [p.dataset.node,
        [...p.querySelectorAll('label[data-disk] input')].filter((i) => i.checked)
            .map((i) => i.closest('label').dataset.disk).join(' ')].join(': ')).join('; '));
    const pickRows = await page.$$eval('#editor-groups p.pick', (ps) => ps.map((p) => p.textContent));
    check(pickRows.length === 2 && pickRows[0].includes(disks[0]) && pickRows[1].includes(disks[1]) &&
        pickRows.every((t) => t.includes('RAM-backed') && t.includes('test files in ')),
    `the group's pickers for every agent: ${JSON.stringify(pickRows)}`);
    await tick(1, 'node1', disks[0]);
    await tick(1, 'node2', disks[1]);
    const mapped = (await json()).workers;
    const paths = (g) => g.targets.map((t) => JSON.stringify(t.path)).join(' ');
    check(mapped.length === 1 && mapped[0].nodes === undefined &&
        paths(mapped[0]) === `${JSON.stringify({ node1: disks[0], node2: disks[1] })} "ed.dat"` &&
        mapped[0].targets[0].size === undefined && mapped[0].targets[1].size === '1m' &&
        mapped[0].engine === 'null',
    `the group after picking a disk per node: ${JSON.stringify(mapped)}`);
    await until('the group with a map checked', async () => (await message()).text === 'valid: 1 test', 20000);
    // Read back: the map's entries are each node's pick; the JSON as written by hand, with
    // the entries in the other order, draws the same ticks and is kept.
    const hand2 = await json();
    hand2.workers[0].targets[0].path = { node2: disks[1], node1: disks[0] };
    hand2.workers[0].targets[0].size = '1m'; // the null engine's region on each disk
    await setText(JSON.stringify(hand2, null, 2));
    const back = await pickedNow();
    check(back === `node1: ${disks[0]} files; node2: ${disks[1]} files` &&
        JSON.stringify((await json()).workers[0].targets[0]) === JSON.stringify(hand2.workers[0].targets[0]) &&
        !(await page.$eval('#editor-fields', (e) => e.disabled)),
    `the form from a plan with a map: ${back}`);
    // Writes to devices: Start refused until the confirmation is ticked.
    const destroy = await page.$eval('#destroy', (e) => ({ hidden: e.hidden, text: e.textContent }));
    check(!destroy.hidden && destroy.text.includes(`node1: ${disks[0]}`) &&
        destroy.text.includes(`node2: ${disks[1]}`), `the devices' confirmation: ${JSON.stringify(destroy)}`);
    await page.click('#start-button');
    const refused = await message();
    const noRun = await page.evaluate(() => fetch('/api/v1/runs').then((r) => r.json()));
    check(refused.cls === 'bad' && refused.text.startsWith('this plan writes to devices') &&
        noRun.total === 0, `Start without the confirmation: '${refused.text}', ${noRun.total} runs`);
    ok(`targets picked per node from the inventory: ${paths(mapped[0])} (one group, a per-node map; ` +
        `read back as ${back}); Start refused without the confirmation: '${refused.text}'`);
    await page.$eval('#destroy-confirm', (e) => e.click());

    await until('the map checked', async () => (await message()).text === 'valid: 1 test', 20000);

    // Cycling and rates: transfer sizes and queue depths cycled, a rate per worker.
    await fill('cycle.size', '4k, 64k');
    await fill('cycle.queue_depth.from', '1');
    await fill('cycle.queue_depth.to', '4');
    await fill('cycle.queue_depth.step', 'x2');
    await page.select(field('workers[0].rate'), 'iops');
    await fill('workers[0].rate.iops', '500');
    const cycled = await json();
    check(JSON.stringify(cycled.cycle) === '{"size":["4k","64k"],"queue_depth":{"from":1,"to":4,"step":"x2"}}' &&
        JSON.stringify(cycled.workers[0].rate) === '{"iops":500}',
    `the JSON after cycling and a rate: cycle ${JSON.stringify(cycled.cycle)}, rate ${JSON.stringify(cycled.workers[0].rate)}`);
    // The spec has two lines: the loader refuses to cycle its size, in its own words.
    const noSingle = await until('the size cycle refused', async () => {
        const s = await message();
        return s.cls === 'bad' ? s.text : null;
    }, 20000);
    check(/cycle: size: no spec has a single line to cycle/.test(noSingle), `the size cycle: '${noSingle}'`);
    await fill('cycle.size', '');
    const qd = await until('3 queue depths checked', async () => {
        const s = await message();
        return s.cls === 'ok' ? s.text : null;
    }, 20000);
    check(qd === 'valid: 3 tests', `the queue depth cycle 1..4 x2: '${qd}'`);
    for (const k of ['from', 'to', 'step'])
        await fill(`cycle.queue_depth.${k}`, '');
    await page.select(field('workers[0].rate'), '');
    const plain = await json();
    check(plain.cycle === undefined && plain.workers[0].rate === undefined,
        `cycle and rate emptied: ${JSON.stringify(plain)}`);
    ok(`cycling: sizes 4k, 64k refused for a two-line spec ('${noSingle}'), queue depth 1..4 x2: ` +
        `'${qd}'; rate 500 IOPS per worker; emptied, both leave the JSON`);

    // The names as text; a phone: nothing sideways.
    const names = await page.evaluate(() => ({ pwned: typeof window.__pwned, imgs: document.images.length }));
    check(names.pwned === 'undefined' && names.imgs === 0, `the spec's markup ran: ${JSON.stringify(names)}`);
    await page.setViewport({ width: 390, height: 844 });
    await sleep(300);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    check(width <= 390, `the page with the editor is ${width} px wide at 390 px`);
    await page.$eval('#start', (e) => e.scrollIntoView());
    ok(`390 px: scrollWidth ${width}; the spec's markup shown as text (${await h.shot(page, 'editor')}, ` +
        `the form alone: ${await part('#start', 'form')})`);
    await page.setViewport({ width: 1100, height: 900 });

    // Start from the form; the bars of the live last interval recorded as they are drawn.
    await until('valid before the start', async () => (await message()).cls === 'ok', 20000);
    await page.evaluate(() => {
        window.__live = [];
        new MutationObserver(() => {
            const pick = document.getElementById('bars-test');
            const rows = [...document.querySelectorAll('#bars .barset:first-child .bar-row')];
            if (pick && pick.value === 'live' && rows.length)
                window.__live.push(rows.map((r) => r.querySelector('.bar-name').textContent));
        }).observe(document.getElementById('bars'), { childList: true, subtree: true });
    });
    await page.click('#start-button');
    const started = await until('the start\'s answer', async () => {
        const s = await message();
        return /^run \d+ started$/.test(s.text) ? s : null;
    }, 20000);
    const ended = await until('the run ended', () => page.$eval('#run-state',
        (e) => (e.textContent === 'ok' ? e.textContent : null)), 30000);
    ok(`${started.text} from the form, ended ${ended}`);

    // Iometer's bars: per figure a bar for ALL and each node, scaled to the largest, the
    // figure beside it; the ended test picked, the live interval's drawn while it ran.
    const bars = await until('the bars of the ended test', () => page.evaluate(() => {
        const sets = [...document.querySelectorAll('#bars .barset')].map((b) => ({
            title: b.querySelector('h4').textContent,
            rows: [...b.querySelectorAll('.bar-row')].map((r) => ({
                name: r.querySelector('.bar-name').textContent,
                value: r.querySelector('.bar-value').textContent,
                width: r.querySelector('.bar-fill').getBoundingClientRect().width /
                    r.querySelector('.bar').getBoundingClientRect().width * 100,
            })),
        }));
        return sets.length === 4 && document.getElementById('bars-test').value === '1' ? sets : null;
    }), 10000);
    const rowNames = (set) => [set.rows[0].name].concat(set.rows.slice(1).map((r) => r.name).sort()).join(',');
    check(bars.map((b) => b.title).join('|') === 'Total I/Os per second|MiB/s|mean latency (ms)|p99 latency (ms)' &&
        bars.every((b) => rowNames(b) === 'ALL,node1,node2'), `the bars: ${JSON.stringify(bars)}`);
    const iops = bars[0].rows;
    check(iops.every((r) => Number(r.value) > 0) && Math.abs(iops[0].width - 100) < 0.5 &&
        iops.slice(1).every((r) => r.width > 0 && r.width < 100) &&
        Math.abs(Number(iops[0].value) - Number(iops[1].value) - Number(iops[2].value)) <= 2,
    `the IOPS bars: ${JSON.stringify(iops)}`);
    const live = await page.evaluate(() => window.__live);
    check(live.length > 0 && live.every((l) => l[0] === 'ALL' && l.slice(1).sort().join(',') === 'node1,node2'),
        `the live interval's bars while the run went on: ${JSON.stringify(live)}`);
    const csp = await page.evaluate(() => window.__csp);
    check(csp.length === 0, `CSP violations: ${csp.join('; ')}`);
    await page.setViewport({ width: 390, height: 844 });
    await sleep(300);
    const narrow = await page.evaluate(() => document.documentElement.scrollWidth);
    const wide = await page.evaluate(() => [...document.querySelectorAll('body *')]
        .filter((e) => !e.closest('.scroll') && e.getBoundingClientRect().right > 390)
        .slice(0, 5).map((e) => `${e.tagName}#${e.id}.${e.className} ${e.getBoundingClientRect().right}`)
        .concat((() => {
            const out = [];
            const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            for (let n = w.nextNode(); n; n = w.nextNode()) {
                const r = document.createRange();
                r.selectNodeContents(n);
                if (!n.parentElement.closest('.scroll') && r.getBoundingClientRect().right > 390)
                    out.push(`'${n.textContent.slice(0, 40)}' in ${n.parentElement.tagName}#${n.parentElement.id} ${r.getBoundingClientRect().right}`);
            }
            return out.slice(0, 5);
        })()));
    check(narrow <= 390, `the page with the bars is ${narrow} px wide at 390 px: ${wide.join('; ')}`);
    await page.$eval('#bars', (e) => e.scrollIntoView());
    check(errors.length === 0, `page errors: ${errors.join('; ')}`);
    ok(`bars of test 1: IOPS ${iops.map((r) => `${r.name} ${r.value} (${r.width.toFixed(0)}%)`).join(', ')}; ` +
        `drawn ${live.length} times for the live interval; no CSP violation; 390 px: scrollWidth ${narrow} ` +
        `(${await h.shot(page, 'bars')}, the bars alone: ${await part('#bars', 'bars-only')})`);
});
