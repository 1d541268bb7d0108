"""A page in headless Chromium, driven over the Chrome DevTools Protocol: open a file,
press keys, evaluate JavaScript, take a screenshot, and list every request it made.

    with ChromiumPage.open(path, size=(1400, 860)) as page:
        page.press("ArrowRight")
        page.evaluate("replay.caption()")

Chromium is Debian's `chromium` (scripts/system_deps.sh --test installs it); the
websocket client is the `websocket-client` package (the `test` extra).
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# What Input.dispatchKeyEvent needs to make a real keydown: key, code and key code.
KEYS = {
    "Space": (" ", "Space", 32),
    "ArrowLeft": ("ArrowLeft", "ArrowLeft", 37),
    "ArrowRight": ("ArrowRight", "ArrowRight", 39),
    "Home": ("Home", "Home", 36),
    "End": ("End", "End", 35),
}
START_LIMIT_S = 60.0


def browser() -> str | None:
    """The Chromium on PATH, if any."""
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


class ChromiumPage:
    """One headless Chromium with one page, spoken to over its DevTools websocket."""

    def __init__(self, process: subprocess.Popen, profile: str, socket: Any) -> None:
        self.process, self.profile, self.socket = process, profile, socket
        self._ids = itertools.count(1)
        self.requests: list[str] = []  # every URL the page asked for
        self.errors: list[str] = []  # uncaught exceptions and console errors

    @classmethod
    @contextlib.contextmanager
    def open(cls, path: Path, size: tuple[int, int] = (1400, 860)):
        """Start Chromium, load `path` in it, and end it all on leaving."""
        import websocket  # the test extra's websocket-client

        exe = browser()
        if exe is None:
            raise RuntimeError("no chromium on PATH")
        profile = tempfile.mkdtemp(prefix="autograd-viz-chromium-")
        process = subprocess.Popen(
            [
                exe,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                f"--window-size={size[0]},{size[1]}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        page = None
        try:
            port = _devtools_port(Path(profile), process)
            url = _page_socket(port)
            page = cls(process, profile, websocket.create_connection(url, timeout=30))
            page._load(path, size)
            yield page
        finally:
            if page is not None:
                with contextlib.suppress(Exception):
                    page.socket.close()
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
            shutil.rmtree(profile, ignore_errors=True)

    # ---- the protocol ---------------------------------------------------------------
    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its reply (events met meanwhile are noted)."""
        ident = next(self._ids)
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._note(message)

    def _note(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.exceptionThrown":
            self.errors.append(json.dumps(params.get("exceptionDetails", {}))[:500])
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append(str(params.get("args"))[:500])

    def _load(self, path: Path, size: tuple[int, int]) -> None:
        for domain in ("Page", "Runtime", "Network"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=size[0],
            height=size[1],
            deviceScaleFactor=1,
            mobile=False,
        )
        self.call("Page.navigate", url=path.resolve().as_uri())
        deadline = time.monotonic() + START_LIMIT_S
        while self.evaluate("document.readyState") != "complete" or not self.evaluate(
            "typeof window.replay === 'object'"
        ):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the page did not load: {self.errors}")
            time.sleep(0.05)

    # ---- what a test does -----------------------------------------------------------
    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON types)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def press(self, name: str) -> None:
        """Press and release a key, as a keyboard does."""
        key, code, number = KEYS[name]
        common = {"key": key, "code": code, "windowsVirtualKeyCode": number}
        text = {"text": key} if len(key) == 1 else {}
        self.call("Input.dispatchKeyEvent", type="keyDown", **common, **text)
        self.call("Input.dispatchKeyEvent", type="keyUp", **common)

    def click(self, selector: str) -> None:
        """Click the centre of the first element matching `selector`."""
        box = self.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left",
                clickCount=1,
            )  # fmt: skip

    def screenshot(self, path: Path) -> Path:
        """Save what the page shows as a PNG."""
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path


def _devtools_port(profile: Path, process: subprocess.Popen) -> int:
    """The port Chromium chose: the first line of DevToolsActivePort in its profile."""
    marker = profile / "DevToolsActivePort"
    deadline = time.monotonic() + START_LIMIT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chromium ended at start (exit {process.returncode})")
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int(marker.read_text(encoding="utf-8").splitlines()[0])
        time.sleep(0.05)
    raise RuntimeError("chromium wrote no DevToolsActivePort")


def _page_socket(port: int) -> str:
    """The websocket of Chromium's first page (the about:blank it opened)."""
    from urllib.request import urlopen

    deadline = time.monotonic() + START_LIMIT_S
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            with urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as reply:
                pages = [t for t in json.load(reply) if t.get("type") == "page"]
            if pages:
                return pages[0]["webSocketDebuggerUrl"]
        time.sleep(0.05)
    raise RuntimeError("chromium listed no page")


__all__ = ["ChromiumPage", "browser"]
