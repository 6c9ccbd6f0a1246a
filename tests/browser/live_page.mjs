// SPDX-License-Identifier: Apache-2.0
// tests/browser/live_page.mjs - the live page of `iofleet run --http` in Debian's chromium
// during a real run (a dynamo agent on loopback, sync I/O on a file in the test's
// directory, three tests of 4 s): its first HTML holds the run's state (read with
// JavaScript off: no blank page); the figures change as intervals arrive; finished tests
// stay on the page, also after the run; no sideways scroll at 390 px; names from the plan
// with <script> and an <img onerror> in them shown as text, nothing of them run; a
// Content-Security-Policy that blocks inline script. Screenshots of each state.
import { check, ok, sleep, test, until } from './lib/harness.mjs';
import { BIN } from './lib/harness.mjs';
import { join } from 'node:path';

const SCRIPT = '<script>window.__pwned=1</script>';
const IMG = '"><img src=x onerror="window.__pwned=1">';
const line = (size, read) => ({ size, read, random: 100, burst: 16, delay: '1ms' });
const PLAN = {
    name: `live ${SCRIPT} ${IMG}`,
    run: { ramp: '1s', duration: '4s', interval: '1s' },
    specs: [
        { name: `4k ${SCRIPT}`, lines: [line('4k', 70)] },
        { name: `8k ${IMG}`, lines: [line('8k', 100)] },
        { name: `16k ${SCRIPT}${IMG}`, lines: [line('16k', 50)] },
    ],
    workers: [{
        name: `group ${SCRIPT} ${IMG}`, count: 1, engine: 'sync', queue_depth: 1,
        // No '/' in a file name: the target's name carries the opening tag and the <img>.
        targets: [{ path: `t <script>window.__pwned=1 ${IMG}.dat`, size: '16m' }],
    }],
};

// The page as a user sees it: the ids the page documents (docs/monitoring.md).
function read() {
    const t = (id) => document.getElementById(id)?.textContent ?? null;
    const rows = (id) => [...document.querySelectorAll(`#${id} tr`)].map(
        (tr) => [...tr.cells].map((td) => td.textContent));
    return {
        plan: t('plan'), state: t('state'), test: t('test'), spec: t('spec'),
        interval: t('interval'), nodes: rows('nodes'), done: rows('done'),
        text: document.body.innerText, imgs: document.images.length,
        pwned: typeof window.__pwned,
    };
}

test('live_page', async (h) => {
    // An agent's name cannot carry markup: dynamo refuses it before listening.
    const bad = h.start(join(BIN, 'dynamo'), ['--listen', '127.0.0.1:0', '--insecure',
        '--name', SCRIPT], 'dynamo --name <script>');
    const rc = await bad.exited;
    check(rc === 2 && /name/.test(bad.err), `dynamo --name '${SCRIPT}' exited ${rc}: ${bad.err}`);
    ok(`dynamo refuses an agent name with markup: ${bad.err.trim().split('\n')[0]}`);

    // The browser first (its start is the slow part on a busy machine), then the run.
    const browser = await h.launch();
    const agent = await h.dynamo('node1', '--name', 'node1');
    const plan = h.file('plan.json', JSON.stringify(PLAN));
    const { url } = await h.runLive(plan, '--agent', agent, '--insecure', '--no-db', '--quiet',
        '--http-linger', '120');
    await until('the run\'s first test', async () => {
        const r = await fetch(`${url}api/run`).then((x) => x.json()).catch(() => null);
        return r?.test;
    });

    // The first HTML, JavaScript off: the run's state without any script or event.
    const bare = await browser.newPage();
    await bare.setJavaScriptEnabled(false);
    await bare.setViewport({ width: 1000, height: 700 });
    const res = await bare.goto(url);
    check(res.status() === 200, `GET ${url}: ${res.status()}`);
    const csp = res.headers()['content-security-policy'];
    const first = await bare.evaluate(read);
    check(first.state === 'running', `the first HTML's state is '${first.state}', not running`);
    check(/^[123]\/3$/.test(first.test), `the first HTML's test is '${first.test}'`);
    check(first.plan === PLAN.name, `the first HTML's plan is '${first.plan}', not the plan's name`);
    check(first.nodes.length === 2 && first.nodes[1][0] === 'node1',
        `the first HTML's nodes: ${JSON.stringify(first.nodes)}`);
    check(!/connecting/.test(first.text), 'the first HTML says connecting');
    check(first.imgs === 0, `the first HTML has ${first.imgs} <img> (a name's markup)`);
    ok(`the first HTML, no script run: ${first.state}, test ${first.test} '${first.spec}', ` +
        `interval ${first.interval}, rows ${first.nodes.map((r) => r[0]).join(', ')} ` +
        `(${await h.shot(bare, 'first-html')})`);
    await bare.close();

    // The page as it runs: every CSP violation and page error recorded from the start.
    const { page, errors } = await h.watchedPage(1000, 700);
    await page.goto(url);

    // The figures change as intervals arrive: the ALL row over three intervals.
    const seen = new Map();
    await until('three intervals with figures', async () => {
        const s = await page.evaluate(read);
        if (s.state === 'running' && s.nodes[0]?.[2] && s.nodes[0][2] !== '-')
            seen.set(`${s.test} ${s.interval}`, s.nodes[0][2]);
        return seen.size >= 3;
    }, 60000, 200);
    const iops = new Set(seen.values());
    check(iops.size >= 2, `the ALL row's IOPS did not change: ${JSON.stringify([...seen])}`);
    ok(`the figures change between intervals: ${[...seen].map(([k, v]) => `${k}: ${v}`).join('; ')} ` +
        `(${await h.shot(page, 'running')})`);

    // A finished test stays while the next runs, and all of them once the run is over.
    const mid = await until('test 2 or 3 running with test 1 listed', async () => {
        const s = await page.evaluate(read);
        return s.state === 'running' && s.test !== '1/3' && s.done.length >= 1 &&
            s.done[0][0] === '1' ? s : null;
    }, 60000, 200);
    check(mid.done[0][1] === PLAN.specs[0].name && mid.done[0][2] === 'ok',
        `test 1's row while test ${mid.test} runs: ${JSON.stringify(mid.done[0])}`);
    const end = await until('the run over', async () => {
        const s = await page.evaluate(read);
        return s.state !== 'running' && s.done.length === 3 ? s : null;
    }, 60000, 200);
    check(end.done.map((r) => r[1]).join('|') === PLAN.specs.map((s) => s.name).join('|') &&
        end.done.every((r) => r[2] === 'ok' && r[3] !== '-'),
    `the tests after the run: ${JSON.stringify(end.done)}`);
    ok(`the finished tests stay: test 1 while test ${mid.test} runs, all 3 after the run ` +
        `(${end.state}) (${await h.shot(page, 'done')})`);

    // Names from the plan as text, nothing of them run or loaded.
    for (const name of [PLAN.name, ...PLAN.specs.map((s) => s.name)])
        check(end.text.includes(name), `the page does not show '${name}' as text`);
    check(end.imgs === 0, `the page has ${end.imgs} <img> (a name's markup)`);
    check(end.pwned === 'undefined', 'a name\'s script ran: window.__pwned is set');
    check(errors.length === 0, `page errors: ${errors.join('; ')}`);
    ok('the plan\'s and specs\' names with <script> and <img onerror> are shown as text, ' +
        'window.__pwned stays undefined, no page error');

    // A phone: 390 CSS px wide, no sideways scroll.
    await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
    await sleep(300);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    check(width <= 390, `the page is ${width} px wide on a 390 px phone`);
    ok(`no sideways scroll at 390 px: scrollWidth ${width} (${await h.shot(page, 'phone')})`);

    // The CSP: present, and inline script (a <script> or an event handler added to the
    // page, as a name that slipped through escaping would be) does not run.
    check(csp, 'no Content-Security-Policy header on the page');
    const inline = await page.evaluate(async () => {
        const s = document.createElement('script');
        s.textContent = 'window.__inline = 1';
        document.body.appendChild(s);
        document.body.insertAdjacentHTML('beforeend',
            '<img src="data:," onload="window.__handler = 1">');
        await new Promise((r) => setTimeout(r, 300));
        return { script: typeof window.__inline, handler: typeof window.__handler,
            violations: window.__csp };
    });
    check(inline.script === 'undefined',
        `an inline <script> added to the page ran: the CSP '${csp}' allows inline script`);
    check(inline.handler === 'undefined',
        `an inline event handler added to the page ran: the CSP '${csp}' allows it`);
    check(inline.violations.filter((v) => v.startsWith('script-src')).length >= 2,
        `no script-src violations reported: ${JSON.stringify(inline.violations)}`);
    ok(`Content-Security-Policy '${csp}' blocks inline script: ` +
        `${inline.violations.join(', ')}`);
});
