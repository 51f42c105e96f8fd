"""Helpers of the lab's integration tests: run rocm-fleet, run commands on lab hosts over SSH."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROCM_FLEET = [sys.executable, "-m", "rocm_fleet.cli"]


def lab_available() -> str | None:
    if os.geteuid() != 0:
        return "the lab needs root"
    for tool in ("unshare", "debootstrap", "ssh", "ssh-keygen"):
        if not shutil.which(tool):
            return f"the lab needs {tool}"
    return None


# The first `lab up` on a fresh machine waits for what tests/run-all started building beside the gates (the lab
# bases, about 10 minutes there) and then builds the mirror (about 5): 600 s stopped it on a fresh machine.
LAB_UP_TIMEOUT = 2400
# A command given this variable works on another lab than the process's own.
LAB_DIR = "ROCM_FLEET_LAB_DIR"


# The hosts of this process's default lab that a `rocm-fleet lab fault HOST ...` touched since the last
# clear_faulted(): a module's teardown starts and clears those alone (a clear re-renders the host's hardware, 1 to
# 3 s a host; ten hosts after every test module cost the lab stream minutes).
_FAULTED: set[str] = set()


def rocm_fleet(*args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    if (args[:2] == ("lab", "fault") and len(args) > 3 and args[2] != "mirror" and args[3] != "clear"
            and not (env or {}).get(LAB_DIR)):
        _FAULTED.add(args[2])
    return subprocess.run(
        [*ROCM_FLEET, *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=check,
        timeout=LAB_UP_TIMEOUT if args[:2] == ("lab", "up") else 600,
    )


class LabShell:
    """Runs commands on lab hosts as the login user, over SSH with strict host key checking."""

    def __init__(self, state_dir: Path):
        self.state_dir = state_dir

    def ssh_command(self, port: int, command: str) -> list[str]:
        ssh = self.state_dir / "ssh"
        return [
            "ssh",
            "-i",
            str(ssh / "id_ed25519"),
            "-o",
            f"UserKnownHostsFile={ssh / 'known_hosts'}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "IdentitiesOnly=yes",
            "-p",
            str(port),
            "fleet@127.0.0.1",
            command,
        ]

    def run(self, port: int, command: str, check: bool = True, timeout: float = 60) -> str:
        result = subprocess.run(self.ssh_command(port, command), capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"{command!r} on port {port} failed ({result.returncode}): {result.stderr}")
        return result.stdout


def clear_faulted() -> None:
    """Start and clear the faults of every host of the default lab that a fault command touched, then forget them."""
    for host in sorted(_FAULTED):
        rocm_fleet("lab", "fault", host, "start", check=False)
        rocm_fleet("lab", "fault", host, "clear", check=False)
    _FAULTED.clear()
