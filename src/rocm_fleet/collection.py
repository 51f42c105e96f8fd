"""Where the rocm_fleet.core collection is: the checkout this code runs from, or the copy the wheel carries.

Run from a checkout (an editable install, PYTHONPATH=src), the checkout is the
collection: collections/ansible_collections/rocm_fleet/core links back to its root,
so an edit is used at once. Installed from the wheel, there is no checkout: the
wheel carries the built collection (what ``ansible-galaxy collection build`` puts in
the tarball, honouring galaxy.yml's build_ignore; setup.py makes it) under
rocm_fleet/_collection. This module is the one place that decides between them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# A checkout other than the one this code runs from (a benchmark's worktree, a test's copy), or an
# installed rocm_fleet.core (pull mode's, from the tarball: <path>/ansible_collections/rocm_fleet/core).
ROOT_VARIABLE = "ROCM_FLEET_COLLECTION_ROOT"
COLLECTION_DIR = Path("ansible_collections", "rocm_fleet", "core")
# Relative to the package: setup.py's build_py writes the built collection here in the wheel.
BUNDLED_COLLECTIONS_PATH = Path(__file__).resolve().parent / "_collection"


class NotInstalled(RuntimeError):
    """A file rocm-fleet needs is neither in a checkout nor in the installed package; the message says what to do."""


@dataclass(frozen=True)
class Collection:
    root: Path  # the collection itself: playbooks/, roles/, plugins/, ansible.cfg
    collections_path: Path  # what ANSIBLE_COLLECTIONS_PATH names so that rocm_fleet.core is ``root``
    checkout: Path | None  # the git checkout, when run from one


def _installed(path: Path) -> bool:
    """An installed collection: <collections path>/ansible_collections/rocm_fleet/core with its MANIFEST.json."""
    return (path / "MANIFEST.json").is_file() and path.parts[-3:] == COLLECTION_DIR.parts


def checkout() -> Path | None:
    """The checkout this code runs from, or None when it runs installed (site-packages, or a named collection)."""
    override = os.environ.get(ROOT_VARIABLE)
    root = Path(override).resolve() if override else Path(__file__).resolve().parents[2]
    if (root / "galaxy.yml").is_file() and (root / "collections" / COLLECTION_DIR).is_dir():
        return root
    if override and not _installed(root):
        raise NotInstalled(
            f"{ROOT_VARIABLE}={override} is neither a checkout of rocm-fleet (galaxy.yml and"
            f" collections/{COLLECTION_DIR} there) nor an installed collection (a {COLLECTION_DIR} directory with"
            " its MANIFEST.json): name one of them, or unset it"
        )
    return None


def locate() -> Collection:
    """The collection every ansible-playbook run of rocm-fleet uses."""
    root = checkout()
    if root:
        return Collection(root=root, collections_path=root / "collections", checkout=root)
    override = os.environ.get(ROOT_VARIABLE)
    if override:  # an installed collection: checkout() refused anything else
        named = Path(override).resolve()
        return Collection(root=named, collections_path=named.parents[2], checkout=None)
    bundled = BUNDLED_COLLECTIONS_PATH / COLLECTION_DIR
    if (bundled / "MANIFEST.json").is_file():
        return Collection(root=bundled, collections_path=BUNDLED_COLLECTIONS_PATH, checkout=None)
    raise NotInstalled(
        f"rocm-fleet finds no rocm_fleet.core collection: not a checkout, and {bundled} is missing. Install the"
        " wheel (pip install rocm-fleet), which carries the collection, or run from a checkout of the repository"
    )


def checkout_path(relative: str, what: str, variable: str | None = None) -> Path:
    """A file that only a checkout has (the lab's inventory, pyproject.toml); fails naming ``what`` and the way out."""
    root = checkout()
    if root:
        return root / relative
    instead = f", or set {variable} to one" if variable else ""
    raise NotInstalled(
        f"{what} ({relative}) is in a checkout of the repository only, and rocm-fleet runs installed here:"
        f" run it from a checkout{instead}"
    )
