"""Cached Debian root filesystems built with debootstrap, one per recipe.

The lab's host bases (Debian 12 and 13), the roots that run each generation of
Debian's real GPU tools and the second controller are all such roots. A root is
built into a temporary directory and renamed into the cache only when complete,
so an interrupted build never leaves a half root behind. The directory name
carries a hash of the recipe: any change to it builds a new root next to the old.

A recipe with a parent is built from a copy of the parent's root (its packages installed with apt from the same
archive, its commands run after), not by a debootstrap of its own: the lab's Ubuntu, RHEL-family and SLES bases
differ from their Debian suite's base by a few packages and files, and on a fresh machine five more debootstraps
beside the others doubled the wait for the lab's first boot.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from rocm_fleet.lab import paths
from rocm_fleet.lab.mounts import unmount_all_under

STAMP = ".rocm-fleet-base"
# Suites this debootstrap may not know yet by name: Debian's next release is
# built with the sid script, as Debian's own tooling does before its release.
_SCRIPT_FOR_UNKNOWN_SUITE = "sid"


@dataclass(frozen=True)
class Recipe:
    """What a root holds: Debian suite, packages and commands run in it afterwards."""

    name: str  # "lab-bookworm", "tools-forky", ...
    suite: str  # "bookworm", "trixie", "forky"
    packages: tuple[str, ...]
    customize: tuple[str, ...] = field(default=())
    variant: str = "minbase"
    # The root this one is a copy of; packages and customize are then what this root adds to it.
    parent: Recipe | None = None

    def digest(self) -> str:
        recipe = {"suite": self.suite, "variant": self.variant, "packages": self.packages, "customize": self.customize}
        if self.parent:
            recipe["parent"] = self.parent.digest()
        return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]

    def path(self) -> Path:
        return paths.cache_dir() / "base" / f"{self.name}-{self.digest()}"


def debian_mirror() -> str | None:
    """The Debian archive this machine's own apt uses (not its security archive).

    Every suite lives in the same archive, so the URI of any configured suite
    serves the others. None lets debootstrap use its built-in default.
    """
    for source in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for line in source.read_text().splitlines():
            if line.startswith("URIs:"):
                for uri in line.split(":", 1)[1].split():
                    if "security" not in uri and "debian" in uri:
                        return uri
    legacy = Path("/etc/apt/sources.list")
    if legacy.exists():
        for line in legacy.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 3 and fields[0] == "deb" and "security" not in fields[1]:
                return fields[1]
    return None


def _archive_and_script(suite: str) -> list[str]:
    mirror = debian_mirror()
    if Path("/usr/share/debootstrap/scripts", suite).exists():
        return [mirror] if mirror else []
    if not mirror:
        raise RuntimeError(
            f"debootstrap has no script for {suite} and this machine's apt names no Debian archive to build it from:"
            " add one to /etc/apt/sources.list.d"
        )
    return [mirror, f"/usr/share/debootstrap/scripts/{_SCRIPT_FOR_UNKNOWN_SUITE}"]


def ensure_root(recipe: Recipe, log=print) -> Path:
    """Return the cached root of ``recipe``, building it first if needed.

    Builders of one recipe take turns (a lock file beside the root), so a test
    session that starts every build early in the background and the test that
    needs a root wait for one build, not two.
    """
    target = recipe.path()
    if (target / STAMP).exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / STAMP).exists():
            return target
        return _build(recipe, target, log)


def _build(recipe: Recipe, target: Path, log) -> Path:
    parent = ensure_root(recipe.parent, log=log) if recipe.parent else None
    building = target.parent / f".build-{target.name}-{time.time_ns()}"
    log(f"lab: building the Debian {recipe.suite} root {recipe.name} in {target} (first use; cached afterwards)")
    started = time.monotonic()
    try:
        if parent:
            _copy_and_install(parent, building, recipe)
        else:
            _debootstrap(recipe, building)
        for step in recipe.customize:
            result = subprocess.run(["chroot", str(building), "/bin/sh", "-ec", step], capture_output=True, text=True)
            if result.returncode != 0:
                tail = (result.stdout + result.stderr)[-3000:]
                raise RuntimeError(f"building {recipe.name}: {step[:200]!r} failed ({result.returncode}):\n{tail}")
        (building / STAMP).write_text(json.dumps({"recipe": recipe.digest(), "built": time.time()}))
        building.rename(target)
    finally:
        if building.exists():
            # debootstrap mounts /proc and /sys in the new root; never delete through a mount.
            if unmount_all_under(building):
                raise RuntimeError(f"cannot unmount everything under {building}; remove it by hand")
            shutil.rmtree(building, ignore_errors=True)
    log(f"lab: root {recipe.name} built in {time.monotonic() - started:.0f} s")
    return target


def _debootstrap(recipe: Recipe, building: Path) -> None:
    # One download cache per recipe: debootstrap does not guard a cache shared by concurrent builds.
    debs = paths.cache_dir() / "debs" / recipe.name
    debs.mkdir(parents=True, exist_ok=True)
    command = [
        "debootstrap",
        f"--variant={recipe.variant}",
        f"--include={','.join(recipe.packages)}",
        f"--cache-dir={debs}",
        recipe.suite,
        str(building),
        *_archive_and_script(recipe.suite),
    ]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        tail = (result.stdout + result.stderr)[-3000:]
        raise RuntimeError(f"debootstrap of {recipe.name} ({recipe.suite}) failed ({result.returncode}):\n{tail}")


# apt's files of the install into a copied root, removed again after it: the root trusts no repository afterwards,
# as its parent does not.
_BUILD_SOURCES = "etc/apt/sources.list.d/rocm-fleet-build.list"
_BUILD_APT_CONF = "etc/apt/apt.conf.d/99rocm-fleet-build"


def _copy_and_install(parent: Path, building: Path, recipe: Recipe) -> None:
    """``building`` as a copy of ``parent`` with ``recipe.packages`` installed by apt (with what they depend on,
    without recommends: what debootstrap's --include installs)."""
    subprocess.run(["cp", "-a", "--reflink=auto", str(parent), str(building)], check=True, capture_output=True)
    (building / STAMP).unlink()
    if not recipe.packages:
        return
    mirror = debian_mirror()
    if not mirror:
        raise RuntimeError(
            f"building {recipe.name}: this machine's apt names no Debian archive to install"
            f" {', '.join(recipe.packages)} from: add one to /etc/apt/sources.list.d"
        )
    (building / _BUILD_SOURCES).write_text(f"deb {mirror} {recipe.suite} main\n")
    # The snapshot archives a site's machines use may carry an expired Release date, as debootstrap ignores.
    (building / _BUILD_APT_CONF).write_text('Acquire::Check-Valid-Until "false";\nAPT::Install-Recommends "false";\n')
    install = (
        "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -qq -y "
        + " ".join(recipe.packages)
        + f" && apt-get clean && rm -rf /var/lib/apt/lists/* /{_BUILD_SOURCES} /{_BUILD_APT_CONF}"
    )
    # In mount and PID namespaces of its own with a /proc of its own, as maintainer scripts expect: nothing is left
    # mounted in the root when it ends.
    command = ["unshare", "--mount", "--pid", "--fork", f"--mount-proc={building / 'proc'}",
               "chroot", str(building), "/bin/sh", "-ec", install]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        tail = (result.stdout + result.stderr)[-3000:]
        raise RuntimeError(f"building {recipe.name}: apt-get install in a copy of its parent failed:\n{tail}")
