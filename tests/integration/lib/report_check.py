#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Loads an iofleet HTML report in headless Chromium and checks it.

usage: report_check.py REPORT.html OUT.json [SHOTDIR]

Drives Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe:
no port, no network) and writes OUT.json:
  {"console_errors": [...], "requests": [...], "canvases": [{"id", "points",
   "painted"}], "ratios": [{"test", "metric", "run", "ratio"}], "sections": [...],
   "chartjs": "Chart.js 3.9.1"}
requests lists every request the page made besides loading itself (file://,
data:, http: or anything else). With SHOTDIR, one PNG per report section is
written there (SECTION.png). Exits 0 when it could load the page; the checks
on the figures are the caller's.
"""
import base64
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Cdp:
    def __init__(self, argv):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # Chromium's ends above 4, so placing them at 3 and 4 clobbers neither.
        for name in ("to_chrome_r", "from_chrome_w"):
            fd = locals()[name]
            high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
            os.close(fd)
            if name == "to_chrome_r":
                to_chrome_r = high
            else:
                from_chrome_w = high

        def child():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.proc = subprocess.Popen(argv, pass_fds=(3, 4, to_chrome_r, from_chrome_w),
                                     preexec_fn=child, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        want = self.next_id
        deadline = time.time() + 60
        while time.time() < deadline:
            m = self.read()
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)
        raise RuntimeError(f"{method}: no answer")

    def read(self):
        while b"\0" not in self.buf:
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


PAGE_JS = r"""
(() => {
  const canvases = [...document.querySelectorAll('canvas')].map(c => {
    const ctx = c.getContext('2d');
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    let painted = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) painted++;
    return {id: c.id, points: c.dataset.points === undefined ? null : Number(c.dataset.points),
            painted: painted, width: c.width, height: c.height};
  });
  const ratios = [...document.querySelectorAll('td.ratio[data-ratio]')].map(td => ({
    test: td.closest('tr').dataset.test, metric: td.dataset.metric,
    run: Number(td.dataset.run), ratio: Number(td.dataset.ratio),
    cls: td.classList.contains('better') ? 'better' : td.classList.contains('worse') ? 'worse' : 'same'}));
  const sections = [...document.querySelectorAll('section')].map(s => {
    const r = s.getBoundingClientRect();
    return {id: s.id, x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height};
  });
  const v = document.getElementById('chartjs-version');
  return JSON.stringify({ready: document.body.dataset.ready === '1', canvases, ratios, sections,
                         chartjs: v ? v.textContent : null});
})()
"""


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    report, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    shots = sys.argv[3] if len(sys.argv) > 3 else None
    exe = chromium()
    if not exe:
        print("chromium not installed", file=sys.stderr)
        return 77
    profile = tempfile.mkdtemp(prefix="iof-chromium-")
    argv = [exe, "--headless=new", "--remote-debugging-pipe", "--no-sandbox",
            "--disable-gpu", "--no-first-run", "--no-default-browser-check",
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-extensions", "--mute-audio",
            f"--user-data-dir={profile}", "--window-size=1280,900", "about:blank"]
    cdp = Cdp(argv)
    result = {"console_errors": [], "requests": []}
    try:
        target = cdp.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = cdp.send("Target.attachToTarget",
                           {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            cdp.send(f"{domain}.enable", session=session)
        cdp.send("Emulation.setDeviceMetricsOverride",
                 {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                 session=session)
        url = "file://" + report
        cdp.send("Page.navigate", {"url": url}, session=session)
        deadline = time.time() + 60
        loaded = False
        while time.time() < deadline and not loaded:
            m = cdp.read()
            cdp.events.append(m)
            loaded = m.get("method") == "Page.loadEventFired"
        if not loaded:
            raise RuntimeError("the page did not load")
        time.sleep(0.5)
        res = cdp.send("Runtime.evaluate", {"expression": PAGE_JS, "returnByValue": True},
                       session=session)
        page = json.loads(res["result"]["value"])
        result.update(page)
        if shots:
            os.makedirs(shots, exist_ok=True)
            for s in page["sections"]:
                if not s["id"] or s["h"] <= 0:
                    continue
                clip = {"x": s["x"], "y": s["y"], "width": s["w"],
                        "height": min(s["h"], 1400), "scale": 1}
                png = cdp.send("Page.captureScreenshot",
                               {"format": "png", "clip": clip, "captureBeyondViewport": True},
                               session=session)["data"]
                with open(os.path.join(shots, s["id"] + ".png"), "wb") as f:
                    f.write(base64.b64decode(png))
        for m in cdp.events:
            meth, p = m.get("method"), m.get("params", {})
            if meth == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                result["console_errors"].append(
                    " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
            elif meth == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                result["console_errors"].append(
                    d.get("exception", {}).get("description", d.get("text", "exception")))
            elif meth == "Log.entryAdded" and p["entry"]["level"] == "error":
                result["console_errors"].append(p["entry"]["text"])
            elif meth == "Network.requestWillBeSent":
                if p["request"]["url"] != url:
                    result["requests"].append(p["request"]["url"])
    finally:
        cdp.close()
        shutil.rmtree(profile, ignore_errors=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
