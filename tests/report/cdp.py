"""A minimal DevTools-protocol client over ``--remote-debugging-pipe``, for
opening a report in Debian's chromium and recording what the page did.

The pipe (fd 3 to the browser, fd 4 from it, NUL-separated JSON) avoids ports,
websockets and extra packages. :func:`open_page` loads a file URL and returns
the console messages, uncaught exceptions, log entries (CSP violations and failed
loads land there) and every network request the page made, and can evaluate
JavaScript and capture screenshots.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--mute-audio",
    "--remote-debugging-pipe",
]


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class Page:
    console: list[dict[str, Any]] = field(default_factory=list)
    exceptions: list[dict[str, Any]] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


class Browser:
    def __init__(self, timeout: float = 60.0) -> None:
        exe = chromium()
        if exe is None:
            raise RuntimeError("chromium is not installed")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="utf8fuzz-chromium-")
        r1, self._w = os.pipe()
        self._r, w2 = os.pipe()
        # Move the child's ends above fd 10 so that dup2 onto 3 and 4 cannot clobber
        # one of them before it is copied.
        to_child_r = fcntl.fcntl(r1, fcntl.F_DUPFD, 10)
        from_child_w = fcntl.fcntl(w2, fcntl.F_DUPFD, 10)
        os.close(r1)
        os.close(w2)
        # The browser reads commands on fd 3 and writes replies on fd 4.
        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=lambda: (os.dup2(to_child_r, 3), os.dup2(from_child_w, 4)),
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        want = self._id
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def wait_event(self, method: str, session: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method and e.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            m = self._read(deadline)
            if m.get("method") == method and m.get("sessionId") == session:
                return m
            self.events.append(m)

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.send("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._r, self._w):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)


class OpenPage:
    """A page in ``browser`` with console, log, exceptions and network recorded."""

    def __init__(self, browser: Browser, url: str, width: int = 1280) -> None:
        self.b = browser
        tid = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.s = browser.send("Target.attachToTarget",
                              {"targetId": tid, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable", session=self.s)
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                     session=self.s)
        browser.send("Page.navigate", {"url": url}, session=self.s)
        browser.wait_event("Page.loadEventFired", self.s)
        # Let late console messages and CSP reports arrive.
        self.eval("new Promise(r => setTimeout(r, 300))", wait=True)

    def eval(self, expr: str, wait: bool = False) -> Any:
        r = self.b.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                             "awaitPromise": wait}, session=self.s)
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluate failed: {r['exceptionDetails']}")
        return r.get("result", {}).get("value")

    def record(self) -> Page:
        p = Page()
        for e in self.b.events:
            if e.get("sessionId") != self.s:
                continue
            m, params = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled":
                p.console.append(params)
            elif m == "Runtime.exceptionThrown":
                p.exceptions.append(params)
            elif m == "Log.entryAdded":
                p.log.append(params.get("entry", {}))
            elif m == "Network.requestWillBeSent":
                p.requests.append(params.get("request", {}).get("url", ""))
        return p

    def screenshot(self, path: Path, element_id: str | None = None, height: int = 1400) -> None:
        top = 0
        if element_id:
            top = self.eval(f"document.getElementById({json.dumps(element_id)})"
                            ".getBoundingClientRect().top + window.scrollY")
        clip = {"x": 0, "y": top, "width": 1280, "height": height, "scale": 1}
        r = self.b.send("Page.captureScreenshot",
                        {"format": "png", "clip": clip, "captureBeyondViewport": True},
                        session=self.s)
        path.write_bytes(base64.b64decode(r["data"]))
