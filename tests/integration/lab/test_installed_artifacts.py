"""Installed, not checked out: the wheel and the collection tarball, each used from an empty directory.

The wheel goes into a fresh virtualenv (its dependencies from a wheelhouse that
`pip download` keeps filled, so only new releases are fetched) and its
`rocm-fleet drift` checks two lab hosts with nothing but an inventory; the
collection tarball goes into a temporary collections path with
`ansible-galaxy collection install`, and its module and playbooks run from there
by FQCN, with no ansible.cfg and no checkout in sight. Secret key material in
either artifact is test_artifacts_hold_no_secret_keys.py's to find.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fleet_testing.lab_ansible import BIN, LAB_INVENTORY
from fleet_testing.lab_helpers import REPO

from rocm_fleet.hardware.profile import load_profile
from rocm_fleet.lab import controller, inventory, paths

pytestmark = [pytest.mark.lab, pytest.mark.slow]
HOSTS = ("mi300x-01", "rx7900xtx-01")
# What would point Ansible or rocm-fleet back at this checkout; an installed run has none of it.
CHECKOUT_VARIABLES = ("ANSIBLE_CONFIG", "ANSIBLE_COLLECTIONS_PATH", "PYTHONPATH", "VIRTUAL_ENV",
                      "ROCM_FLEET_COLLECTION_ROOT", "ROCM_FLEET_LAB_KEYS")


def run(command: list, cwd: Path, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    result = subprocess.run([str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, f"{command}: rc {result.returncode}\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    return result


def outside_the_checkout(tmp_path: Path, **extra: str) -> dict:
    """The environment of a user with the lab's variables and nothing of this checkout, in a fresh HOME."""
    env = {key: value for key, value in os.environ.items() if key not in CHECKOUT_VARIABLES}
    return {**env, "HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "cache"), **extra}


def profile_gpus(host: str) -> int:
    """How many logical GPUs the host's lab profile has (one per partition)."""
    (spec,) = [spec for spec in inventory.committed_hosts() if spec.name == host]
    return len(load_profile(spec.profile).partitions())


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> dict[str, Path]:
    """The wheel and the collection tarball, built from a copy of the working tree as git sees it."""
    tree = controller.copy_checkout(REPO, tmp_path_factory.mktemp("tree") / "rocm-fleet")
    dist = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", dist, tree], cwd=dist)
    run([BIN / "ansible-galaxy", "collection", "build", "--output-path", dist, tree], cwd=dist)
    (wheel,) = dist.glob("*.whl")
    (tarball,) = dist.glob("*.tar.gz")
    return {"wheel": wheel, "collection": tarball}


@pytest.fixture(scope="module")
def installed(artifacts, tmp_path_factory) -> Path:
    """A fresh virtualenv with the wheel and its dependencies; its bin/ directory."""
    venv = tmp_path_factory.mktemp("installed") / "venv"
    wheelhouse = paths.cache_dir() / "pip" / "installed-wheel"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    run([*pip, "download", "--quiet", "--dest", wheelhouse, artifacts["wheel"]], cwd=venv.parent)
    (wheelhouse / artifacts["wheel"].name).unlink(missing_ok=True)  # this build is installed from dist/
    started = time.monotonic()
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=venv.parent)
    # --no-compile: byte-compiling the ansible package's ~30,000 modules is most of an install's time.
    run([*pip, "--python", venv / "bin" / "python", "install", "--quiet", "--no-compile", "--no-index",
         "--find-links", wheelhouse, artifacts["wheel"]], cwd=venv.parent)
    print(f"fresh virtualenv with the wheel and its dependencies in {time.monotonic() - started:.1f} s")
    return venv / "bin"


def test_the_installed_wheel_finds_the_collection_it_carries(installed, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    where = run([installed / "python", "-c", "from rocm_fleet.collection import locate; print(locate().root)"],
                cwd=empty, env=outside_the_checkout(tmp_path)).stdout.strip()
    root = Path(where)
    assert root.is_relative_to(installed.parent), where
    assert (root / "playbooks" / "drift.yml").is_file() and (root / "ansible.cfg").is_file()
    assert not list(root.parents[2].rglob("*.secret.asc"))


def test_installed_drift_checks_the_lab_from_an_empty_directory(compliant_lab, installed, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = subprocess.run(
        [installed / "rocm-fleet", "drift", "-i", LAB_INVENTORY, "--limit", ",".join(HOSTS), "--format", "json"],
        cwd=empty, env=outside_the_checkout(tmp_path), capture_output=True, text=True, timeout=600,
    )
    # The converged lab (compliant_lab: site.yml ran, nothing pending) is what the inventory declares, and the
    # checkout's drift finds every host compliant there (test_newest_ansible_core.py). docs/drift.md's exit status:
    # 0 = no host drifted and every host was reached; 2 would be drift found by the installed copy alone (a check
    # it runs differently, a file the wheel lacks), 3 a host it could not reach, 1 a command that could not run.
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((empty / "drift.json").read_text())
    assert sorted(report["hosts"]) == sorted(HOSTS)
    for host, found in report["hosts"].items():
        assert found["status"] == "compliant", (host, found["error"], found["checks"])
        assert found["checks"] or found["passed"], host
        assert found["gpu"]["count"] == profile_gpus(host), host
    assert sorted(path.name for path in empty.iterdir()) == ["drift.json"]


def test_installed_lab_command_reports_and_refuses_what_needs_a_checkout(lab, installed, tmp_path):
    env = outside_the_checkout(tmp_path)
    status = run([installed / "rocm-fleet", "lab", "status", "--json"], cwd=tmp_path, env=env)
    states = {row["host"]: row["state"] for row in json.loads(status.stdout)}
    assert {states[host] for host in HOSTS} == {"running"}
    # The lab's secret keys are the checkout's alone: up says where to find them, before it changes anything.
    up = subprocess.run([installed / "rocm-fleet", "lab", "up"], cwd=tmp_path, env=env, capture_output=True,
                        text=True, timeout=60)
    assert up.returncode == 1 and "ROCM_FLEET_LAB_KEYS" in up.stderr, up.stdout + up.stderr


@pytest.fixture(scope="module")
def collections_path(artifacts, tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("collections")
    # As a user away from the checkout: with the checkout's ansible.cfg (tests/run-all exports ANSIBLE_CONFIG),
    # ansible-galaxy finds rocm_fleet.core already installed in its collections path and installs nothing.
    run([BIN / "ansible-galaxy", "collection", "install", "--no-deps", "-p", target, artifacts["collection"]],
        cwd=target, env=outside_the_checkout(tmp_path_factory.mktemp("galaxy")))
    assert (target / "ansible_collections" / "rocm_fleet" / "core" / "MANIFEST.json").is_file()
    return target


def by_fqcn(collections_path: Path, tmp_path: Path, command: list) -> dict:
    """An ansible command run from an empty directory with the installed collection only; its JSON output."""
    empty = tmp_path / "empty"
    empty.mkdir(exist_ok=True)
    env = outside_the_checkout(tmp_path, ANSIBLE_COLLECTIONS_PATH=str(collections_path),
                               ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="json",
                               ANSIBLE_SHOW_CUSTOM_STATS="1",
                               PATH=f"{BIN}:{os.environ.get('PATH', '')}")
    return json.loads(run(command, cwd=empty, env=env).stdout)


def test_the_installed_collections_gpu_facts_by_fqcn(lab, collections_path, tmp_path):
    output = by_fqcn(collections_path, tmp_path, [BIN / "ansible", "-i", LAB_INVENTORY, ",".join(HOSTS),
                                                  "-m", "rocm_fleet.core.gpu_facts", "-a", "timeout=30"])
    results = output["plays"][0]["tasks"][0]["hosts"]
    assert sorted(results) == sorted(HOSTS)
    for host, result in results.items():
        assert result["ansible_facts"]["gpu"]["count"] == profile_gpus(host), (host, result.get("msg"))


def test_the_installed_collections_drift_playbook_by_fqcn(lab, collections_path, tmp_path):
    output = by_fqcn(collections_path, tmp_path, [BIN / "ansible-playbook", "-i", LAB_INVENTORY, "--limit",
                                                  ",".join(HOSTS), "rocm_fleet.core.drift"])
    assert output["plays"][0]["play"]["path"].startswith(str(collections_path)), output["plays"][0]["play"]
    assert {host: (stats["failures"], stats["unreachable"]) for host, stats in output["stats"].items()} == {
        host: (0, 0) for host in HOSTS
    }
    (evaluated,) = [task["hosts"] for task in output["plays"][0]["tasks"] if task["task"]["name"].endswith(
        "compliance : Evaluate the host against what the inventory declares")]
    assert sorted(evaluated) == sorted(HOSTS)
    for host, result in evaluated.items():
        # drift.yml folds each check's passing items into one result that counts them (detail=findings).
        assert result["summary"]["total"] == sum(item.get("items", 1) for item in result["results"]) > 0, host
        assert result["summary"]["error"] == 0, (host, result["summary"])
    # The summary an AWX workflow branches on, from the installed playbook.
    summary = output["global_custom_stats"]["rocm_fleet_drift"]
    assert summary["hosts"] == len(HOSTS) and summary["not_checked"] == 0, summary


def test_the_installed_collections_site_playbook_by_fqcn(collections_path, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    env = outside_the_checkout(tmp_path, ANSIBLE_COLLECTIONS_PATH=str(collections_path))
    listed = run([BIN / "ansible-playbook", "-i", LAB_INVENTORY, "rocm_fleet.core.site", "--list-tasks"],
                 cwd=empty, env=env).stdout
    for stage in ("Gather GPU facts", "rocm_fleet.core.preflight : ", "Apply the roles the plan runs on the host"):
        assert stage in listed, listed
