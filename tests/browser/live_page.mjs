// SPDX-License-Identifier: Apache-2.0
// tests/browser/live_page.mjs - the live page of `iofleet run --http` in Debian's chromium
// during a real run: a dynamo agent on loopback, sync I/O on a file in the test's
// directory. The page loads, shows the plan and its node; screenshots of it.
import { join } from 'node:path';
import { check, ok, test, until } from './lib/harness.mjs';

const PLAN = {
    name: 'live page',
    run: { ramp: '0s', duration: '3s', interval: '1s' },
    specs: [
        { name: '4k random', lines: [{ size: '4k', read: 70, random: 100, burst: 16, delay: '1ms' }] },
        { name: '8k read', lines: [{ size: '8k', read: 100, random: 100, burst: 16, delay: '1ms' }] },
    ],
    workers: [{ count: 1, engine: 'sync', queue_depth: 1, targets: [{ path: 't.dat', size: '16m' }] }],
};

test('live_page', async (h) => {
    const agent = await h.dynamo('node1', '--name', 'node1');
    const plan = h.file('plan.json', JSON.stringify(PLAN));
    const { url } = await h.runLive(plan, '--agent', agent, '--insecure', '--no-db', '--quiet',
        '--http-linger', '60');
    const browser = await h.launch();
    const page = await browser.newPage();
    await page.setViewport({ width: 1000, height: 700 });
    const res = await page.goto(url);
    check(res.status() === 200, `GET ${url}: ${res.status()}`);
    const text = await page.$eval('#plan', (e) => e.textContent);
    check(text === PLAN.name, `the page names plan '${text}', not '${PLAN.name}'`);
    await until('the node row', () => page.$$eval('#nodes tr', (t) => t.length >= 2));
    ok(`the live page of ${url} loads with the plan and its node ` +
        `(${await h.shot(page, 'running')})`);
});
