"""Real GPU tools of several Debian releases, run on rendered hardware profiles.

A ``ToolUnderTest`` is one tool in the root of one Debian release
(``lab/toolroots.py``); ``RenderedHost`` is a profile rendered once. ``runner``
gives gpu_facts' collectors the ``run(args) -> (rc, stdout, stderr)`` they call
on a real host, executed in the tool's root with the rendered /sys, with the
environment gpu_facts sets (common.runner.TOOL_ENV), and remembered so that a
collector and a test reading the same command run the tool once.
"""

from __future__ import annotations

import dataclasses
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fleet_testing.tool_limits import limits_for, upstream_version
from rocm_fleet.hardware.render import render_profile
from rocm_fleet.hardware.sandbox import run_in_tool_root
from rocm_fleet.lab.toolroots import package_version

_AMD_SMI_VERSION = re.compile(r"AMDSMI Tool:\s*(\S+)")


@dataclasses.dataclass(frozen=True)
class ToolUnderTest:
    tool: str  # the command: rocm-smi, amd-smi, rocminfo
    suite: str  # the Debian release whose root holds it

    @property
    def package(self):
        return self.tool  # Debian's binary package has the command's name


@dataclasses.dataclass
class ToolVersion:
    tool: ToolUnderTest
    debian: str  # the package version in the root's dpkg database
    reported: str | None  # what the tool says of itself, where it says it

    @property
    def label(self):
        own = "%s %s " % (self.tool.tool, self.reported) if self.reported else ""
        return "%s(Debian %s %s, %s root)" % (own, self.tool.package, self.debian, self.tool.suite)

    def limits(self):
        """The documented limits and a note when they were documented for another version."""
        limits, known = limits_for(self.tool.tool, upstream_version(self.debian))
        note = "" if known == upstream_version(self.debian) else " [limits documented for %s]" % known
        return limits, note


def tool_version(tool, root, host):
    """The tool's version from its root's dpkg database and, for amd-smi, from ``amd-smi version`` on ``host``."""
    debian = package_version(Path(root), tool.package)
    if debian is None:
        raise AssertionError("%s is not installed in the %s root %s" % (tool.package, tool.suite, root))
    reported = None
    if tool.tool == "amd-smi":
        result = run_in_tool_root(root, host.root, ["amd-smi", "version"], host.device_nodes)
        match = _AMD_SMI_VERSION.search(result.stdout)
        reported = match.group(1).split("+")[0] if match else None
    return ToolVersion(tool, debian, reported)


@dataclasses.dataclass
class RenderedHost:
    name: str
    profile: object
    root: Path
    device_nodes: tuple

    @classmethod
    def render(cls, profile, root):
        result = render_profile(profile, root)
        return cls(profile.name, profile, Path(root), result.device_nodes)


def runner(tool_root, host, tool, env, cache):
    """``run(args)`` for gpu_facts' collectors, remembered in ``cache`` per command."""

    def run(args):
        key = (str(tool_root), str(host.root), tool, tuple(args))
        if key not in cache:
            result = run_in_tool_root(tool_root, host.root, [tool, *args], host.device_nodes, env=env)
            cache[key] = (result.returncode, result.stdout, result.stderr)
        return cache[key]

    return run


def prefetch(run, commands, workers=3):
    """Run ``commands`` side by side (each tool call mostly starts Python and reads sysfs)."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(run, [list(args) for args in commands]))
