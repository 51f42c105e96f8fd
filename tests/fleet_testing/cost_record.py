"""A pytest plugin that records what each test phase cost: wall time and CPU time.

CI runs two pytests side by side on a machine whose CPU they saturate, so a test's wall time says
little about what it costs the run. With ``ROCM_FLEET_TEST_COSTS=<file>`` each setup, call and
teardown appends one tab-separated line: the phase, the test, its wall seconds, the CPU seconds of
this pytest and its children (the Ansible runs it waited for), of the lab hosts' cgroups (every lab
on the machine, the other stream's included) and of the whole machine. tests/run-all turns it on;
``python -m fleet_testing.cost_record FILE...`` lists the costliest tests.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path

import pytest

_ENV = "ROCM_FLEET_TEST_COSTS"


def _machine_cpu() -> float:
    """CPU seconds every core spent busy since boot (/proc/stat's first line less idle and iowait)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    busy = sum(fields[:8]) - fields[3] - fields[4]
    return busy / os.sysconf("SC_CLK_TCK")


@functools.cache
def _lab_stat() -> Path | None:
    """The labs' cpu.stat, where rocm_fleet.lab.nspawn puts their cgroups. Found once, at the first test's setup:
    unit tests patch nspawn's view of the mounts, and a later lookup would read their temporary directories."""
    from rocm_fleet.lab import nspawn

    try:
        return nspawn.cgroup_roots()[0] / nspawn.CGROUP_TOP / "cpu.stat"
    except nspawn.EngineMissing:
        return None


def _lab_cpu() -> float:
    """CPU seconds of every lab host's cgroup (0 where there is none)."""
    stat = _lab_stat()
    if stat is not None and stat.is_file():
        for line in stat.read_text().splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
    return 0.0


def _own_cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _sample() -> tuple[float, float, float, float]:
    return time.monotonic(), _own_cpu(), _lab_cpu(), _machine_cpu()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    yield from _recorded("setup", item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield from _recorded("call", item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    yield from _recorded("teardown", item)


def _recorded(phase: str, item):
    path = os.environ.get(_ENV)
    if not path:
        yield
        return
    before = _sample()
    yield
    after = _sample()
    wall, own, lab, machine = (end - start for start, end in zip(before, after, strict=True))
    # The last lab down removes the labs' cgroup, whose counter then starts again from 0: not a negative cost.
    lab = max(lab, 0.0)
    with open(path, "a", encoding="utf-8") as out:
        out.write(f"{phase}\t{item.nodeid}\t{wall:.2f}\t{own:.2f}\t{lab:.2f}\t{machine:.2f}\n")


def main(paths: list[str]) -> None:
    """Print the tests (phases summed) by the machine CPU they overlapped, then totals per file."""
    per_test: dict[str, list[float]] = {}
    for name in paths:
        for line in Path(name).read_text().splitlines():
            _, nodeid, *values = line.split("\t")
            sums = per_test.setdefault(nodeid, [0.0] * 4)
            for index, value in enumerate(values):
                sums[index] += float(value)
    print(f"{'wall':>8} {'own':>8} {'lab':>8} {'machine':>8}  test")
    for nodeid, (wall, own, lab, machine) in sorted(per_test.items(), key=lambda kv: -kv[1][1] - kv[1][2])[:30]:
        print(f"{wall:8.1f} {own:8.1f} {lab:8.1f} {machine:8.1f}  {nodeid}")
    per_file: dict[str, list[float]] = {}
    for nodeid, values in per_test.items():
        sums = per_file.setdefault(nodeid.split("::")[0], [0.0] * 4)
        for index, value in enumerate(values):
            sums[index] += value
    print()
    for name, (wall, own, lab, machine) in sorted(per_file.items(), key=lambda kv: -kv[1][1] - kv[1][2])[:15]:
        print(f"{wall:8.1f} {own:8.1f} {lab:8.1f} {machine:8.1f}  {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
