"""The mirror's HTTP server: a detached process bound to 127.0.0.1 with a pidfile.

Run as ``python -m rocm_fleet.lab.mirror.server --root WWW --port N``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import signal
import socket
import subprocess
import sys
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BIND = "127.0.0.1"
_MARKER = "rocm_fleet.lab.mirror.server"


class _Handler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        sys.stderr.write(f"{self.log_date_time_string()} {self.address_string()} {format % args}\n")


def serve(root: Path, port: int) -> None:
    handler = functools.partial(_Handler, directory=str(root))
    with ThreadingHTTPServer((BIND, port), handler) as httpd:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        httpd.serve_forever()


def _port_open(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((BIND, port), timeout=0.5):
        return True
    return False


def running_pid(pidfile: Path) -> int | None:
    """The server's pid when the pidfile names a live mirror server, else None."""
    try:
        pid = int(pidfile.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return pid if _MARKER.encode() in cmdline else None


def start(
    root: Path, port: int, pidfile: Path, logfile: Path, timeout: float = 10.0, state_dir: Path | None = None
) -> int:
    """Start the server; ``state_dir`` names the lab it belongs to (rocm_fleet.lab.cleanup reads it)."""
    pid = running_pid(pidfile)
    if pid:
        return pid
    if _port_open(port):
        raise RuntimeError(f"lab mirror: port {port} on {BIND} is taken by another process")
    with open(logfile, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", _MARKER, "--root", str(root), "--port", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # outlives the CLI that started it
            env={**os.environ, **({"ROCM_FLEET_LAB_DIR": str(state_dir)} if state_dir else {})},
        )
    pidfile.write_text(f"{process.pid}\n")
    deadline = time.monotonic() + timeout
    while not _port_open(port):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pidfile.unlink(missing_ok=True)
            tail = logfile.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"lab mirror: server did not start on {BIND}:{port}:\n{tail}")
        time.sleep(0.05)
    return process.pid


def stop(pidfile: Path, timeout: float = 5.0) -> bool:
    """Stop the server; True when one was running."""
    pid = running_pid(pidfile)
    pidfile.unlink(missing_ok=True)
    if not pid:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reap it when this process started it
        time.sleep(0.05)
    if Path(f"/proc/{pid}").exists():
        os.kill(pid, signal.SIGKILL)
    return True


def status(pidfile: Path, port: int) -> dict:
    pid = running_pid(pidfile)
    return {"running": bool(pid) and _port_open(port), "pid": pid, "port": port, "bind": BIND}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the lab's package mirror on 127.0.0.1")
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    serve(args.root, args.port)


if __name__ == "__main__":
    main()
