"""A RHEL-family lab host's root for the tests of its boot stand-ins (grubby, grub2-*, kernel-install plugins).

``rhel_root`` lays the "bls" lab layer (rocm_fleet.lab.layer) into a directory with what the base and first
boot add (Rocky's os-release, machine-id, the root file system's UUID); ``run`` runs a stand-in from that
root with ROCM_FLEET_LAB_ROOT set to it, so each stand-in and the tools it calls (grub2-editenv) read and
write the directory's files as if chrooted there. No root privileges, no mount.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from rocm_fleet.lab import layer, systems

MACHINE_ID = "0123456789abcdef0123456789abcdef"
ROOT_UUID = "7c9a2f3e-1b2d-4e5f-8a9b-0c1d2e3f4a5b"
ROCKY = systems.system("rocky9.6")


def rhel_root(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("ROCM_FLEET_LAB_DIR", str(tmp_path / "state"))
    root = tmp_path / "root"
    shutil.copytree(layer.ensure_layer(ROCKY.boot_loader), root, symlinks=True)
    write(root, "etc/os-release", ROCKY.identity["usr/lib/os-release"])
    write(root, "etc/machine-id", MACHINE_ID + "\n")
    write(root, "etc/rocm-fleet-lab/root-uuid", ROOT_UUID + "\n")
    (root / "boot").mkdir(exist_ok=True)
    (root / "lib").symlink_to("usr/lib")  # the base's merged /usr: kernel-core's scriptlets name /lib/modules
    return root


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(root: Path, *argv: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    """``argv[0]``: a path inside the host ("/usr/sbin/grubby"); the host's bin directories come first on PATH."""
    path = f"{root}/usr/sbin:{root}/usr/bin:{os.environ['PATH']}"
    result = subprocess.run(
        [f"{root}{argv[0]}", *argv[1:]],
        env={**os.environ, "ROCM_FLEET_LAB_ROOT": str(root), "PATH": path, **(env or {})},
        capture_output=True,
        text=True,
    )
    if check and result.returncode:
        raise AssertionError(f"{' '.join(argv)}: rc {result.returncode}\n{result.stdout}{result.stderr}")
    return result


def kernel_install(root: Path, command: str, version: str, *rest: str, env: dict | None = None) -> None:
    """What kernel-install does with the host's plugins (in name order, with its environment), for one kernel."""
    arguments = [command, version, f"/boot/{MACHINE_ID}/{version}", *rest]
    environment = {
        "KERNEL_INSTALL_MACHINE_ID": MACHINE_ID,
        "KERNEL_INSTALL_LAYOUT": "other",
        "KERNEL_INSTALL_VERBOSE": "0",
        **(env or {}),
    }
    for plugin in sorted((root / "usr/lib/kernel/install.d").glob("*.install")):
        run(root, f"/{plugin.relative_to(root)}", *arguments, env=environment)


def entry_text(root: Path, version: str) -> str:
    return (root / f"boot/loader/entries/{MACHINE_ID}-{version}.conf").read_text()


def grubenv(root: Path) -> dict[str, str]:
    text = (root / "boot/grub2/grubenv").read_text()
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
