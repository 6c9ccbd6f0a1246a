#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Loads iofleet's live page in headless Chromium while a run is going on.

usage: live_page.py URL OUT.json

Drives Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe:
no debugging port), loads URL, reads the page's text twice (at load, then as
soon as the interval shown changes, at most 15 s later) and writes OUT.json:
  {"first": {...}, "second": {...}, "changed": bool,
   "console_errors": [...], "requests": [...], "offsite": [...]}
where each of first/second is {"interval", "test", "nodes", "text"} from the
DOM, requests lists every URL the page asked for and offsite those outside
URL's origin; "phone_scroll_width" is the page's width (scrollWidth) in a
390 px wide phone viewport. Exits 0 when it could load the page (the checks are the
caller's), 77 when chromium is not installed.
"""
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Cdp:
    """The DevTools protocol over fds 3 (commands in) and 4 (replies out)."""

    def __init__(self, argv):
        cmd_r, self.cmd_w = os.pipe()
        self.reply_r, reply_w = os.pipe()
        # Above 4, so that placing them at 3 and 4 in the child clobbers neither.
        cmd_r_hi = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10)
        reply_w_hi = fcntl.fcntl(reply_w, fcntl.F_DUPFD, 10)
        os.close(cmd_r)
        os.close(reply_w)

        def child():
            os.dup2(cmd_r_hi, 3)
            os.dup2(reply_w_hi, 4)

        self.proc = subprocess.Popen(argv, pass_fds=(3, 4, cmd_r_hi, reply_w_hi),
                                     preexec_fn=child, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(cmd_r_hi)
        os.close(reply_w_hi)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def read(self):
        while b"\0" not in self.buf:
            chunk = os.read(self.reply_r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + 60
        while time.time() < deadline:
            m = self.read()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)
        raise RuntimeError(f"{method}: no answer")

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


SNAPSHOT_JS = r"""
(() => {
  const t = id => { const e = document.getElementById(id); return e ? e.textContent : null; };
  const rows = [...document.querySelectorAll('#nodes tr')].map(tr => tr.textContent);
  return JSON.stringify({interval: t('interval'), test: t('test'), state: t('state'),
                         nodes: rows, text: document.body.innerText});
})()
"""


def snapshot(cdp, session):
    res = cdp.send("Runtime.evaluate", {"expression": SNAPSHOT_JS, "returnByValue": True},
                   session=session)
    return json.loads(res["result"]["value"])


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    url, out = sys.argv[1], sys.argv[2]
    exe = chromium()
    if not exe:
        print("chromium not installed", file=sys.stderr)
        return 77
    origin = urlsplit(url)
    profile = tempfile.mkdtemp(prefix="iof-chromium-")
    argv = [exe, "--headless=new", "--remote-debugging-pipe", "--no-sandbox",
            "--disable-gpu", "--no-first-run", "--no-default-browser-check",
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-extensions", "--mute-audio",
            f"--user-data-dir={profile}", "about:blank"]
    cdp = Cdp(argv)
    result = {"console_errors": [], "requests": [], "offsite": []}
    try:
        target = cdp.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = cdp.send("Target.attachToTarget",
                           {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            cdp.send(f"{domain}.enable", session=session)
        cdp.send("Page.navigate", {"url": url}, session=session)
        deadline = time.time() + 30
        loaded = False
        while time.time() < deadline and not loaded:
            m = cdp.read()
            cdp.events.append(m)
            loaded = m.get("method") == "Page.loadEventFired"
        if not loaded:
            raise RuntimeError("the page did not load")
        # The first event fills the page; wait for it, then for the next interval.
        first = snapshot(cdp, session)
        deadline = time.time() + 60  # generous: a busy machine; the run lasts until we are done
        while time.time() < deadline and first["interval"] in (None, "-", "0"):
            time.sleep(0.1)
            first = snapshot(cdp, session)
        second = first
        while time.time() < deadline and second["interval"] == first["interval"]:
            time.sleep(0.1)
            second = snapshot(cdp, session)
        result.update(first=first, second=second,
                      changed=second["interval"] != first["interval"] and
                      second["nodes"] != first["nodes"])
        # A phone: 390 CSS px wide; the page must not be wider (no sideways scroll).
        cdp.send("Emulation.setDeviceMetricsOverride",
                 {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True},
                 session=session)
        time.sleep(0.5)
        res = cdp.send("Runtime.evaluate",
                       {"expression": "document.documentElement.scrollWidth",
                        "returnByValue": True}, session=session)
        result["phone_scroll_width"] = res["result"]["value"]
        cdp.send("Runtime.evaluate", {"expression": "1"}, session=session)  # drain events
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
                u = p["request"]["url"]
                result["requests"].append(u)
                s = urlsplit(u)
                if (s.scheme, s.netloc) != (origin.scheme, origin.netloc):
                    result["offsite"].append(u)
    finally:
        cdp.close()
        shutil.rmtree(profile, ignore_errors=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
