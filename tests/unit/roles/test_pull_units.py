"""roles/pull's unit files in git mode (ansible-pull first), rendered by Ansible from the role's own data.

The lab test (tests/integration/lab/test_pull_mode.py) runs the collection mode end to end; git mode needs a
site repository, so here its units are rendered on localhost and checked with systemd-analyze verify, and
the ansible-pull command line is read back as systemd splits it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
ROLE = REPO / "roles" / "pull"


def render(tmp_path: Path, **overrides) -> dict[str, str]:
    """The service, timer and environment of the role for ``overrides`` (as -e), as Ansible renders them."""
    out = tmp_path / "units"
    out.mkdir()
    play = [{
        "hosts": "localhost",
        "gather_facts": False,
        "vars_files": [str(ROLE / "defaults" / "main.yml"), str(ROLE / "vars" / "main.yml")],
        "tasks": [{
            "name": "Render",
            "ansible.builtin.template": {"src": f"{ROLE}/templates/{{{{ item }}}}.j2", "dest": f"{out}/{{{{ item }}}}",
                                         "mode": "0644"},
            "loop": ["rocm-fleet-pull.service", "rocm-fleet-pull.timer", "environment"],
        }],
    }]
    playbook = tmp_path / "render.yml"
    playbook.write_text(yaml.safe_dump(play))
    result = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
         "-e", f"ansible_python_interpreter={sys.executable}",
         "-e", json.dumps({"pull_inventory_source": str(tmp_path), **overrides}), str(playbook)], cwd=REPO,
        env={**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg")}, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return {path.name: path.read_text() for path in out.iterdir()}


def directive(unit: str, key: str) -> list[str]:
    return [line.split("=", 1)[1] for line in unit.splitlines() if line.startswith(f"{key}=")]


def test_git_mode_runs_ansible_pull_only_if_changed_then_the_check_from_the_checkout(tmp_path):
    prefix = tmp_path / "prefix"
    (prefix / "lib" / "bin").mkdir(parents=True)
    # systemd-analyze verify wants the commands to exist: the real ansible-pull of this venv stands in.
    (prefix / "lib" / "bin" / "ansible-pull").symlink_to(BIN / "ansible-pull")
    units = render(tmp_path, pull_source="git", pull_prefix=str(prefix),
                   pull_git_url="https://git.example.invalid/site.git", pull_git_branch="production",
                   pull_git_verify_commit=True, pull_git_sleep_seconds=120)
    service = units["rocm-fleet-pull.service"]
    [pull] = directive(service, "ExecStartPre")
    argv = shlex.split(pull)
    assert argv[0] == f"{prefix}/lib/bin/ansible-pull"
    assert argv[argv.index("--url") + 1] == "https://git.example.invalid/site.git"
    assert argv[argv.index("--checkout") + 1] == "production"
    assert argv[argv.index("--sleep") + 1] == "120"
    assert {"--only-if-changed", "--verify-commit"} <= set(argv) and argv[-1] == "site.yml"
    [check] = directive(service, "ExecStart")
    assert "--inventory /var/lib/rocm-fleet/pull/checkout/inventory " in check
    assert "ROCM_FLEET_COLLECTION_ROOT=/var/lib/rocm-fleet/pull/checkout\n" in units["environment"]
    if not shutil.which("systemd-analyze"):
        pytest.fail("systemd-analyze is missing: ./dev installs systemd")
    paths = [str(tmp_path / "units" / name) for name in ("rocm-fleet-pull.service", "rocm-fleet-pull.timer")]
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", *paths], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and "rocm-fleet-pull" not in result.stderr, result.stderr


def test_collection_mode_has_no_ansible_pull_and_leaves_out_unset_options(tmp_path):
    units = render(tmp_path, pull_interval_seconds=900)
    service, timer = units["rocm-fleet-pull.service"], units["rocm-fleet-pull.timer"]
    assert directive(service, "ExecStartPre") == []
    assert directive(timer, "OnUnitActiveSec") == ["900s"] and directive(timer, "RandomizedDelaySec") == ["600s"]
    assert "ROCM_FLEET_COLLECTION_ROOT=/opt/rocm-fleet/pull/collections/ansible_collections/rocm_fleet/core" in (
        units["environment"])
