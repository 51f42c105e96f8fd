"""The pull_archive action: one archive per distinct input for the batch, 0600 in the run's private temporary
directory, nothing written in check mode, and a failure that names the hosts."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from ansible.errors import AnsibleActionFail
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from ansible_collections.rocm_fleet.core.plugins.action import pull_archive


@pytest.fixture
def local_tmp(tmp_path, monkeypatch) -> Path:
    """Ansible's local_tmp for the run: a private directory removed when the run ends."""
    directory = tmp_path / "local-tmp"
    directory.mkdir(mode=0o700)
    monkeypatch.setattr(pull_archive.C, "DEFAULT_LOCAL_TMP", str(directory))
    return directory


@pytest.fixture
def site(tmp_path) -> Path:
    """A playbook directory with files/wheelhouse/3.11 (pip and one more wheel) and an inventory file."""
    wheels = tmp_path / "site" / "files" / "wheelhouse" / "3.11"
    wheels.mkdir(parents=True)
    for name in ("pip-25.1-py3-none-any.whl", "rocm_fleet-0.1.0-py3-none-any.whl"):
        with zipfile.ZipFile(wheels / name, "w") as wheel:
            wheel.writestr("x/__init__.py", name)
    (tmp_path / "site" / "hosts.yml").write_text("all: {hosts: {gpu-01: {}, gpu-02: {}}}\n")
    return tmp_path / "site"


def run(site: Path, hosts: list[dict], check_mode: bool = False) -> dict:
    """One run of the action as the task executor would start it, with a stand-in task and connection."""
    task_vars = {"inventory_hostname": hosts[0]["host"] if hosts else "gpu-01"}
    task = SimpleNamespace(args={"hosts": hosts}, async_val=0, check_mode=check_mode, action="pull_archive",
                           get_search_path=lambda: [str(site)])
    connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir=None))
    loader = DataLoader()
    action = pull_archive.ActionModule(task, connection, None, loader, Templar(loader=loader, variables=task_vars))
    return action.run(task_vars=task_vars)


def host(name: str, site: Path, wheels: str = "", inventory: str = "") -> dict:
    return {"host": name, "python": "3.11", "wheels": wheels or str(site / "files" / "wheelhouse" / "3.11"),
            "inventory": inventory or str(site / "hosts.yml")}


def test_hosts_with_the_same_inputs_get_one_archive_written_root_only(site, local_tmp):
    result = run(site, [host("gpu-01", site), host("gpu-02", site)])
    assert not result.get("failed") and result["changed"] is False
    assert result["msg"] == "1 archive for 2 hosts"
    archives = result["archives"]
    assert archives["gpu-01"] == archives["gpu-02"]
    path = Path(archives["gpu-01"]["path"])
    assert path.name == archives["gpu-01"]["name"] and path.parent.parent == local_tmp
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert archives["gpu-01"]["inventory"] == "file"
    assert archives["gpu-01"]["wheels"] == ["pip-25.1-py3-none-any.whl", "rocm_fleet-0.1.0-py3-none-any.whl"]


def test_check_mode_writes_nothing_and_gives_the_same_digest(site, local_tmp):
    checked = run(site, [host("gpu-01", site)], check_mode=True)
    assert checked["archives"]["gpu-01"]["path"] is None and list(local_tmp.iterdir()) == []
    assert checked["msg"] == "1 archive for 1 host (check mode: digests only)"
    assert checked["archives"]["gpu-01"]["digest"] == run(site, [host("gpu-01", site)])["archives"]["gpu-01"]["digest"]


def test_relative_paths_are_found_as_the_copy_action_finds_its_source(site, local_tmp, monkeypatch):
    monkeypatch.chdir(site.parent)
    # The wheels in the playbook's files/, the inventory where the run started.
    found = run(site, [host("gpu-01", site, wheels="wheelhouse/3.11", inventory="site/hosts.yml")])
    assert found["archives"]["gpu-01"]["digest"] == run(site, [host("gpu-01", site)])["archives"]["gpu-01"]["digest"]


def test_a_missing_wheelhouse_fails_naming_the_host_and_what_to_do(site, local_tmp):
    result = run(site, [host("gpu-01", site), host("gpu-02", site, wheels=str(site / "wheelhouse" / "3.13"))])
    assert result["failed"] and result["changed"] is False and "archives" not in result
    assert result["msg"].startswith("host gpu-02 (Python 3.11): the wheelhouse has no directory ")
    assert "pull_wheelhouse" in result["msg"]


def test_a_host_without_its_fields_is_refused(site, local_tmp):
    with pytest.raises(AnsibleActionFail, match="missing required arguments: python found in hosts"):
        run(site, [{"host": "gpu-01", "wheels": str(site)}])
    assert os.listdir(local_tmp) == []
