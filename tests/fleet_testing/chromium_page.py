"""Open a local page in headless Chromium over the DevTools pipe and report what the page did.

``--remote-debugging-pipe`` speaks the DevTools protocol over file descriptors
3 (commands in) and 4 (replies out), NUL-terminated JSON, so no port is
opened. The page's exceptions, console errors, failed loads and any request
that leaves the file itself are collected as errors.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import struct
import subprocess
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",  # runs as root in CI
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageResult:
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    values: dict = field(default_factory=dict)
    screenshot: bytes = b""
    # A small copy of the screenshot, cheap to decode for the blank-page check.
    thumbnail: bytes = b""
    # From the navigation to the page's load event, in seconds.
    load_seconds: float = 0.0


class _Pipe:
    def __init__(self, process: subprocess.Popen, to_browser: int, from_browser: int, deadline: float):
        self.process, self.to_browser, self.from_browser = process, to_browser, from_browser
        self.deadline = deadline
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict] = []

    def _read_message(self) -> dict:
        while b"\0" not in self.buffer:
            if time.monotonic() > self.deadline:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read_message()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict:
        for number, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(number)
        while True:
            event = self._read_message()
            self.events.append(event)
            if event.get("method") == method:
                return self.events.pop()


def _collect_errors(events: list[dict], page_url: str, result: PageResult) -> None:
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            result.errors.append(f"exception: {params['exceptionDetails'].get('text')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            result.errors.append(f"console.{params['type']}: {params.get('args')}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            result.errors.append(f"log: {params['entry'].get('text')}")
        elif method == "Network.loadingFailed":
            result.errors.append(f"load failed: {params.get('errorText')}")
        elif method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            result.requests.append(url)
            if url != page_url and not url.startswith("data:"):
                result.errors.append(f"request outside the page: {url}")


def open_page(path: Path, expressions: dict[str, str], width: int = 1400, height: int = 1800,
              timeout: float = 60.0, screenshot: bool = True) -> PageResult:  # fmt: skip
    """Load ``path``, evaluate ``expressions`` (name -> JS), take a full-page PNG screenshot (unless told not to)."""
    chromium = find_chromium()
    if chromium is None:
        raise FileNotFoundError("chromium")
    page_url = path.resolve().as_uri()
    profile = path.parent / "chromium-profile"
    commands_read, commands_write = os.pipe()
    replies_read, replies_write = os.pipe()
    # The child must find the command pipe on fd 3 and the reply pipe on fd 4;
    # its ends move above 9 first so the dup2 calls cannot overwrite each other.
    child_read = fcntl.fcntl(commands_read, fcntl.F_DUPFD_CLOEXEC, 10)
    child_write = fcntl.fcntl(replies_write, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(commands_read)
    os.close(replies_write)
    process = subprocess.Popen(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(3, 4),
        preexec_fn=lambda: (os.dup2(child_read, 3), os.dup2(child_write, 4)),
    )
    os.close(child_read)
    os.close(child_write)
    pipe = _Pipe(process, commands_write, replies_read, time.monotonic() + timeout)
    result = PageResult()
    try:
        target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            pipe.call(f"{domain}.enable", session=session)
        pipe.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        navigated = time.monotonic()
        pipe.call("Page.navigate", {"url": page_url}, session=session)
        pipe.wait_for("Page.loadEventFired")
        result.load_seconds = time.monotonic() - navigated
        for name, expression in expressions.items():
            reply = pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=session)
            if "exceptionDetails" in reply:
                result.errors.append(f"evaluating {name}: {reply['exceptionDetails'].get('text')}")
            result.values[name] = reply.get("result", {}).get("value")
        if screenshot:
            metrics = pipe.call("Page.getLayoutMetrics", session=session)
            full_height = min(int(metrics["cssContentSize"]["height"]) + 1, 8000)

            def capture(scale: float) -> bytes:
                clip = {"x": 0, "y": 0, "width": width, "height": full_height, "scale": scale}
                shot = pipe.call("Page.captureScreenshot",
                                 {"format": "png", "captureBeyondViewport": True, "clip": clip}, session=session)
                return base64.b64decode(shot["data"])

            result.screenshot, result.thumbnail = capture(1), capture(0.25)
        _collect_errors([event for event in pipe.events if event.get("sessionId") == session], page_url, result)
        pipe.call("Browser.close")
    finally:
        os.close(commands_write)
        os.close(replies_read)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return result


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes) into rows of raw pixels."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    offset, idat, header = 8, b"", None
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        chunk = data[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG layout depth={depth} colour={colour} interlace={interlace}")
    step = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * step
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - step] if x >= step else 0
            up, corner = previous[x], previous[x - step] if x >= step else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[x] = (line[x] + predictor) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, step, rows
