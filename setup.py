"""Build hooks: the wheel carries the built collection, so an installed rocm-fleet runs its playbooks.

pyproject.toml holds the project's metadata; this file only adds what setuptools
cannot say there. ``ansible-galaxy collection build`` decides what the collection
is (galaxy.yml's build_ignore), ``ansible-galaxy collection install`` lays it out
under rocm_fleet/_collection in the wheel (where rocm_fleet.collection finds it),
and the sdist carries the same files, so a wheel built from the sdist bundles the
same collection.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent
BUNDLED_COLLECTIONS_PATH = Path("rocm_fleet", "_collection")


def galaxy(*args: str) -> None:
    """ansible-galaxy of the ansible-core this build runs with (a build requirement in pyproject.toml)."""
    subprocess.run([sys.executable, "-m", "ansible.cli.galaxy", *args], check=True, stdout=subprocess.DEVNULL)


def build_collection(out: Path) -> Path:
    """The collection tarball, exactly as `ansible-galaxy collection build` makes it from this tree."""
    galaxy("collection", "build", "--output-path", str(out), str(ROOT))
    (tarball,) = out.glob("*.tar.gz")
    return tarball


class BuildPyWithCollection(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install runs from the checkout, which is the collection
            return
        with tempfile.TemporaryDirectory() as out:
            target = Path(self.build_lib) / BUNDLED_COLLECTIONS_PATH
            galaxy("collection", "install", "--no-deps", "--force", "-p", str(target), str(build_collection(Path(out))))


class SdistWithCollection(sdist):
    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        """Add every file of the collection (its FILES.json) and galaxy.yml, which the collection build reads."""
        with tempfile.TemporaryDirectory() as out, tarfile.open(build_collection(Path(out))) as tarball:
            listed = json.load(tarball.extractfile("FILES.json"))["files"]
        collection = [entry["name"] for entry in listed if entry["ftype"] == "file"]
        super().make_release_tree(base_dir, sorted({*files, "galaxy.yml", *collection}))


setup(cmdclass={"build_py": BuildPyWithCollection, "sdist": SdistWithCollection})
