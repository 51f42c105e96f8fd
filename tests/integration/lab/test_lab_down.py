"""`rocm-fleet lab down` leaves no process and no mount, also after a supervisor was killed with -9.

Runs its own one-host lab (own state directory, own inventory, own port) so the
session's lab stays up.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from fleet_testing.lab_helpers import lab_available, rocm_fleet

from rocm_fleet.lab import cleanup, nspawn

pytestmark = pytest.mark.lab
PORT = 2299


def _traces_of(state_dir: Path) -> dict:
    """Every process and mount that mentions the lab's state directory in any way the kernel shows."""
    marker = str(state_dir)
    mounts = [line for line in Path("/proc/self/mountinfo").read_text().splitlines() if marker in line]
    processes = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            texts = [Path(f"/proc/{entry}/{name}").read_bytes() for name in ("cmdline", "environ", "mountinfo")]
        except OSError:
            continue
        if any(marker.encode() in text for text in texts):
            processes.append((int(entry), texts[0].replace(b"\0", b" ").decode(errors="replace")))
    return {"mounts": mounts, "processes": processes}


@pytest.fixture
def one_host_lab(tmp_path):
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    inventory_dir = tmp_path / "inventory"
    (inventory_dir / "group_vars").mkdir(parents=True)
    (inventory_dir / "hosts.yml").write_text(
        f"---\nall:\n  hosts:\n    crash-01:\n      lab_profile: mi210-4-pcie\n      ansible_port: {PORT}\n"
    )
    env = {
        "ROCM_FLEET_LAB_DIR": str(tmp_path / "state"),
        "ROCM_FLEET_LAB_INVENTORY": str(inventory_dir),
        "ROCM_FLEET_LAB_MIRROR": "off",
    }  # the session lab's mirror owns the mirror port
    try:
        yield tmp_path / "state", env
    finally:
        rocm_fleet("lab", "down", env=env, check=False)


def test_down_after_kill_9_of_a_supervisor_leaves_nothing(one_host_lab):
    state_dir, env = one_host_lab
    up = rocm_fleet("lab", "up", env=env, check=False)
    assert up.returncode == 0, up.stdout + up.stderr
    status = json.loads((state_dir / "hosts" / "crash-01" / "status.json").read_text())
    assert _traces_of(state_dir)["mounts"], "the host's overlay should be mounted while it runs"

    host_cgroups = [Path(path) for path in nspawn.host_cgroups("crash-01", state_dir)]
    assert any(_pids_in(path) for path in host_cgroups), "the host's systemd should run in the host's own cgroup"

    os.kill(status["supervisor_pid"], signal.SIGKILL)
    # Parent-death signals: supervisor -> systemd-nspawn -> the host's pid 1, whose pid namespace goes with it.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and cleanup.lab_processes(state_dir):
        time.sleep(0.1)
    assert cleanup.lab_processes(state_dir) == []
    down = rocm_fleet("lab", "down", env=env, check=False)
    assert down.returncode == 0, down.stdout + down.stderr
    assert _traces_of(state_dir) == {"mounts": [], "processes": []}
    assert [path for path in nspawn.lab_cgroups(state_dir) if path.exists()] == []


def _pids_in(cgroup: Path) -> list[str]:
    return [pid for procs in cgroup.rglob("cgroup.procs") for pid in procs.read_text().split()]
