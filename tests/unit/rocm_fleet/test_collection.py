"""One function finds the collection: the checkout's own, else the copy the wheel carries, else a clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocm_fleet import cli, collection
from rocm_fleet.lab import paths

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def installed(tmp_path, monkeypatch) -> Path:
    """rocm_fleet as the wheel lays it out in site-packages, with no checkout above it; the bundled collection."""
    package = tmp_path / "lib" / "python3" / "site-packages" / "rocm_fleet"
    bundled = package / "_collection" / collection.COLLECTION_DIR
    bundled.mkdir(parents=True)
    (bundled / "MANIFEST.json").write_text(json.dumps({"collection_info": {"namespace": "rocm_fleet"}}))
    monkeypatch.setattr(collection, "__file__", str(package / "collection.py"))
    monkeypatch.setattr(collection, "BUNDLED_COLLECTIONS_PATH", package / "_collection")
    for variable in (collection.ROOT_VARIABLE, "ROCM_FLEET_LAB_INVENTORY"):
        monkeypatch.delenv(variable, raising=False)
    return bundled


def test_a_checkout_is_its_own_collection(monkeypatch):
    monkeypatch.delenv(collection.ROOT_VARIABLE, raising=False)
    found = collection.locate()
    assert found.root == found.checkout == REPO
    assert (found.collections_path / collection.COLLECTION_DIR).resolve() == REPO
    assert (found.root / "playbooks" / "drift.yml").is_file()  # what rocm_fleet.core.drift names


def test_installed_it_is_the_copy_the_wheel_carries(installed):
    found = collection.locate()
    assert (found.root, found.checkout) == (installed, None)
    assert found.collections_path / collection.COLLECTION_DIR == installed


def test_installed_without_the_bundled_copy_it_says_what_to_do(installed):
    (installed / "MANIFEST.json").unlink()
    with pytest.raises(collection.NotInstalled, match=r"finds no rocm_fleet\.core collection.*Install the wheel"):
        collection.locate()


def test_a_root_variable_that_names_no_checkout_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(collection.ROOT_VARIABLE, str(tmp_path))
    with pytest.raises(collection.NotInstalled, match=f"{collection.ROOT_VARIABLE}={tmp_path} is neither a checkout"):
        collection.locate()
    # A directory with a MANIFEST.json that is not rocm_fleet/core under ansible_collections is no collection either.
    (tmp_path / "MANIFEST.json").write_text("{}")
    with pytest.raises(collection.NotInstalled, match="nor an installed collection"):
        collection.locate()


def test_the_root_variable_names_an_installed_collection(tmp_path, monkeypatch):
    """Pull mode names the collection it installed from the tarball (roles/pull: the service's environment)."""
    installed = tmp_path / "collections" / collection.COLLECTION_DIR
    installed.mkdir(parents=True)
    (installed / "MANIFEST.json").write_text("{}")
    monkeypatch.setenv(collection.ROOT_VARIABLE, str(installed))
    assert collection.locate() == collection.Collection(root=installed, collections_path=tmp_path / "collections",
                                                        checkout=None)
    assert collection.checkout() is None


def test_the_root_variable_names_another_checkout(tmp_path, monkeypatch):
    other = tmp_path / "other"
    (other / "collections" / collection.COLLECTION_DIR).parent.mkdir(parents=True)
    (other / "collections" / collection.COLLECTION_DIR).symlink_to("../../..")
    (other / "galaxy.yml").write_text("namespace: rocm_fleet\n")
    monkeypatch.setenv(collection.ROOT_VARIABLE, str(other))
    assert collection.locate().root == other


def test_installed_the_lab_inventory_comes_from_the_variable_or_a_clear_error(installed, tmp_path, monkeypatch):
    with pytest.raises(collection.NotInstalled, match="set ROCM_FLEET_LAB_INVENTORY"):
        paths.inventory_dir()
    monkeypatch.setenv("ROCM_FLEET_LAB_INVENTORY", str(tmp_path))
    assert paths.inventory_dir() == tmp_path


def test_the_command_says_what_is_missing_instead_of_a_traceback(installed, monkeypatch, capsys):
    monkeypatch.setattr("os.geteuid", lambda: 0)
    assert cli.main(["lab", "up"]) == 2  # fails on the inventory, before it starts or builds anything
    assert "rocm-fleet: the lab's inventory (inventory/lab) is in a checkout" in capsys.readouterr().err
