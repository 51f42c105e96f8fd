"""The repo role trusts a key installed on an earlier run only while it holds exactly the pinned keys.

A converged host then reads nothing from the key URL, so a mirror that is down
fails only the hosts that must download packages; a newly pinned key (a rotation)
makes the host fetch the key again, so the next key arrives before the mirror uses it.
"""

from __future__ import annotations

import base64
from pathlib import Path

from fleet_testing.roles import evaluate, find_task, load_yaml, render

KEYS = Path(__file__).resolve().parents[3] / "src" / "rocm_fleet" / "lab" / "keys"
REPO_VARS = load_yaml("repo/vars/main.yml")
# The lab's ROCm key (inventory/lab/group_vars/all/lab_mirror.yml pins it) and its next key.
PINNED = "6BB40CEB51EC0E89B75E7214C2CB197087E7408C"
NEXT = "5A2413C48C8A7F5DE7BB72E41A59AF35C3B49428"


def installed(path: Path | None) -> dict:
    """The slurp result of the installed key: content when the file exists, a failure otherwise."""
    if path is None:
        return {"failed": True, "msg": "file not found"}
    return {"content": base64.b64encode(path.read_bytes()).decode()}


FETCH = find_task("repo/tasks/signing_key.yml", "Fetch the signing keys that no pinned installed key stands for")


def pinned(key: dict, pins: list[str] | None = None) -> bool:
    """Whether tasks/signing_key.yml keeps the installed key (its fetch is skipped for this slurp result)."""
    return not evaluate(FETCH["when"], item=dict(key, item={"name": "rocm", "pins": pins or [PINNED]}))


def test_the_installed_pinned_key_is_reused():
    assert pinned(installed(KEYS / "rocm-lab.pub.asc")) is True


def test_another_key_or_none_is_fetched_again():
    assert pinned(installed(KEYS / "wrong-lab.pub.asc")) is False
    assert pinned(installed(None)) is False
    assert pinned({"skipped": True}) is False


def test_a_newly_pinned_key_makes_the_host_fetch_again():
    assert pinned(installed(KEYS / "rocm-lab.pub.asc"), [PINNED, NEXT]) is False
    both = {"content": base64.b64encode(
        (KEYS / "rocm-lab.pub.asc").read_bytes() + (KEYS / "rocm-next-lab.pub.asc").read_bytes()).decode()}
    assert pinned(both, [PINNED, NEXT]) is True
    # The rotation ends: the old key is no longer pinned, so the keyring holding it is replaced.
    assert pinned(both, [NEXT]) is False


def test_the_lab_fingerprints_are_those_of_the_lab_keys():
    """roles/repo/vars/main.yml lists exactly the keys of src/rocm_fleet/lab/keys (their public files define them)."""
    from ansible_collections.rocm_fleet.core.plugins.module_utils.repo.openpgp import keyring_fingerprints

    derived = sorted(fingerprint for path in KEYS.glob("*.pub.asc") for fingerprint in keyring_fingerprints(
        path.read_bytes()))
    assert sorted(REPO_VARS["__repo_lab_fingerprints"]) == derived
    assert len(derived) >= 5


def test_the_key_read_is_the_inventorys_else_the_fetched_else_the_installed():
    lab_key = (KEYS / "rocm-lab.pub.asc").read_text()
    keys = [{"name": "rocm", "content": ""}, {"name": "amdrocm", "content": "inventory text"}]
    slurped = {"results": [dict(installed(KEYS / "rocm-lab.pub.asc"), item=keys[0])]}
    not_fetched = {"results": [{"skipped": True, "item": slurped["results"][0]}]}
    texts = render("{{ keys | rocm_fleet.core.rocm_repo_key_texts(slurped, fetched) }}", keys=keys, slurped=slurped,
                   fetched=not_fetched)
    assert texts == {"rocm": lab_key, "amdrocm": "inventory text"}
    fetched = {"results": [{"content": "fetched text", "item": slurped["results"][0]}]}
    texts = render("{{ keys | rocm_fleet.core.rocm_repo_key_texts(slurped, fetched) }}", keys=keys, slurped=slurped,
                   fetched=fetched)
    assert texts["rocm"] == "fetched text"


def test_the_key_path_is_the_family_keyring():
    assert render(REPO_VARS["__repo_key_path_field"], __repo_tasks="apt") == "apt_keyring"
    assert render(REPO_VARS["__repo_key_path_field"], __repo_tasks="dnf") == "rpm_path"
