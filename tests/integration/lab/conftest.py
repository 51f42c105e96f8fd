"""The lab for the lab's own tests: brought up once per session, taken down at the end."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from fleet_testing.lab_helpers import LabShell, clear_faulted, lab_available, rocm_fleet
from fleet_testing.lab_site import PlaybookRun, run_playbook

DEBIAN_ROCM_SMI_DEBS = ("librocm-smi64-1", "rocm-smi")
# The first module: the session's converge from bare hosts, which every later test starts from.
CONVERGE_MODULE = "test_compliance_suite.py"


def pytest_collection_modifyitems(items):
    """The modules marked ``waits`` (most of their time is the lab's own timers) run right after the converge.

    tests/run-all runs this directory beside a second pytest on the same cores: a module that waits uses little of
    them, so it belongs where the other pytest has work for them, not at the end, when this pytest runs alone and a
    wait leaves the machine idle. The order within each module, and of the other modules, stays pytest's."""

    def place(item) -> int:
        if item.path.name == CONVERGE_MODULE:
            return 0
        return 1 if item.get_closest_marker("waits") else 2

    items.sort(key=place)


@pytest.fixture(scope="session")
def lab():
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    from rocm_fleet.lab import paths

    # From bare hosts, whatever an earlier run left on this machine's disk.
    reset = rocm_fleet("lab", "reset", check=False)
    assert reset.returncode == 0, reset.stdout + reset.stderr
    up = rocm_fleet("lab", "up", check=False)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        yield LabShell(paths.state_dir())
    finally:
        down = rocm_fleet("lab", "down", check=False)
        assert down.returncode == 0, down.stdout + down.stderr


@pytest.fixture(scope="session")
def rocm_smi_debs(tmp_path_factory) -> list[Path]:
    """Debian's own rocm-smi packages (the base image has none; the roles install it from the mirror)."""
    cached = [
        next(iter(sorted(Path("/var/cache/apt/archives").glob(f"{name}_*.deb"))), None) for name in DEBIAN_ROCM_SMI_DEBS
    ]
    if all(cached):
        return cached
    download = tmp_path_factory.mktemp("debs")
    result = subprocess.run(
        ["apt-get", "download", *DEBIAN_ROCM_SMI_DEBS], cwd=download, capture_output=True, text=True
    )
    if result.returncode != 0:
        pytest.skip(f"cannot get Debian's rocm-smi packages: {result.stderr.strip()}")
    return sorted(download.glob("*.deb"))


@pytest.fixture(scope="session")
def converged_lab(lab) -> PlaybookRun:
    """The lab after `ansible-playbook site.yml -i inventory/lab`, run once per session.

    Tests that change a host by hand put it back before they end (a site.yml run
    limited to that host), so the next test finds the lab converged.
    """
    first = run_playbook("site.yml")
    assert first.returncode == 0, first.tail()
    return first


@pytest.fixture(scope="module")
def compliant_lab(converged_lab) -> PlaybookRun:
    """The converged lab (it lets site.yml reboot where a change needs it, so nothing is pending); the faults a
    test module set on any host are cleared when it ends (on the hosts a fault command touched)."""
    yield converged_lab
    clear_faulted()
