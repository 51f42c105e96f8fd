"""Debian roots that hold one generation each of Debian's real GPU tools.

Each root is a debootstrap minbase plus the tools of one Debian release, cached by
``debroot`` and built once per machine. The cross-check runs every tool in the root
of its own release against a rendered hardware profile (``hardware/sandbox.py``).

Binary package names and the versions each suite carries: Debian's package pages of
rocm-smi-lib (rocm-smi), rocminfo and amdsmi (amd-smi); forky is Debian's testing
release after trixie, built with debootstrap's sid script (``debroot``).
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rocm_fleet.lab import debroot

_CUSTOMIZE = (
    # Keep the roots small: no documentation, no apt lists (the dpkg database stays: versions are read from it).
    "apt-get clean",
    "rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* /var/log/*.log",
    # The tools' Python lives outside dist-packages, so Debian compiles none of it; a machine that has
    # run the tool once as root has these caches. The roots are mounted read-only, so compile them once
    # here (amd-smi 27.1 otherwise spends 2 of its 4 s on every call compiling its CLI).
    "python3 -m compileall -q /usr/libexec /usr/lib/python3/dist-packages $(ls -d /usr/share/amd_smi 2>/dev/null)",
)


@dataclass(frozen=True)
class ToolRoot:
    """A Debian release and the Debian binary packages its root holds (each tool's package has its name)."""

    suite: str
    tools: tuple[str, ...]

    def recipe(self) -> debroot.Recipe:
        return debroot.Recipe(name=f"tools-{self.suite}", suite=self.suite, packages=self.tools, customize=_CUSTOMIZE)


# pci.ids: the tools name vendors and boards from it (rocm_smi_lib falls back to the vendor ID for every
# name without it); servers and the lab hosts (pciutils) have it.
TOOL_ROOTS = {
    # Debian 12: rocm-smi 5.2.3 (Debian 12 has no amd-smi; rocminfo is not needed for the check).
    "bookworm": ToolRoot("bookworm", ("rocm-smi", "pci.ids")),
    # Debian 13: rocm-smi 6.1.2, amd-smi 6.1.2, rocminfo 6.1.2.
    "trixie": ToolRoot("trixie", ("rocm-smi", "amd-smi", "rocminfo", "pci.ids")),
    # Debian's next release: rocm-smi 6.4.1, amd-smi 27.1 (package 10.1), rocminfo 7.2.4; it moves.
    "forky": ToolRoot("forky", ("rocm-smi", "amd-smi", "rocminfo", "pci.ids")),
}


def ensure_tool_root(suite: str, log=print) -> Path:
    """The cached tool root of ``suite``, built first when missing."""
    try:
        root = TOOL_ROOTS[suite]
    except KeyError:
        raise ValueError(f"no tool root for Debian suite {suite!r} (known: {', '.join(TOOL_ROOTS)})") from None
    return debroot.ensure_root(root.recipe(), log=log)


def ensure_tool_roots(suites=tuple(TOOL_ROOTS), log=print) -> dict[str, Path | Exception]:
    """Build the missing roots in parallel (debootstrap mostly waits on the network and dpkg).

    Returns each suite's root, or the exception its build raised, so one release
    that fails to build does not hide the others.
    """
    with ThreadPoolExecutor(max_workers=len(suites)) as pool:
        futures = {suite: pool.submit(ensure_tool_root, suite, log) for suite in suites}
    results = {}
    for suite, future in futures.items():
        try:
            results[suite] = future.result()
        except Exception as exc:  # reported per suite to the caller
            results[suite] = exc
    return results


def package_version(root: Path, package: str) -> str | None:
    """The version of ``package`` that the root's dpkg database records, or None when absent."""
    result = subprocess.run(
        ["dpkg-query", f"--admindir={root}/var/lib/dpkg", "-W", "-f=${Version}", package],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout.strip() or None if result.returncode == 0 else None


if __name__ == "__main__":
    for name, path in ensure_tool_roots(tuple(sys.argv[1:]) or tuple(TOOL_ROOTS)).items():
        print(name, path)
