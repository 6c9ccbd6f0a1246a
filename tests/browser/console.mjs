// SPDX-License-Identifier: Apache-2.0
// tests/browser/console.mjs - the console page of `iofleet serve` (docs/console.md) in
// Debian's chromium, as a user drives it: serve with --db and a dynamo agent dialled in;
// the first HTML lists the agent with JavaScript off too; a plan pasted into the start form
// is checked OK, a bad one shows `iofleet validate`'s message word for word; Start makes
// the run `running` and its charts gain a point per interval (read from the Chart.js
// instances); Stop makes it `interrupted` with the ended tests kept on the page, and the
// history (GET /api/v1/runs from the page) lists it. At 390 px nothing scrolls sideways.
// The plan's, specs', group's and target's names and the agent's workdir carry <script>
// and onerror markup: they show as text, window.__pwned stays undefined, and the page's own
// script causes no Content-Security-Policy violation. The history lists the stopped run and
// tags it; a second short run of a changed plan compared with it shows the plan's changes
// and the figures with B/A within 390 px; a delete dismissed keeps it, confirmed removes it.
// The search box finds a run by its plan's name. Signed in to a serve with --http-tokens,
// Sign out ends the session. The plan library's Import file... fills the plan text with an
// .icf imported as `iofleet import` writes it. Screenshots: idle, running, stopped, phone,
// history, compare.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, check, ok, sleep, test, until } from './lib/harness.mjs';

const SCRIPT = '<script>window.__pwned=1</script>';
const IMG = '"><img src=x onerror="window.__pwned=1">';
const PLAN = {
    name: `console ${SCRIPT}`,
    run: { ramp: '1s', duration: '3s', interval: '1s' },
    specs: [
        { name: `4k ${SCRIPT}`, lines: [{ size: '4k', read: 70, random: 100 }] },
        { name: `64k${IMG}`, lines: [{ size: '64k', read: 0 }] },
        { name: '16k', lines: [{ size: '16k', read: 50 }] },
        { name: '8k', lines: [{ size: '8k', read: 100 }] },
        // More tests than the page needs: Stop comes after test 1, with 18 s to spare
        // on a slow machine before the run could end by itself.
        { name: '32k', lines: [{ size: '32k', read: 100 }] },
        { name: '128k', lines: [{ size: '128k', read: 0 }] },
        { name: '256k', lines: [{ size: '256k', read: 100 }] },
    ],
    workers: [{ name: `g${IMG}`, engine: 'null', queue_depth: 1,
        targets: [{ path: `t${IMG}.dat`, size: '1m' }] }],
};
// A plan the loader refuses: a read share over 100.
const BAD = { ...PLAN, specs: [{ name: '4k', lines: [{ size: '4k', read: 170 }] }] };

// What the page shows, read through its documented ids.
function read() {
    const $ = (id) => document.getElementById(id);
    const rows = (id, sel) => [...$(id).querySelectorAll(sel)]
        .map((tr) => [...tr.cells].map((td) => td.textContent));
    const chart = typeof Chart === 'undefined' ? null : Chart.getChart('chart-iops');
    return {
        state: $('run-state').textContent,
        plan: $('run-plan').textContent,
        id: $('run-id').textContent,
        test: $('run-test').textContent,
        stop: !$('stop-button').disabled,
        agents: rows('agents-body', 'tr'),
        all: rows('interval-body', 'tr.all')[0] || null,
        done: rows('summary-body', 'tr.all'),
        points: chart ? chart.data.datasets[0].data.length : -1,
        message: $('plan-message').textContent,
        messageClass: $('plan-message').className,
        text: document.body.innerText,
        imgs: document.images.length,
        pwned: typeof window.__pwned,
        width: document.documentElement.scrollWidth,
    };
}

test('console', async (h) => {
    const serve = h.start(join(BIN, 'iofleet'), ['serve', '--http', '127.0.0.1:0', '--listen',
        '127.0.0.1:0', '--insecure', '--db', join(h.dir, 'runs.db')], 'iofleet serve');
    const m = await h.waitFor(serve, /API on (http:\/\/127\.0\.0\.1:\d+)\/api\/v1\/.*agents on (127\.0\.0\.1:\d+)/);
    const [origin, listen] = [m[1], m[2]];
    const url = `${origin}/`;
    const workdir = join(h.dir, `w${IMG}`);
    mkdirSync(workdir);
    h.start(join(BIN, 'dynamo'), ['--manager', listen, '--insecure', '--name', 'node1',
        '--workdir', workdir], 'dynamo node1');
    await until('node1 connected to serve', async () => {
        const r = await fetch(`${origin}/api/v1/agents`).then((x) => x.json()).catch(() => null);
        return r?.agents?.some((a) => a.name === 'node1' && a.status === 'connected');
    });
    const browser = await h.launch();

    // The first HTML, JavaScript off: the agent listed without any script or event.
    const bare = await browser.newPage();
    await bare.setJavaScriptEnabled(false);
    await bare.setViewport({ width: 1100, height: 800 });
    const res = await bare.goto(url);
    check(res.status() === 200, `GET ${url}: ${res.status()}`);
    const first = await bare.evaluate(read);
    check(first.agents.length === 1 && first.agents[0][0] === 'node1' &&
        first.agents[0][1] === 'connected', `the first HTML's fleet: ${JSON.stringify(first.agents)}`);
    // Its certificate name (none over plain TCP) and last seen: now, since it connected.
    const seen = /^now, since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
    check(first.agents[0][2] === 'none (plain TCP)' && seen.test(first.agents[0][3]),
        `the first HTML's certificate and last seen: ${JSON.stringify(first.agents[0])}`);
    check(first.agents[0].join(' ').includes(workdir), `the first HTML's fleet does not show ` +
        `the workdir '${workdir}' as text: ${JSON.stringify(first.agents[0])}`);
    check(first.plan === 'no run yet' && !first.stop, `the first HTML before any run: plan ` +
        `'${first.plan}', stop ${first.stop ? 'enabled' : 'disabled'}`);
    check(first.imgs === 0, `the first HTML has ${first.imgs} <img> (the workdir's markup)`);
    await bare.close();
    ok(`the first HTML, JavaScript off: node1 connected, its workdir as text, no run yet`);

    // The page itself: every CSP violation and page error recorded from the start.
    const { page, errors } = await h.watchedPage(1100, 800);
    await page.goto(url);
    await until('the event stream live', () => page.$eval('#conn', (e) => e.textContent === 'live'), 20000);
    // A screenshot of the elements of sels alone, from the first's top to the last's bottom
    // (docs/images/console-fleet-run.png, -history.png and -compare.png are copies).
    const part = async (sels, name) => {
        mkdirSync(h.shots, { recursive: true });
        const path = join(h.shots, `console-${name}.png`);
        const clip = await page.evaluate((list) => {
            const r = list.map((x) => document.querySelector(x).getBoundingClientRect());
            const top = Math.min(...r.map((x) => x.top)) + window.scrollY;
            const left = Math.min(...r.map((x) => x.left)) + window.scrollX;
            return { x: left, y: top, width: Math.max(...r.map((x) => x.right)) + window.scrollX - left,
                height: Math.max(...r.map((x) => x.bottom)) + window.scrollY - top };
        }, sels);
        await page.screenshot({ path, clip, captureBeyondViewport: true });
        return path;
    };
    const idle = await page.evaluate(read);
    check(idle.agents.length === 1 && idle.agents[0][0] === 'node1' && idle.points === 0,
        `the page before any run: agents ${JSON.stringify(idle.agents)}, ${idle.points} chart points`);
    check(JSON.stringify(idle.agents[0]) === JSON.stringify(first.agents[0]),
        `the script's fleet row differs from the first HTML's: ${JSON.stringify(idle.agents[0])} ` +
        `vs ${JSON.stringify(first.agents[0])}`);
    ok(`idle: node1 listed, the stream live, an empty chart (${await h.shot(page, 'idle')})`);

    // The plan library's Import file...: an Iometer .icf uploaded fills the plan text with
    // the bytes `iofleet import` writes, and its notes are listed.
    const icf = join(import.meta.dirname ?? '.', '../data/iometer/two-managers-2004.icf');
    const imp = spawnSync(join(BIN, 'iofleet'), ['import', icf, '-o', '-'], { encoding: 'utf8' });
    check(imp.status === 0 && imp.stdout, `iofleet import ${icf}: ${imp.status} ${imp.stderr}`);
    await (await page.$('#import-file')).uploadFile(icf);
    const imported = await until('the imported plan in #plan-text', async () => {
        const t = await page.$eval('#plan-text', (e) => e.value);
        return t ? t : null;
    }, 10000);
    const noteCount = await page.$$eval('#import-notes li', (l) => l.length);
    check(imported === imp.stdout && noteCount > 0, `after Import file: ${noteCount} notes, ` +
        `#plan-text ${imported === imp.stdout ? 'is' : 'is not'} iofleet import's plan`);
    ok(`Import file: two-managers-2004.icf as iofleet import writes it, ${noteCount} notes listed`);

    // A bad plan: the loader's message, word for word what `iofleet validate` says.
    const badFile = h.file('bad.json', JSON.stringify(BAD));
    const v = spawnSync(join(BIN, 'iofleet'), ['validate', badFile], { encoding: 'utf8' });
    check(v.status !== 0 && v.stderr, `iofleet validate of the bad plan: ${v.status} ${v.stderr}`);
    const why = v.stderr.trim().replace(`${badFile}: `, '');
    check(/read: must be 0\.\.100, got 170$/.test(why), `iofleet validate of the bad plan said '${why}'`);
    const paste = async (text) => {
        await page.$eval('#plan-text', (e, t) => { e.value = t; }, text);
        await page.click('#check-button');
    };
    await paste(JSON.stringify(BAD, null, 2));
    // (The imported plan's own check may answer first: wait for the pasted plan's.)
    const bad = await until('the bad plan\'s message', async () => {
        const s = await page.evaluate(read);
        return s.messageClass === 'bad' && s.message.endsWith(why) ? s : null;
    }, 20000);
    check(bad.message === why || bad.message.endsWith(`: ${why}`), `the bad plan's message ` +
        `'${bad.message}' is not iofleet validate's '${why}'`);
    ok(`a bad plan: '${bad.message}' (as iofleet validate)`);

    // The good plan: Check says valid with its test count.
    await paste(JSON.stringify(PLAN, null, 2));
    const good = await until('the good plan checked', async () => {
        const s = await page.evaluate(read);
        return s.messageClass === 'ok' && s.message ? s : null;
    }, 20000);
    check(good.message === `valid: ${PLAN.specs.length} tests`, `Check of the plan: '${good.message}'`);
    ok(`Check: '${good.message}'`);

    // Start: the run running, its chart gaining a point per interval.
    await page.click('#start-button');
    const started = await until('the start\'s answer', () => page.$eval('#plan-message',
        (e) => /^run \d+ started$/.test(e.textContent) && e.className === 'ok'), 20000);
    check(started, 'no start message');
    const counts = [];
    const running = await until('the chart gaining three points with test 1 kept', async () => {
        const s = await page.evaluate(read);
        if (s.state === 'running' && counts[counts.length - 1] !== s.points)
            counts.push(s.points);
        return s.state === 'running' && counts.length >= 3 && s.done.length >= 1 ? s : null;
    }, 60000, 100);
    check(running.plan === PLAN.name && running.stop && running.all?.[0] === 'ALL' &&
        running.all[1] !== '-', `the page while running: plan '${running.plan}', stop ` +
        `${running.stop}, ALL row ${JSON.stringify(running.all)}`);
    check(counts.every((c, i) => !i || c > counts[i - 1]) && counts[counts.length - 1] >= 3,
        `the chart's points did not grow: ${counts.join(', ')}`);
    const runId = Number(running.id.replace('#', ''));
    ok(`Start: run ${running.id} running, ${running.test}, the IOPS chart's points ` +
        `${counts.join(' -> ')}, ALL ${running.all[1]} IOPS (${await h.shot(page, 'running')})`);

    // Stop: interrupted, the ended tests kept, the history lists it.
    await page.click('#stop-button');
    const stopped = await until('the run interrupted', async () => {
        const s = await page.evaluate(read);
        return s.state !== 'running' && s.state !== 'stopping' ? s : null;
    }, 60000, 100);
    check(stopped.state === 'interrupted' && !stopped.stop,
        `after Stop: state '${stopped.state}', stop ${stopped.stop ? 'enabled' : 'disabled'}`);
    check(stopped.done.length >= running.done.length && stopped.done[0][0] === `1. ${PLAN.specs[0].name}` &&
        stopped.points >= counts[counts.length - 1],
    `after Stop the tests are ${JSON.stringify(stopped.done)}, ${stopped.points} points`);
    const live = await until('the stopped run in the history list', () => page.evaluate((id) => {
        const tr = document.querySelector(`#history-body tr[data-id="${id}"]`);
        return tr && tr.cells[4].textContent === 'interrupted' ? tr.cells[2].textContent : null;
    }, runId), 10000);
    check(live === PLAN.name, `the history's row of run ${runId} names the plan '${live}'`);
    // The row console.js drew links the report and the result files, as the first HTML's rows do.
    const links = await page.evaluate((id) => [...document.querySelectorAll(`#history-body tr[data-id="${id}"] a`)]
        .map((a) => `${a.getAttribute('href')} ${a.getAttribute('download')} ${a.textContent}`), runId);
    const want = [['report.html', '.html', 'report'], ['results.csv', '.csv', 'csv'],
        ['iometer.csv', '-iometer.csv', 'iometer'], ['results.json', '.json', 'json']]
        .map(([p, s, l]) => `/api/v1/runs/${runId}/${p} iofleet-run-${runId}${s} ${l}`);
    check(JSON.stringify(links) === JSON.stringify(want), `the history's links of run ${runId}: ${JSON.stringify(links)}`);
    const runs = await page.evaluate(() => fetch('/api/v1/runs').then((r) => r.json()));
    const rec = runs.runs?.find((r) => r.id === runId);
    check(runs.runs?.length === 1 && rec?.status === 'interrupted' && rec.plan === PLAN.name,
        `GET /api/v1/runs after Stop: ${JSON.stringify(runs)}`);
    ok(`Stop: ${stopped.state}, ${stopped.done.length} ended tests kept, ${stopped.points} ` +
        `points; GET /api/v1/runs and the history list run ${runId} ${rec.status} (${await h.shot(page, 'stopped')}, the fleet and the run alone: ` +
        `${await part(['#fleet', '#run'], 'fleet-run')})`);

    // The names as text, nothing of them run or loaded; no CSP violation by the page.
    for (const name of [PLAN.name, PLAN.specs[0].name])
        check(stopped.text.includes(name), `the page does not show '${name}' as text`);
    check(stopped.imgs === 0 && stopped.pwned === 'undefined',
        `a name's markup ran: ${stopped.imgs} <img>, window.__pwned ${stopped.pwned}`);
    // The page as served after the run (its first HTML holds the names), script on.
    await page.reload();
    await until('the stream live again', () => page.$eval('#conn', (e) => e.textContent === 'live'), 20000);
    const again = await page.evaluate(read);
    check(again.plan === PLAN.name && again.state === 'interrupted' &&
        again.done.length === stopped.done.length &&
        (again.done.length < 2 || again.text.includes(PLAN.specs[1].name)),
    `the page reloaded after the run: ${JSON.stringify({ ...again, text: undefined })}`);
    check(again.imgs === 0 && again.pwned === 'undefined',
        `a name's markup ran on the reloaded page: ${again.imgs} <img>, window.__pwned ${again.pwned}`);
    const csp = await page.evaluate(() => window.__csp);
    check(csp.length === 0, `CSP violations: ${csp.join('; ')}`);
    check(errors.length === 0, `page errors: ${errors.join('; ')}`);
    // The recorder works: an inline script added to the page is blocked and reported.
    const inline = await page.evaluate(async () => {
        const s = document.createElement('script');
        s.textContent = 'window.__inline = 1';
        document.body.appendChild(s);
        await new Promise((r) => setTimeout(r, 200));
        return { ran: typeof window.__inline, csp: window.__csp };
    });
    check(inline.ran === 'undefined' && inline.csp.length === 1,
        `an inline script added to the page: ${JSON.stringify(inline)}`);
    ok('the names with <script> and onerror markup show as text, window.__pwned stays ' +
        'undefined, no CSP violation by the page (an inline script added: blocked, ' +
        `reported: ${inline.csp[0]}), no page error`);

    // A phone: 390 CSS px wide, no sideways scroll.
    await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
    await sleep(300);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    check(width <= 390, `the page is ${width} px wide on a 390 px phone`);
    ok(`no sideways scroll at 390 px: scrollWidth ${width} (${await h.shot(page, 'phone')})`);

    // The history: the stopped run listed (from the first HTML); tag it through the page.
    await page.setViewport({ width: 1100, height: 800 });
    const history = () => page.evaluate(() => [...document.querySelectorAll('#history-body tr')]
        .map((tr) => ({ id: Number(tr.dataset.id), cells: [...tr.cells].map((td) => td.textContent) })));
    let answer = null; // what the next prompt or confirm is answered
    page.on('dialog', (d) => (answer === false ? d.dismiss() : d.accept(answer ?? undefined)));
    const listed = await history();
    check(listed.length === 1 && listed[0].id === runId && listed[0].cells[2] === PLAN.name &&
        listed[0].cells[4] === 'interrupted', `the history after Stop: ${JSON.stringify(listed)}`);
    answer = 'base<b>line';
    await page.$eval(`#history-body tr[data-id="${runId}"] button.tag`, (b) => b.click());
    const tagged = await until('the run tagged in the history', async () => {
        const l = await history();
        return l.find((r) => r.id === runId && r.cells[5] === answer) ? l : null;
    }, 10000);
    const viaApi = await page.evaluate((id) => fetch(`/api/v1/runs?tag=${encodeURIComponent('base<b>line')}`)
        .then((r) => r.json()), runId);
    check(viaApi.total === 1 && viaApi.runs[0].id === runId, `GET /api/v1/runs?tag= after tagging: ` +
        `${JSON.stringify(viaApi)}`);
    ok(`history: run ${runId} listed (${listed[0].cells.slice(1, 7).join(' | ')}), tagged ` +
        `'${tagged[0].cells[5]}' from the page (${await h.shot(page, 'history')}, the history alone: ` +
        `${await part(['#history'], 'history-only')})`);

    // A second, short run of a changed plan; the two compared; then one deleted.
    const SHORT = { ...PLAN, name: 'console short', run: { ramp: '1s', duration: '1s', interval: '1s' },
        specs: [PLAN.specs[0]] };
    await paste(JSON.stringify(SHORT, null, 2));
    await until('the short plan checked', () => page.$eval('#plan-message', (e) => e.className === 'ok'), 20000);
    await page.click('#start-button');
    const second = await until('the short run ended and listed', async () => {
        const l = await history();
        return l.length === 2 && l[0].id !== runId && l[0].cells[4] === 'finished' ? l[0] : null;
    }, 30000, 200);
    check(second.cells[2] === SHORT.name && second.cells[6] === '1/1',
        `the short run in the history: ${JSON.stringify(second)}`);
    for (const id of [runId, second.id])
        await page.click(`#history-body tr[data-id="${id}"] input.pick`);
    await page.click('#compare-button');
    await until('the compare view', () => page.$eval('#compare', (e) => !e.hidden), 10000);
    // 390 px wide (isMobile unchanged: changing it reloads the page).
    await page.setViewport({ width: 390, height: 844 });
    await sleep(300);
    const cmp = await page.evaluate(() => {
        const rows = (id) => [...document.querySelectorAll(`#${id} tr`)]
            .map((tr) => [...tr.cells].map((td) => td.textContent));
        return { runs: document.getElementById('compare-runs').textContent,
            changes: rows('compare-changes-body'), tests: rows('compare-body'),
            width: document.documentElement.scrollWidth, pwned: typeof window.__pwned,
            imgs: document.images.length };
    });
    const dur = cmp.changes.find((r) => r[0] === '$.run.duration');
    check(dur && dur[1] !== dur[2] && cmp.changes.some((r) => r[0] === '$.name' && r[2] === SHORT.name),
        `the compare view's plan changes: ${JSON.stringify(cmp.changes)}; GET /api/v1/runs/compare: ` +
        JSON.stringify(await page.evaluate((a, b) => fetch(`/api/v1/runs/compare?a=${a}&b=${b}`)
            .then((r) => r.json()), runId, second.id)).slice(0, 1500));
    const iops = cmp.tests.find((r) => r[0] === 'iops');
    check(cmp.tests[0][0] === PLAN.specs[0].name && iops && /^\d+\.\d\d( \u25b2 better| \u25bc worse| =)$/.test(iops[3]) &&
        cmp.tests.some((r) => r[0] === 'read_iops') && cmp.tests.some((r) => r[0] === 'write_iops'),
    `the compare view's tests: ${JSON.stringify(cmp.tests)}`);
    check(cmp.width <= 390 && cmp.pwned === 'undefined' && cmp.imgs === 0,
        `the compare view at 390 px: scrollWidth ${cmp.width}, __pwned ${cmp.pwned}, ${cmp.imgs} <img>`);
    ok(`compare: ${cmp.runs}: ${cmp.changes.length} plan changes (duration ${dur[1]} -> ${dur[2]}), ` +
        `${PLAN.specs[0].name} IOPS ${iops.slice(1).join(' / ')}, read/write split; fits 390 px ` +
        `(scrollWidth ${cmp.width}) (${await h.shot(page, 'compare')}, the comparison alone: ` +
        `${await part(['#compare'], 'compare-only')})`);

    // The search box: the short run by a word of its plan's name, then every run again.
    const search = async (q, n) => {
        await page.$eval('#history-q', (e, v) => { e.value = v; }, q);
        await page.click('#history-search');
        return until(`the history searched for '${q}'`, async () => {
            const l = await history();
            return l.length === n ? l : null;
        }, 10000);
    };
    const found = await search('SHORT', 1);
    check(found[0].id === second.id && (await page.$eval('#history-total', (e) => e.textContent)) ===
        'runs 1-1 of 1', `the history searched for 'SHORT': ${JSON.stringify(found)}`);
    await search('', 2);
    ok(`search: 'SHORT' finds run ${second.id} alone`);

    // Delete: dismissed, nothing goes; confirmed, the run leaves the list and the history.
    answer = false;
    await page.$eval(`#history-body tr[data-id="${second.id}"] button.delete`, (b) => b.click());
    await sleep(300);
    check((await history()).length === 2, 'a dismissed delete removed a run');
    answer = undefined;
    await page.$eval(`#history-body tr[data-id="${second.id}"] button.delete`, (b) => b.click());
    const left = await until('the run deleted', async () => {
        const l = await history();
        return l.length === 1 ? l : null;
    }, 10000);
    const after = await page.evaluate(() => fetch('/api/v1/runs').then((r) => r.json()));
    check(left[0].id === runId && after.total === 1 && after.runs[0].id === runId &&
        (await page.$eval('#history-total', (e) => e.textContent)) === 'runs 1-1 of 1',
    `after deleting run ${second.id}: ${JSON.stringify(after)}`);
    ok(`delete: dismissed kept run ${second.id}; confirmed removed it (GET /api/v1/runs: ` +
        `total ${after.total})`);

    // Prune: a rule no run matches removes nothing and asks nothing; keep the newest 0
    // asks, naming how many runs go (a dry run first); dismissed, nothing goes; confirmed,
    // the list reloads empty.
    const dialogs = [];
    page.on('dialog', (d) => dialogs.push(d.message()));
    const pruneWith = async (keep, days) => {
        await page.$eval('#prune-keep', (e, v) => { e.value = v; }, keep);
        await page.$eval('#prune-days', (e, v) => { e.value = v; }, days);
        await page.click('#prune-button');
    };
    const historyMessage = () => page.$eval('#history-message', (e) => ({ text: e.textContent, cls: e.className }));
    await pruneWith('', '1');
    const none = await until('the prune of runs older than a day answered', async () => {
        const m = await historyMessage();
        return m.text.startsWith('prune:') ? m : null;
    }, 10000);
    check(none.text === 'prune: no runs started more than 1 day ago: nothing to remove' && none.cls === 'ok' &&
        dialogs.length === 0 && (await history()).length === 1, `prune older than 1 day: ${JSON.stringify(none)}, ` +
        `dialogs ${JSON.stringify(dialogs)}`);
    await pruneWith('', '');
    const noRule = await historyMessage();
    check(noRule.cls === 'bad' && noRule.text === 'prune: give the number of newest runs to keep, or an age in days, or both',
        `prune without a rule: ${JSON.stringify(noRule)}`);
    answer = false;
    await pruneWith('0', '');
    await until('the prune confirmation', () => dialogs.length === 1, 10000);
    await sleep(300);
    check(dialogs[0] === `Remove 1 run (runs all but the newest 0: #${runId}) from the history?` &&
        (await history()).length === 1, `prune dismissed: '${dialogs[0]}'`);
    answer = undefined;
    await pruneWith('0', '');
    const pruned = await until('the history pruned', async () =>
        ((await page.$eval('#history-total', (e) => e.textContent)) === 'no run recorded' ? historyMessage() : null),
    10000);
    const afterPrune = await page.evaluate(() => fetch('/api/v1/runs').then((r) => r.json()));
    check(pruned.text === `pruned 1 run: #${runId}` && afterPrune.total === 0 && (await history()).length === 0,
        `after the prune: ${JSON.stringify(pruned)}, GET /api/v1/runs total ${afterPrune.total}`);
    ok(`prune: older than 1 day '${none.text}'; keep 0 asked '${dialogs[0]}', dismissed kept it; ` +
        `confirmed '${pruned.text}', the list empty`);

    // Signed in to a serve with --http-tokens: Sign out ends the session, back to the sign-in.
    const tokens = join(h.dir, 'tokens');
    const made = spawnSync(join(BIN, 'iofleet'), ['serve', 'token', 'new', '--http-tokens', tokens,
        '--scope', 'viewer', '--name', 'eve'], { encoding: 'utf8' });
    check(made.status === 0, `iofleet serve token new: ${made.status} ${made.stderr}`);
    const serve2 = h.start(join(BIN, 'iofleet'), ['serve', '--http', '127.0.0.1:0', '--listen',
        '127.0.0.1:0', '--insecure', '--db', join(h.dir, 'runs2.db'), '--http-tokens', tokens],
    'iofleet serve --http-tokens');
    const m2 = await h.waitFor(serve2, /API on (http:\/\/127\.0\.0\.1:\d+)\/api\/v1\//);
    const signed = await browser.newPage();
    await signed.goto(`${m2[1]}/`);
    await signed.type('#token', made.stdout.trim());
    await Promise.all([signed.waitForNavigation(), signed.click('#signin button[type="submit"]')]);
    await signed.waitForSelector('#signout-button', { timeout: 10000 });
    // A viewer's prune: refused by the API, as its delete, the answer shown.
    await signed.$eval('#prune-keep', (e) => { e.value = '0'; });
    await signed.click('#prune-button');
    const viewerPrune = await until('the viewer\'s prune answered', () => signed.$eval('#history-message',
        (e) => (e.className === 'bad' ? e.textContent : null)), 10000);
    ok(`a viewer's prune: '${viewerPrune}'`);
    await Promise.all([signed.waitForNavigation(), signed.click('#signout-button')]);
    await signed.waitForSelector('#signin', { timeout: 10000 });
    const version = await signed.evaluate(() => fetch('/api/v1/version').then((r) => r.status));
    check(version === 401, `GET /api/v1/version after the sign-out: ${version}`);
    ok('sign-out: signed in with a token, Sign out shows the sign-in page again, the API answers 401');
});
