"""What the lab benchmarks share: their own lab instance's environment and an inventory with its scale hosts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def lab_env() -> dict | None:
    """The environment of the benchmark's own lab instance; None (with the reason printed) when it cannot run."""
    missing = [name for name in ("ROCM_FLEET_LAB_DIR", "ROCM_FLEET_LAB_INVENTORY") if not os.environ.get(name)]
    if os.geteuid() != 0 or missing:
        print(f"run as root with your own lab instance (missing: {', '.join(missing) or 'root'})", file=sys.stderr)
        return None
    return {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "ANSIBLE_CONFIG": str(REPO / "ansible.cfg")}


def bench_inventory(env: dict, workdir: Path) -> Path:
    """The instance's inventory plus the generated scale hosts, as one inventory directory."""
    source = Path(env["ROCM_FLEET_LAB_INVENTORY"])
    inventory = workdir / "inventory"
    shutil.copytree(source, inventory)
    shutil.copy(Path(env["ROCM_FLEET_LAB_DIR"]) / "inventory" / "scale.yml", inventory / "scale.yml")
    port = env.get("ROCM_FLEET_LAB_MIRROR_PORT")
    if port:  # the instance's own mirror: group_vars/all beats the inventory file's all:vars, so a file after it
        (inventory / "group_vars" / "all" / "zz_instance.yml").write_text(f"---\nlab_mirror_port: {int(port)}\n")
    return inventory


CONTROL_PATH_DIR = Path("~/.ansible/cp").expanduser()  # Ansible's default control_path_dir


def close_kept_connections(control_path_dir: Path = CONTROL_PATH_DIR) -> int:
    """Ask every ssh connection Ansible kept open (ControlPersist, ansible.cfg) to close; how many were open.

    A nightly run finds none open: a command timed within a minute of another would reuse its connections and
    skip every host's ssh handshake. Only the masters behind Ansible's own control sockets are asked.
    """
    closed = 0
    for socket in sorted(control_path_dir.glob("*")) if control_path_dir.is_dir() else []:
        done = subprocess.run(["ssh", "-o", f"ControlPath={socket}", "-O", "exit", "kept-connection"],
                              capture_output=True, timeout=30)
        closed += done.returncode == 0
    return closed
