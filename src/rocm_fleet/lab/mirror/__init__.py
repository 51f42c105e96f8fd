"""The lab's signed package mirror: AMD's repository layout on 127.0.0.1, plus a Debian subset.

    info = ensure_mirror(state_dir, cache_dir)   # build (cached by a content stamp)
    start_mirror(info); mirror_status(info); stop_mirror(info)
    set_mirror_fault(info, "wrong-key")           # or "next-key", "rotated-key", "down", "up",
                                                  # "missing-package:<name>", None
    install_distro_source(root, info, system)     # make a root tree trust its system's archive

See docs/lab-mirror.md.
"""

from __future__ import annotations

import json
from pathlib import Path

from rocm_fleet.lab import systems
from rocm_fleet.lab.mirror import rpm_distro, rpm_sle, server, signing
from rocm_fleet.lab.mirror.build import (
    DISTRO_KEYRING,
    DISTRO_SOURCES,
    MirrorInfo,
    _publish,
    ensure_mirror,
    read_fault,
)
from rocm_fleet.lab.mirror.catalog import DEBIAN_VERSIONS

__all__ = [
    "MirrorInfo",
    "ensure_mirror",
    "install_distro_source",
    "mirror_status",
    "set_mirror_fault",
    "start_mirror",
    "stop_mirror",
]


def _pidfile(info: MirrorInfo) -> Path:
    return info.root / "server.pid"


def start_mirror(info: MirrorInfo) -> int:
    """Serve the mirror on 127.0.0.1:<port> in a detached process; return its pid."""
    return server.start(info.www, info.port, _pidfile(info), info.root / "server.log", state_dir=info.state_dir)


def stop_mirror(info: MirrorInfo) -> bool:
    return server.stop(_pidfile(info))


def mirror_status(info: MirrorInfo) -> dict:
    status = server.status(_pidfile(info), info.port)
    status.update(url=info.base_url, fault=read_fault(info), built=(info.root / "stamp").exists())
    return status


def set_mirror_fault(info: MirrorInfo, fault: str | None) -> None:
    """Break the mirror the way real mirrors break, or repair it (None).

    down / up: stop or start the server (independent of the other faults).
    wrong-key: the AMD repositories' Release files are re-signed with the lab's wrong key.
    next-key / rotated-key: a key rotation in its two steps. rocm.gpg.key serves the current
    and the lab's next ROCm key in one block; the AMD repositories stay signed with the
    current key (next-key), then are re-signed with the next one (rotated-key).
    missing-package:<name>: <name> disappears from every index (its file stays in the
    pool, as on a half-synced mirror). None: republish correctly signed, complete
    indexes and bring a held-down server back.
    """
    down_marker = info.root / "down"
    if fault == "down":
        stop_mirror(info)
        down_marker.write_text("down\n")
        return
    if fault == "up":
        down_marker.unlink(missing_ok=True)
        start_mirror(info)
        return
    if not (fault is None or fault in ("wrong-key", "next-key", "rotated-key") or fault.startswith("missing-package:")):
        raise ValueError(f"unknown mirror fault {fault!r}")
    indexes = json.loads((info.root / "indexes.json").read_text())
    _publish(info, indexes, fault)
    fault_file = info.root / "fault"
    if fault:
        fault_file.write_text(fault + "\n")
        return
    fault_file.unlink(missing_ok=True)
    if down_marker.exists():
        down_marker.unlink()
        start_mirror(info)


def root_suite(root: Path) -> str:
    """The Debian release of a root tree, from its os-release (VERSION_CODENAME)."""
    os_release = Path(root) / "etc/os-release"
    if not os_release.exists():
        os_release = Path(root) / "usr/lib/os-release"
    for line in os_release.read_text().splitlines():
        if line.startswith("VERSION_CODENAME="):
            return line.split("=", 1)[1].strip().strip('"')
    raise ValueError(f"{root}: its os-release names no VERSION_CODENAME")


def install_distro_source(root: Path, info: MirrorInfo, system: systems.LabSystem | None = None) -> None:
    """Make the tree at ``root`` use the mirror's archive of its system, trusting only its lab key.

    ``system`` defaults to the Debian release of the root's own os-release. A Debian system's archive is the
    mirror's Debian subset of its suite; an Ubuntu system's is that of the suite underneath, under its codename.
    """
    if system is None:
        suite = root_suite(root)
        system = next((s for s in systems.SYSTEMS.values() if s.family == "debian" and s.suite == suite), None)
        if system is None or suite not in DEBIAN_VERSIONS:
            raise ValueError(
                f"the lab mirror serves no Debian subset for {suite!r} (it serves {', '.join(DEBIAN_VERSIONS)})"
            )
    if system.family == "sles":
        rpm_sle.install_sources(root, info.base_url, system)
        return
    if system.package_format == "rpm":
        rpm_distro.install_sources(root, info.base_url, system, info.www)
        return
    keyring = Path(root) / DISTRO_KEYRING.lstrip("/")
    keyring.parent.mkdir(parents=True, exist_ok=True)
    keyring.write_bytes(signing.dearmor(signing.public_key(signing.DISTRO_KEY).read_text()))
    keyring.chmod(0o644)
    sources = Path(root) / DISTRO_SOURCES.format(archive=system.archive).lstrip("/")
    sources.parent.mkdir(parents=True, exist_ok=True)
    sources.write_text(
        f"# The lab's {system.family.capitalize()} mirror subset (rocm-fleet lab; its key is lab-only).\n"
        "Types: deb\n"
        f"URIs: {info.base_url}/{system.archive}\n"
        f"Suites: {system.codename}\n"
        "Components: main\n"
        f"Signed-By: {DISTRO_KEYRING}\n"
    )
