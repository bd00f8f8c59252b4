"""A real headless Chromium driven over the DevTools protocol through a pipe (no port, no network).

Chromium's ``--remote-debugging-pipe`` reads protocol messages on file descriptor 3 and writes
them on 4, each a JSON object ended by a NUL byte. This needs nothing beyond the standard library
and Debian's ``chromium`` package; no browser is downloaded.

Usage::

    with Browser() as b:
        page = b.open("file:///tmp/REPORT.html", width=1366, height=768)
        page.evaluate("document.title")
        page.screenshot(path)
        page.console_errors    # console.error / uncaught exceptions / failed loads
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
         "--disable-default-apps", "--mute-audio", "--hide-scrollbars", "--remote-debugging-pipe"]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless Chromium process; :meth:`open` gives a :class:`Page`."""

    def __init__(self, executable: str | None = None, timeout: float = 60.0):
        self.executable = executable or find_chromium()
        if not self.executable:
            raise BrowserError("chromium not found")
        self.timeout = timeout
        self._next = 0
        self._replies: dict[int, queue.Queue] = {}
        self._events: "queue.Queue[dict]" = queue.Queue()
        self._lock = threading.Lock()

    def __enter__(self) -> "Browser":
        self.profile = tempfile.mkdtemp(prefix="rankbench-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # move the child's ends above 10 so bash can place them on 3 and 4 without clashes
        r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
        os.close(to_child_r)
        os.close(from_child_w)
        bash = shutil.which("bash") or "/bin/bash"  # dash cannot redirect descriptors above 9
        cmd = [bash, "-c", f'exec "$@" 3<&{r} 4>&{w}', "bash", self.executable, *FLAGS,
               f"--user-data-dir={self.profile}", "about:blank"]
        self.log = Path(self.profile) / "chromium.log"  # its stderr (dbus noise, crashes)
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(cmd, pass_fds=(r, w), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        os.close(r)
        os.close(w)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    # ------------------------------------------------------------------ the protocol
    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_child, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    q = self._replies.get(msg["id"])
                    if q is not None:
                        q.put(msg)
                else:
                    self._events.put(msg)

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float | None = None) -> dict:
        with self._lock:
            self._next += 1
            mid = self._next
            self._replies[mid] = q = queue.Queue()
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        try:
            reply = q.get(timeout=timeout or self.timeout)
        except queue.Empty:
            tail = self.log.read_text(errors="replace")[-500:] if self.log.exists() else ""
            raise BrowserError(f"{method}: no reply within {timeout or self.timeout} s "
                               f"(chromium exit code {self.proc.poll()}; its log ends: {tail})") from None
        finally:
            self._replies.pop(mid, None)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def events(self, timeout: float):
        """Events as they arrive until ``timeout`` seconds pass without one."""
        while True:
            try:
                yield self._events.get(timeout=timeout)
            except queue.Empty:
                return

    def open(self, url: str, width: int = 1366, height: int = 768) -> "Page":
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log"):
            page.send(f"{domain}.enable")
        page.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        page.navigate(url)
        return page


class Page:
    """One tab: navigation, script evaluation, screenshots, and what its console said."""

    def __init__(self, browser: Browser, session: str):
        self.browser, self.session = browser, session
        self.console_errors: list[str] = []
        self.console: list[str] = []

    def send(self, method: str, params: dict | None = None) -> dict:
        return self.browser.send(method, params, self.session)

    def _note(self, ev: dict) -> None:
        if ev.get("sessionId") != self.session:
            return
        method, p = ev.get("method"), ev.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            self.console.append(f"{p.get('type')}: {text}")
            if p.get("type") in ("error", "assert"):
                self.console_errors.append(text)
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.console_errors.append(d.get("exception", {}).get("description") or d.get("text", "exception"))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            self.console_errors.append(f"{e.get('source')}: {e.get('text')} {e.get('url', '')}".strip())

    def navigate(self, url: str, timeout: float = 60.0) -> None:
        self.send("Page.navigate", {"url": url})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for ev in self.browser.events(timeout=max(0.1, deadline - time.monotonic())):
                self._note(ev)
                if ev.get("method") == "Page.loadEventFired" and ev.get("sessionId") == self.session:
                    self.settle()
                    return
            break
        raise BrowserError(f"{url}: no load event within {timeout} s")

    def settle(self, quiet: float = 0.5) -> None:
        """Collect console events until the page has been quiet for ``quiet`` seconds."""
        for ev in self.browser.events(timeout=quiet):
            self._note(ev)

    def evaluate(self, expression: str):
        """The JSON value of a JavaScript expression (awaited if it is a promise)."""
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in res:
            raise BrowserError(f"{expression[:60]}...: {res['exceptionDetails'].get('text')}")
        self.settle(0.1)
        return res["result"].get("value")

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        params = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            w, h = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params["clip"] = {"x": 0, "y": 0, "width": w, "height": min(h, 16000), "scale": 1}
        data = self.send("Page.captureScreenshot", params)["data"]
        path = Path(path)
        path.write_bytes(base64.b64decode(data))
        return path
