// SPDX-License-Identifier: Apache-2.0
// tests/browser/lib/harness.mjs - what the browser tests share (not a test itself): a
// temporary directory, the real binaries started and stopped by PID (also when a check
// fails), Debian's chromium launched through puppeteer-core, screenshots, and the test's
// outcome as ctest reads it (0 passed, 1 failed, 77 skipped, with the reason).
//
// Environment (tests/CMakeLists.txt sets it): IOF_BIN (iofleet and dynamo), IOF_TEST_TMPDIR,
// IOF_BROWSER_DIR (where scripts/test's browser stage ran `npm ci`: node_modules/ holds
// puppeteer-core; screenshots/ is written there), IOF_CHROMIUM (default /usr/bin/chromium).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const env = process.env;
export const BIN = env.IOF_BIN || join(import.meta.dirname ?? '.', '../../../build/bin');
const BROWSER_DIR = env.IOF_BROWSER_DIR || join(BIN, '../../build-browser');
const CHROMIUM = env.IOF_CHROMIUM || '/usr/bin/chromium';

class Skip extends Error {}

export function skip(why) {
    throw new Skip(why);
}

export function check(cond, what) {
    if (!cond)
        throw new Error(what);
}

export function ok(what) {
    console.log(`ok: ${what}`);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls fn() every step ms until it returns a truthy value, which it returns; fails naming
// what after ms.
export async function until(what, fn, ms = 60000, step = 100) {
    const end = Date.now() + ms;
    for (;;) {
        const v = await fn();
        if (v)
            return v;
        if (Date.now() > end)
            throw new Error(`${what}: not within ${ms / 1000} s`);
        await sleep(step);
    }
}

// One test: a temporary directory, the processes it starts and the browser, all cleaned
// up whatever happens.
export class Harness {
    constructor(name) {
        this.name = name;
        const base = env.IOF_TEST_TMPDIR || '/tmp';
        mkdirSync(base, { recursive: true });
        this.dir = mkdtempSync(join(base, `br-${name}.`));
        this.children = [];
        this.hooks = [];
        this.browser = null;
        this.shots = join(BROWSER_DIR, 'screenshots');
    }

    // fn() runs at cleanup, before the children are stopped.
    onCleanup(fn) {
        this.hooks.push(fn);
    }

    // Writes NAME in the test's directory; returns its path.
    file(name, text) {
        const path = join(this.dir, name);
        writeFileSync(path, text);
        return path;
    }

    // Starts prog (a path) with args; its stderr is kept (child.err) and every line of it
    // is offered to the waiters of waitFor(). Stopped by PID in cleanup().
    start(prog, args, label = prog) {
        // setpriv execs prog with a parent-death signal: if this process is killed (a ctest
        // timeout), the kernel ends its children too instead of leaving them running.
        const child = spawn('setpriv', ['--pdeathsig', 'KILL', prog, ...args], {
            cwd: this.dir,
            env: { ...env, XDG_DATA_HOME: join(this.dir, 'xdg-data') },
            stdio: ['ignore', 'pipe', 'pipe'],
        });
        child.label = label;
        child.err = '';
        child.out = '';
        child.exited = new Promise((resolve) =>
            child.on('exit', (code, sig) => {
                child.code = code ?? sig;
                resolve(child.code);
            }));
        child.stdout.on('data', (d) => (child.out += d));
        child.stderr.on('data', (d) => (child.err += d));
        this.children.push(child);
        return child;
    }

    // The first match of re in child's stderr, waiting at most ms; fails with its stderr.
    async waitFor(child, re, ms = 60000) {
        return until(`${child.label}: no line matching ${re} in its stderr:\n${child.err}`,
            () => child.err.match(re) || (child.code !== undefined && fail(child, re)), ms, 50);
    }

    // dynamo --listen on an ephemeral loopback port, its workdir in the test's directory:
    // resolves to its endpoint (127.0.0.1:PORT).
    async dynamo(name, ...args) {
        const d = this.start(join(BIN, 'dynamo'), ['--listen', '127.0.0.1:0', '--insecure',
            '--workdir', join(this.dir, `${name}-work`), ...args], `dynamo ${name}`);
        const m = await this.waitFor(d, /listening on (127\.0\.0\.1:\d+)/);
        return m[1];
    }

    // iofleet run PLAN --http 0 with args: resolves to {run, url} (the live view's URL).
    async runLive(plan, ...args) {
        const run = this.start(join(BIN, 'iofleet'), ['run', plan, '--http', '0', ...args],
            'iofleet run');
        const m = await this.waitFor(run, /live view on (http:\/\/127\.0\.0\.1:\d+\/)/);
        return { run, url: m[1] };
    }

    // Debian's chromium through puppeteer-core, over a pipe (no debugging port), headless;
    // extra chromium flags in args.
    async launch(args = []) {
        if (!existsSync(CHROMIUM))
            skip(`${CHROMIUM} not installed (Debian package chromium; scripts/deps browser)`);
        let puppeteer;
        try {
            puppeteer = createRequire(join(BROWSER_DIR, 'package.json'))('puppeteer-core');
        } catch (e) {
            skip(`puppeteer-core not installed in ${BROWSER_DIR}/node_modules ` +
                `(IOF_STAGES=browser scripts/test installs it): ${e.code || e.message}`);
        }
        this.browser = await puppeteer.launch({
            executablePath: CHROMIUM,
            headless: true,
            pipe: true,
            args: ['--no-sandbox', '--disable-gpu', '--no-proxy-server',
                '--disable-background-networking', '--disable-component-update',
                '--disable-sync', '--disable-extensions', '--mute-audio', ...args],
            userDataDir: join(this.dir, 'chromium-profile'),
            protocolTimeout: 60000,
        });
        const proc = this.browser.process();
        if (proc)
            this.children.push(Object.assign(proc, { label: 'chromium' }));
        return this.browser;
    }

    // A new page of the launched browser, width x height, that records from its first
    // script on every page error (in errors) and CSP violation (in window.__csp).
    async watchedPage(width, height) {
        const page = await this.browser.newPage();
        const errors = [];
        page.on('pageerror', (e) => errors.push(String(e)));
        await page.evaluateOnNewDocument(() => {
            window.__csp = [];
            document.addEventListener('securitypolicyviolation',
                (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
        });
        await page.setViewport({ width, height });
        return { page, errors };
    }

    // A full-page screenshot as screenshots/TEST-NAME.png.
    async shot(page, name) {
        mkdirSync(this.shots, { recursive: true });
        const path = join(this.shots, `${this.name}-${name}.png`);
        await page.screenshot({ path, fullPage: true });
        return path;
    }

    async cleanup() {
        if (this.browser)
            await Promise.race([this.browser.close().catch(() => {}), sleep(10000)]);
        for (const fn of this.hooks)
            try {
                await fn();
            } catch {
                // cleaning up: go on with the rest
            }
        // Each child by its PID: SIGTERM, then SIGKILL if it has not ended within 5 s.
        const alive = (c) => c.pid && c.exitCode === null && c.signalCode === null;
        const kill = (c, sig) => {
            try {
                process.kill(c.pid, sig);
            } catch {
                // already gone
            }
        };
        for (const c of this.children.filter(alive))
            kill(c, 'SIGTERM');
        await until('children ending', () => !this.children.some(alive), 5000, 50).catch(() => {});
        for (const c of this.children.filter(alive))
            kill(c, 'SIGKILL');
        if (env.IOF_KEEP_TMP)
            console.log(`kept ${this.dir}`);
        else
            rmSync(this.dir, { recursive: true, force: true });
    }
}

function fail(child, re) {
    throw new Error(`${child.label} exited ${child.code} before printing ${re}:\n${child.err}`);
}

// Runs body(harness) as the test NAME: prints ok/FAIL/SKIP lines and exits 0, 1 or 77
// after the cleanup.
export async function test(name, body) {
    const h = new Harness(name);
    let rc = 0;
    const onSignal = async (sig) => {
        console.error(`FAIL: ${sig}`);
        await h.cleanup();
        process.exit(1);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
        await body(h);
    } catch (e) {
        if (e instanceof Skip) {
            console.log(`SKIP: ${e.message}`);
            rc = 77;
        } else {
            console.error(`FAIL: ${e.stack || e}`);
            for (const c of h.children)
                if (c.err)
                    console.error(`--- ${c.label} stderr (last 2000 bytes):\n${c.err.slice(-2000)}`);
            rc = 1;
        }
    } finally {
        await h.cleanup();
    }
    process.exit(rc);
}
