// SPDX-License-Identifier: Apache-2.0
// tests/browser/serve_api.mjs - `iofleet serve`'s JSON API from Debian's chromium, with a
// dynamo agent dialled in (so a request that got through would start a run): the CSRF rules
// of docs/api.md as a browser meets them. Pages of another site (evil.example, a server of
// this test) cannot start or stop a run or check a plan: their forms get 415 with the JSON
// error body, a JSON fetch is stopped by the CORS preflight serve never grants, a
// text/plain one gets 415, and one whose Content-Type a browser flaw turned into JSON is
// still refused on its Origin (403). A page of a name rebound to 127.0.0.1 (DNS
// rebinding) is refused on its Host (403), reads nothing and starts nothing. Then a page of
// serve's own origin checks a plan, starts a run and stops it, and the history holds that
// one run only.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { BIN, check, ok, test, until } from './lib/harness.mjs';

const PLAN = {
    name: 'serve browser',
    run: { ramp: '1s', duration: '60s', interval: '1s' },
    specs: [{ name: '4k', lines: [{ size: '4k', read: 70, random: 100, burst: 16, delay: '1ms' }] }],
    workers: [{ count: 1, engine: 'sync', queue_depth: 1, targets: [{ path: 't.dat', size: '16m' }] }],
};

// Asserts that a response is serve's JSON error: status, the body's error.status equal to
// it and a message matching re. Returns the message.
function jsonError(what, r, status, re) {
    check(r.status === status, `${what}: status ${r.status}, expected ${status}: ${r.body}`);
    check(/^application\/json/.test(r.type || ''), `${what}: Content-Type '${r.type}', not JSON`);
    let e;
    try {
        e = JSON.parse(r.body).error;
    } catch {
        throw new Error(`${what}: not a JSON body: ${r.body}`);
    }
    check(e?.status === status && re.test(e.message || ''),
        `${what}: error body ${r.body}, expected status ${status} and a message matching ${re}`);
    return e.message;
}

// fetch() in the page: {status, type, body} or {failed: the error's text}.
async function pageFetch(page, url, init) {
    return page.evaluate(async (u, i) => {
        try {
            const r = await fetch(u, i);
            return { status: r.status, rtype: r.type, type: r.headers.get('content-type'),
                body: await r.text() };
        } catch (e) {
            return { failed: String(e) };
        }
    }, url, init);
}

test('serve_api', async (h) => {
    const serve = h.start(join(BIN, 'iofleet'), ['serve', '--http', '127.0.0.1:0', '--listen',
        '127.0.0.1:0', '--insecure', '--db', join(h.dir, 'runs.db')], 'iofleet serve');
    const m = await h.waitFor(serve, /API on (http:\/\/127\.0\.0\.1:(\d+))\/api\/v1\/.*agents on (127\.0\.0\.1:\d+)/);
    const [origin, port, listen] = [m[1], m[2], m[3]];
    const api = `${origin}/api/v1`;
    h.start(join(BIN, 'dynamo'), ['--manager', listen, '--insecure', '--name', 'node1',
        '--workdir', join(h.dir, 'node1-work')], 'dynamo node1');
    const get = async (path) => {
        const r = await fetch(`${api}${path}`);
        return { status: r.status, json: await r.json() };
    };
    await until('node1 connected to serve', async () =>
        (await get('/agents')).json.agents?.some((a) => a.name === 'node1' && a.status === 'connected'));
    const noRun = async (what) => {
        const cur = await get('/runs/current');
        const runs = await get('/runs');
        check(cur.status === 404 && runs.json.runs.length === 0,
            `${what}: a run was started: runs/current ${cur.status}, ${runs.json.runs.length} runs`);
    };

    // Another site: a server of this test, reached as http://evil.example:PORT.
    const evil = createServer((req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
        res.end('<!DOCTYPE html><title>another site</title><p>another site</p>');
    });
    await new Promise((r) => evil.listen(0, '127.0.0.1', r));
    h.onCleanup(() => evil.close());
    const evilOrigin = `http://evil.example:${evil.address().port}`;
    const browser = await h.launch([
        '--host-resolver-rules=MAP evil.example 127.0.0.1, MAP rebind.example 127.0.0.1']);
    const page = await browser.newPage();
    await page.goto(`${evilOrigin}/`);
    const plan = JSON.stringify(PLAN);

    // Its forms: each endpoint that changes something, each encoding a form can send.
    const forms = [
        ['/runs', 'application/x-www-form-urlencoded'],
        ['/runs/current/stop', 'text/plain'],
        ['/plans/check', 'multipart/form-data'],
    ];
    for (const [path, enctype] of forms) {
        await page.goto(`${evilOrigin}/`);
        const [nav] = await Promise.all([
            page.waitForNavigation(),
            page.evaluate((action, enc, body) => {
                const f = document.createElement('form');
                Object.assign(f, { method: 'POST', action, enctype: enc });
                const i = document.createElement('textarea');
                Object.assign(i, { name: 'plan', value: body });
                f.appendChild(i);
                document.body.appendChild(f);
                f.submit();
            }, `${api}${path}`, enctype, plan),
        ]);
        const r = { status: nav.status(), type: nav.headers()['content-type'], body: await nav.text() };
        const msg = jsonError(`a form of ${evilOrigin} posting ${enctype} to ${path}`, r, 415,
            /Content-Type: application\/json/);
        if (path === '/runs')
            ok(`a cross-site form's POST ${path} (${enctype}): 415 ${msg} ` +
                `(${await h.shot(page, 'cross-site-form')})`);
    }
    await noRun('after the cross-site forms');
    ok('cross-site forms (urlencoded, text/plain, multipart) to runs, stop and plans/check: 415, JSON error bodies');

    // Its scripts: a JSON POST needs a CORS preflight, which serve never grants; reading
    // the API is refused the same way; a text/plain POST (no preflight) is a 415.
    await page.goto(`${evilOrigin}/`);
    const json = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: plan };
    for (const path of ['/runs', '/runs/current/stop', '/plans/check']) {
        const r = await pageFetch(page, `${api}${path}`, json);
        check(r.failed, `a JSON POST ${path} from ${evilOrigin} was let through: ${JSON.stringify(r)}`);
    }
    const read = await pageFetch(page, `${api}/agents`);
    check(read.failed, `${evilOrigin} read ${api}/agents: ${JSON.stringify(read)}`);
    const statuses = [];
    page.on('response', (r) => r.url().startsWith(api) && statuses.push(r.status()));
    const plain = await pageFetch(page, `${api}/runs`, { method: 'POST', mode: 'no-cors',
        headers: { 'Content-Type': 'text/plain' }, body: plan });
    check(plain.rtype === 'opaque', `a no-cors POST from ${evilOrigin}: ${JSON.stringify(plain)}`);
    await until('the no-cors POST\'s answer', () => statuses.length > 0, 10000);
    check(statuses[0] === 415, `serve answered a cross-site text/plain POST ${statuses[0]}`);
    await noRun('after the cross-site scripts');
    ok(`cross-site scripts: JSON POSTs blocked by the preflight (${read.failed}), ` +
        `the API unreadable, a no-cors text/plain POST answered 415 (opaque to the page)`);

    // A browser flaw that let a simple cross-site POST carry Content-Type: application/json
    // (request interception plays it): the Origin the browser sent still refuses it.
    const flawed = await browser.newPage();
    await flawed.goto(`${evilOrigin}/`);
    await flawed.setRequestInterception(true);
    const sent = [];
    flawed.on('request', (r) => {
        if (r.method() === 'POST' && r.url().startsWith(api)) {
            const headers = { ...r.headers(), 'content-type': 'application/json' };
            sent.push(headers);
            r.continue({ headers });
        } else {
            r.continue();
        }
    });
    const answers = [];
    flawed.on('response', (r) => r.url().startsWith(api) &&
        answers.push(r.text().then((body) => ({ status: r.status(),
            type: r.headers()['content-type'], body })).catch(() => ({ status: r.status() }))));
    await pageFetch(flawed, `${api}/runs`, { method: 'POST', mode: 'no-cors',
        headers: { 'Content-Type': 'text/plain' }, body: plan });
    await until('the rewritten POST\'s answer', () => answers.length > 0, 10000);
    const flawedAnswer = await answers[0];
    check(sent[0]?.origin === evilOrigin, `the POST carried Origin ${sent[0]?.origin}`);
    if (flawedAnswer.body !== undefined)
        jsonError(`a JSON POST with Origin ${evilOrigin}`, flawedAnswer, 403, /Origin '.*' is not this server/);
    else
        check(flawedAnswer.status === 403, `a JSON POST with Origin ${evilOrigin}: ${flawedAnswer.status}`);
    await noRun('after the POST with a foreign Origin');
    await flawed.close();
    ok(`a cross-site POST carrying application/json: 403 on its Origin ${evilOrigin}`);

    // DNS rebinding: a page of rebind.example:PORT, a name the attacker made resolve to
    // 127.0.0.1 after its page loaded; the page's requests are same-origin to the browser.
    // (The page is serve's answer at that origin, its CSP bypassed: what matters is the
    // origin its scripts run in.)
    const rebind = await browser.newPage();
    const rebindOrigin = `http://rebind.example:${port}`;
    await rebind.setBypassCSP(true);
    const nav = await rebind.goto(`${rebindOrigin}/api/v1/agents`);
    const rAgents = { status: nav.status(), type: nav.headers()['content-type'], body: await nav.text() };
    jsonError(`GET /api/v1/agents as ${rebindOrigin}`, rAgents, 403, /Host '.*' is not this server/);
    const rRun = await pageFetch(rebind, `${rebindOrigin}/api/v1/runs`, json);
    const hostMsg = jsonError(`POST /api/v1/runs as ${rebindOrigin}`, rRun, 403,
        /Host '.*' is not this server/);
    await noRun('after the rebound page');
    await rebind.close();
    ok(`a page of a name rebound to 127.0.0.1: reads and runs refused, 403 ${hostMsg}`);

    // serve's own origin, where its console page lives. The API's answers carry
    // `default-src 'none'`, which would stop this document's fetch(): bypassed here, as a
    // page of serve's with connect-src 'self' would allow it.
    const own = await browser.newPage();
    await own.setBypassCSP(true);
    const v = await own.goto(`${api}/version`);
    check(v.status() === 200, `GET ${api}/version: ${v.status()}`);
    const chk = await pageFetch(own, `${api}/plans/check`, json);
    check(chk.status === 200 && JSON.parse(chk.body).valid === true,
        `plans/check from serve's own origin: ${chk.status} ${chk.body}`);
    const form = await pageFetch(own, `${api}/plans/check`, { method: 'POST',
        headers: { 'Content-Type': 'text/plain' }, body: plan });
    jsonError('a text/plain POST from serve\'s own origin', form, 415, /Content-Type: application\/json/);
    const start = await pageFetch(own, `${api}/runs`, json);
    check(start.status === 202 && JSON.parse(start.body).state === 'started',
        `POST /runs from serve's own origin: ${start.status} ${start.body}`);
    const id = JSON.parse(start.body).id;
    await until('the run running', async () => {
        const c = await get('/runs/current');
        return c.status === 200 && c.json.state === 'running' && c.json.intervals > 0;
    });
    const stop = await pageFetch(own, `${api}/runs/current/stop`, { ...json, body: '{}' });
    check(stop.status === 202 && JSON.parse(stop.body).state === 'stopping',
        `POST /runs/current/stop from serve's own origin: ${stop.status} ${stop.body}`);
    await until('the run over', async () => (await get('/runs/current')).status === 404);
    const runs = (await get('/runs')).json.runs;
    check(runs.length === 1 && runs[0].id === id && runs[0].status === 'interrupted',
        `the history after: ${JSON.stringify(runs)}`);
    ok(`serve's own origin: plans/check 200, text/plain 415, run ${id} started (202) and ` +
        `stopped (202), the history holds it alone, ${runs[0].status}`);
});
