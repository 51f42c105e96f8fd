"""The newest ansible-core release, on Debian 13's Python: unit tests, ansible-doc, ansible-lint and a drift run.

The rest of the suite runs on this machine's .venv (Python 3.11, ansible-core
2.19: the lower end of meta/runtime.yml's requires_ansible). Here the same gates
run on the newest release that pip offers Python 3.13, in the controller root
(rocm_fleet.lab.controller), from a copy of the checkout mounted at
controller.CHECKOUT, and drift checks the converged lab from there.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from ansible.release import __version__ as venv_ansible_core
from fleet_testing.lab_ansible import LAB_INVENTORY
from fleet_testing.lab_helpers import REPO, lab_available
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from rocm_fleet.lab import controller, paths
from rocm_fleet.lab.controller import CHECKOUT, Bind
from rocm_fleet.lab.inventory import committed_hosts

pytestmark = [pytest.mark.lab, pytest.mark.slow]
DEBIAN_13_PYTHON = "3.13"
# What ansible-core prints before a deprecation becomes an error, and its other warnings.
WARNINGS = re.compile(r"\[(DEPRECATION WARNING|WARNING)\]|^DEPRECATION WARNING", re.MULTILINE)


@dataclass
class Newest:
    controller: controller.Controller
    versions: dict
    checkout: Path
    seconds: dict = field(default_factory=dict)

    def run(self, name: str, argv: list[str], env: dict | None = None, binds: tuple = (), timeout: float = 900):
        """``argv`` in the checkout's copy, with the checkout's ansible.cfg; its time is kept under ``name``."""
        started = time.monotonic()
        result = self.controller.run(
            argv,
            cwd=CHECKOUT,
            timeout=timeout,
            env={
                "ANSIBLE_CONFIG": f"{CHECKOUT}/ansible.cfg",
                "ANSIBLE_NOCOLOR": "1",
                "PY_COLORS": "0",
                "PYTHONPATH": f"{CHECKOUT}/src",
                **(env or {}),
            },
            binds=(Bind(self.checkout, CHECKOUT, writable=True), *binds),
        )
        self.seconds[name] = round(time.monotonic() - started, 1)
        return result


def supported() -> SpecifierSet:
    return SpecifierSet(yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())["requires_ansible"])


@pytest.fixture(scope="module")
def newest(tmp_path_factory):
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    started = time.monotonic()
    root, versions = controller.prepare()
    prepare_seconds = round(time.monotonic() - started, 1)
    checkout = controller.copy_checkout(REPO, tmp_path_factory.mktemp("checkout"))
    found = Newest(root, versions, checkout, {"root and pip (or waiting for run-all's)": prepare_seconds})
    yield found
    print(f"\ncontroller root, ansible-core {versions['installed']['ansible-core']}: seconds {found.seconds}")


def test_the_newest_release_runs_on_debian_13s_python_and_loads_the_collection_from_the_copy(newest):
    installed = newest.versions["installed"]
    assert installed["ansible-core"] == newest.versions["newest"]["ansible-core"], newest.versions
    assert installed["ansible"] == newest.versions["newest"]["ansible"], newest.versions
    assert newest.controller.python_version().startswith(DEBIAN_13_PYTHON + ".")
    for end in (installed["ansible-core"], venv_ansible_core):
        assert Version(end) in supported(), f"ansible-core {end} is outside requires_ansible {supported()}"
    # The lower end is what the rest of CI runs: the .venv's series is requires_ansible's lowest.
    [lowest] = [Version(spec.version) for spec in supported() if spec.operator == ">="]
    assert Version(venv_ansible_core).release[:2] == lowest.release[:2], (venv_ansible_core, str(supported()))
    listed = newest.run(
        "collection list", ["ansible-galaxy", "collection", "list", "rocm_fleet.core", "--format", "json"]
    )
    assert listed.returncode == 0, listed.stderr
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    assert json.loads(listed.stdout) == {
        f"{CHECKOUT}/collections/ansible_collections": {"rocm_fleet.core": {"version": galaxy["version"]}}
    }


# The unit tests of what runs in or drives ansible-core: modules, module_utils, action, filter and callback
# plugins, the roles' data and tasks, the drift engine and the collection's loading. The rest (the lab's builders,
# the repository's layout and import rules, the tools) run on the .venv alone: no ansible-core release changes them,
# and running them twice cost this 2-core machine about a minute of CI.
ANSIBLE_UNIT_TESTS = ["tests/unit/plugins", "tests/unit/roles", "tests/unit/rocm_fleet/drift",
                      "tests/unit/rocm_fleet/test_collection.py", "tests/unit/rocm_fleet/test_hardware_profiles.py",
                      "tests/unit/rocm_fleet/lab/test_udev_real.py", "tests/unit/rocm_fleet/lab/test_bls.py",
                      "tests/unit/meta/test_requires_ansible.py",
                      "tests/unit/fleet_testing"]


def test_every_unit_test_that_imports_ansible_runs_on_the_newest_release():
    importing = re.compile(r"^\s*(from|import) (ansible|ansible_collections)[. ]", re.MULTILINE)
    chosen = [REPO / path for path in ANSIBLE_UNIT_TESTS]
    missed = [str(test.relative_to(REPO)) for test in sorted((REPO / "tests" / "unit").rglob("test_*.py"))
              if importing.search(test.read_text()) and not any(test.is_relative_to(path) for path in chosen)]
    assert all(path.exists() for path in chosen), ANSIBLE_UNIT_TESTS
    assert not missed, f"add to ANSIBLE_UNIT_TESTS: {missed}"


def test_the_unit_tests_pass(newest):
    # Less the tests of promtool and systemd-analyze, which this machine has and the controller root does not
    # (the .venv's run has them; they test files and units, not ansible-core).
    host_tools = ["tests/unit/roles/test_pull_units.py::"
                  "test_git_mode_runs_ansible_pull_only_if_changed_then_the_check_from_the_checkout"]
    deselect = [option for test in host_tools for option in ("--deselect", test)]
    result = newest.run("unit tests", ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *deselect,
                                       *ANSIBLE_UNIT_TESTS])
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]


def test_ansible_doc_renders_every_module_and_filter_without_a_warning(newest):
    result = newest.run("ansible-doc", ["tests/sanity/ansible-doc"])
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    assert not WARNINGS.search(result.stdout + result.stderr), result.stdout + result.stderr


def test_ansible_lint_passes(newest):
    result = newest.run("ansible-lint", ["ansible-lint", "--offline", "-q"])
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]


def test_drift_reports_the_converged_lab_compliant_without_a_warning(newest, compliant_lab, tmp_path):
    state = str(paths.state_dir())
    binds = [Bind(paths.ssh_dir(), state + "/ssh"), Bind(tmp_path, "/srv/out", writable=True)]
    if LAB_INVENTORY.resolve().is_relative_to(REPO):
        inventory = f"{CHECKOUT}/{LAB_INVENTORY.resolve().relative_to(REPO)}"
    else:  # a second lab instance's inventory
        inventory = str(LAB_INVENTORY)
        binds.append(Bind(LAB_INVENTORY, inventory))
    result = newest.run(
        "drift",
        ["python", "-m", "rocm_fleet.cli", "drift", "-i", inventory, "--output-dir", "/srv/out/report"],
        # The play's own output (warnings included) goes to a log: drift prints only its summary. At
        # verbosity 2 the log names the file each task came from.
        env={"ROCM_FLEET_LAB_DIR": state, "ANSIBLE_LOG_PATH": "/srv/out/ansible.log", "ANSIBLE_VERBOSITY": "2"},
        binds=tuple(binds),
    )
    report = json.loads((tmp_path / "report" / "drift.json").read_text())
    not_compliant = {name: host for name, host in report["hosts"].items() if host["status"] != "compliant"}
    assert result.returncode == 0 and not not_compliant, (not_compliant, result.stderr[-3000:])
    assert set(report["hosts"]) == {spec.name for spec in committed_hosts(LAB_INVENTORY)}
    log = (tmp_path / "ansible.log").read_text()
    task_paths = set(re.findall(r"task path: (\S+?):\d+$", log, re.MULTILINE))
    copy = f"{CHECKOUT}/collections/ansible_collections/rocm_fleet/core/"
    assert task_paths and all(path.startswith(copy) for path in task_paths), task_paths  # the copy's tasks only
    assert not WARNINGS.search(log), [line for line in log.splitlines() if "WARNING" in line]
