"""roles/pull's install on this machine: the wheels and the inventory copy arrive as one archive, unpacked only when
its digest changes.

The lab test (tests/integration/lab/test_pull_mode.py) installs the real wheelhouse on Debian hosts. Here the role's
preflight and install tasks run against localhost with every path under a temporary directory and a stand-in pip
wheel (its __main__ records what it was asked to install), as root, since the role makes everything root's.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
UNPACK = "Unpack the archive of the wheels and the inventory copy"
# Records the wheels it was given where pip would install them, as `python3 pip-*.whl/pip install ...` runs it.
STAND_IN_PIP = """import json, os, sys
args = sys.argv[1:]
target = args[args.index("--target") + 1]
os.makedirs(os.path.join(target, "bin"), exist_ok=True)
with open(os.path.join(target, "installed.json"), "w") as out:
    json.dump([os.path.basename(arg) for arg in args if arg.endswith(".whl")], out)
"""

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not Path("/usr/bin/python3").exists(),
                                reason="the role makes its files root's and runs pip with /usr/bin/python3")


def python_version() -> str:
    return subprocess.run(["/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def site(tmp_path) -> Path:
    """The site's artifacts: a wheelhouse for this machine's Python, an inventory directory, a collection tarball."""
    wheels = tmp_path / "wheelhouse" / python_version()
    wheels.mkdir(parents=True)
    with zipfile.ZipFile(wheels / "pip-99.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("pip/__main__.py", STAND_IN_PIP)
    with zipfile.ZipFile(wheels / "rocm_fleet-0.1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("rocm_fleet/__init__.py", "")
    inventory = tmp_path / "inventory"
    (inventory / "group_vars").mkdir(parents=True)
    (inventory / "hosts.yml").write_text("gpu_servers: {hosts: {localhost: {}}}\n")
    (inventory / "group_vars" / "all.yml").write_text("secret: one\n")
    manifest = tmp_path / "MANIFEST.json"
    manifest.write_text("{}\n")
    with tarfile.open(tmp_path / "rocm_fleet-core-0.1.0.tar.gz", "w:gz") as tarball:
        tarball.add(manifest, "MANIFEST.json")
    return tmp_path


def install(site: Path, *options: str, **variables) -> dict:
    """The role's preflight and install tasks on localhost; the JSON callback's output."""
    root = site / "host"
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": f"Run the pull role's {part}", "ansible.builtin.include_role": {
            "name": "rocm_fleet.core.pull", "tasks_from": part}} for part in ("preflight", "install")]}]
    playbook = site / "install.yml"
    playbook.write_text(yaml.safe_dump(play))
    settings = {"pull_prefix": f"{root}/opt", "pull_config_dir": f"{root}/etc", "pull_report_dir": f"{root}/var",
                "pull_textfile_dir": f"{root}/textfile", "pull_wheelhouse": str(site / "wheelhouse"),
                "pull_inventory_source": str(site / "inventory"),
                "pull_collection_tarball": str(site / "rocm_fleet-core-0.1.0.tar.gz"), **variables}
    result = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e",
         f"ansible_python_interpreter={sys.executable}", "-e", json.dumps(settings), *options, str(playbook)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
             "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json", "ANSIBLE_LOAD_CALLBACK_PLUGINS": "1"})
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-3000:]
    return json.loads(result.stdout)


def changed_tasks(output: dict) -> list[str]:
    return [task["task"]["name"].removeprefix("rocm_fleet.core.pull : ") for play in output["plays"]
            for task in play["tasks"] if task["hosts"].get("localhost", {}).get("changed")]


def tree(path: Path) -> dict[str, str]:
    """Each file and directory below ``path``: its mode and owner."""
    return {str(item.relative_to(path)): "%o %d" % (stat.S_IMODE(item.lstat().st_mode), item.lstat().st_uid)
            for item in sorted(path.rglob("*"))}


def test_the_archive_installs_once_per_digest_and_leaves_nothing_older(site):
    host = site / "host"
    # --check on a host that has never been in pull mode: the changes are shown, none is made.
    checked = install(site, "--check", "--diff")
    assert "Say what the archive would install" in changed_tasks(checked) and not host.exists()
    [said] = [task["hosts"]["localhost"]["msg"] for task in checked["plays"][0]["tasks"]
              if task["task"]["name"].endswith("Say what the archive would install")]
    assert said.startswith("localhost: would unpack rocm-fleet-pull-") and said.endswith(
        f" and install its 2 wheels for Python {python_version()} into {host}/opt/lib and the inventory copy"
        f" (directory) into {host}/etc/inventory")

    first = install(site)
    assert changed_tasks(first).count(UNPACK) == 1
    assert json.loads((host / "opt/lib/installed.json").read_text()) == [
        "pip-99.0-py3-none-any.whl", "rocm_fleet-0.1.0-py3-none-any.whl"]
    assert tree(host / "etc/inventory") == {"group_vars": "700 0", "group_vars/all.yml": "600 0",
                                            "hosts.yml": "600 0"}
    assert stat.S_IMODE((host / "etc/inventory").stat().st_mode) == 0o700
    assert not (host / "opt/staging").exists() and not (host / "opt/wheels").exists()
    [stamp] = (host / "opt/lib").glob(".rocm-fleet-archive-*")
    assert stamp.read_text().splitlines()[-1] == "inventory: directory"
    assert (host / "opt/collections/ansible_collections/rocm_fleet/core/MANIFEST.json").exists()

    assert changed_tasks(install(site)) == []
    assert changed_tasks(install(site, "--check")) == []

    # One inventory file changed and one gone, and an old release's copied wheels left behind: one unpack, and
    # the install holds exactly the new archive.
    (site / "inventory/group_vars/all.yml").write_text("secret: two\n")
    (site / "inventory/hosts.yml").rename(site / "inventory/hosts.yaml")
    (host / "opt/wheels").mkdir()
    (host / "opt/wheels/old-1.0-py3-none-any.whl").write_text("")
    (host / "opt/lib/old_package").mkdir()
    changed = install(site)
    assert changed_tasks(changed).count(UNPACK) == 1
    assert sorted(tree(host / "etc/inventory")) == ["group_vars", "group_vars/all.yml", "hosts.yaml"]
    assert (host / "etc/inventory/group_vars/all.yml").read_text() == "secret: two\n"
    assert not (host / "opt/wheels").exists() and not (host / "opt/lib/old_package").exists()
    assert [path.name for path in (host / "opt/lib").glob(".rocm-fleet-archive-*")] != [stamp.name]

    # An inventory file: root only too. Git mode reads the checkout's inventory: the copy goes.
    shutil.rmtree(site / "inventory/group_vars")
    install(site, pull_inventory_source=str(site / "inventory/hosts.yaml"))
    assert tree(host / "etc") == {"inventory": "600 0"}
    install(site, pull_source="git", pull_git_url="https://git.example.invalid/site.git")
    assert tree(host / "etc") == {}
