"""Stand-ins for Debian's tools of a generation, for the lab mirror's ROCm Core SDK package tests (no .deb read):
the binaries, libraries and Depends the packages carry, and a release_streams.yml format rendered for a release."""

from __future__ import annotations

from rocm_fleet.lab.mirror import amd_packages
from rocm_fleet.lab.mirror.catalog import TOOL_SUITES
from rocm_fleet.lab.mirror.libraries import Library

AMD_SMI_FILES = {
    "libexec/amdsmi_cli/amdsmi_cli.py": (0o755, b"#!/usr/bin/python3\n"),
    "share/amd_smi/amdsmi/_version.py": (0o644, b'__version__ = "27.1.0"\n'),
}


def tools(suite: str) -> amd_packages.Tools:
    versions = {"rocm-smi": "6.4.1-1.1", "librocm-smi64-1": "6.4.1-1.1", "amd-smi": "10.1-1"}
    bins = {"rocminfo": (0o755, b"x"), "rocm_agent_enumerator": (0o755, b"y")}
    found = {
        name: Library(name, package, "1", f"{name}.so.9.9", f"{name}.so.9", 0o644, f"{package}-needs", b"ELF")
        for name, package in TOOL_SUITES[suite].libraries.items()
    }
    depends = "libhsa-runtime64-1 (>= 6.4.3~), python3, kmod"
    return amd_packages.Tools(TOOL_SUITES[suite], versions, bins, depends, found)


def render(template: str, release) -> str:
    """A release_streams.yml format for a release (the fields streams.release_values gives)."""
    major, minor, patch = release.numbers
    return template.format(major=major, minor=minor, patch=patch, series=release.series, release=release.version)
