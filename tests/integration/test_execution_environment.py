"""execution-environment.yml: ansible-builder writes a build context holding the collection and its requirements.

No image is built (no container engine runs here): the collection tarball is built from this checkout as the
file's comment says, then ``ansible-builder create`` writes the Containerfile and its context, which must hold
the tarball, the galaxy, Python and bindep requirements, and the pinned ansible-core and ansible-runner. The
bounds must agree with pyproject.toml, meta/runtime.yml and galaxy.yml.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
EE_FILE = REPO / "execution-environment.yml"

pytestmark = pytest.mark.skipif(not (BIN / "ansible-builder").exists(), reason="ansible-builder is not installed")


def _pyproject_bound(name: str) -> str:
    text = (REPO / "pyproject.toml").read_text()
    return re.search(rf'"({re.escape(name)}>=[0-9.]+)"', text).group(1)


@pytest.fixture(scope="module")
def context(tmp_path_factory) -> Path:
    """The build context, from a copy of the EE file and the files it names beside the built tarball."""
    work = tmp_path_factory.mktemp("ee")
    definition = yaml.safe_load(EE_FILE.read_text())
    for name in (definition["dependencies"]["python"], definition["dependencies"]["system"], EE_FILE.name):
        shutil.copy(REPO / name, work / name)
    build = subprocess.run(
        [str(BIN / "ansible-galaxy"), "collection", "build", "--force", "--output-path",
         str(work / "build" / "collection"), str(REPO)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    create = subprocess.run(
        [str(BIN / "ansible-builder"), "create", "--file", str(work / EE_FILE.name), "--context",
         str(work / "context"), "--output-filename", "Containerfile"],
        cwd=work, capture_output=True, text=True, timeout=300,
    )
    assert create.returncode == 0, create.stdout + create.stderr
    assert "No matches" not in create.stdout + create.stderr, "the collection tarball did not reach the context"
    return work / "context"


def test_the_context_holds_the_collection_tarball_and_its_requirements(context):
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    tarball_name = f"{galaxy['namespace']}-{galaxy['name']}-{galaxy['version']}.tar.gz"
    requirements = yaml.safe_load((context / "_build" / "requirements.yml").read_text())
    assert requirements["collections"] == [{"name": f"rocm_fleet/{tarball_name}", "type": "file"}]
    with tarfile.open(context / "_build" / "rocm_fleet" / tarball_name) as tarball:
        manifest = json.load(tarball.extractfile("MANIFEST.json"))["collection_info"]
        names = set(tarball.getnames())
        meta_ee = yaml.safe_load(tarball.extractfile("meta/execution-environment.yml"))
    assert (manifest["namespace"], manifest["name"], manifest["version"]) == ("rocm_fleet", "core", galaxy["version"])
    assert manifest["dependencies"] == galaxy["dependencies"]
    # An EE that installs the collection from a Galaxy server finds the same requirement files in it.
    assert meta_ee["dependencies"] == {"python": "requirements.txt", "system": "bindep.txt"}
    assert {"requirements.txt", "bindep.txt", "plugins/modules/node_compliance.py", "playbooks/drift.yml"} <= names

    assert (context / "_build" / "requirements.txt").read_text() == (REPO / "requirements.txt").read_text()
    bindep = (context / "_build" / "bindep.txt").read_text()
    assert "openssh-clients [platform:rpm]" in bindep and "openssh-client [platform:dpkg]" in bindep


def test_the_containerfile_installs_the_collection_python_and_system_dependencies(context):
    containerfile = (context / "Containerfile").read_text()
    core, runner = _pyproject_bound("ansible-core"), _pyproject_bound("ansible-runner")
    assert f'ARG ANSIBLE_INSTALL_REFS="{core} {runner}"' in containerfile
    assert "ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml" in containerfile
    assert "COPY _build /build" in containerfile
    assert "introspect --user-pip=requirements.txt --user-bindep=bindep.txt" in containerfile
    assert "RUN /output/scripts/install-from-bindep" in containerfile


def test_the_bounds_agree_with_pyproject_runtime_and_galaxy():
    runtime = yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())
    core = _pyproject_bound("ansible-core")
    assert runtime["requires_ansible"] == f">={core.split('>=')[1]}.0"
    pyproject = (REPO / "pyproject.toml").read_text()
    for line in (REPO / "requirements.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            assert f'"{line}"' in pyproject, f"requirements.txt {line!r} is not pyproject.toml's bound"
    collections = yaml.safe_load((REPO / "requirements.yml").read_text())["collections"]
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    assert {entry["name"]: entry["version"] for entry in collections} == galaxy["dependencies"]
