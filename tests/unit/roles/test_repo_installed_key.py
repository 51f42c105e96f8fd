"""The repo role trusts a key installed on an earlier run only while it holds exactly the pinned keys.

A converged host then reads nothing from the key URL, so a mirror that is down
fails only the hosts that must download packages; a newly pinned key (a rotation)
makes the host fetch the key again, so the next key arrives before the mirror uses it.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from fleet_testing.roles import load_yaml, render

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


def pinned(key: dict, pins: list[str] | None = None) -> bool:
    return render(
        REPO_VARS["__repo_installed_key_pinned"],
        __repo_installed_key=key,
        __repo_installed_key_text=REPO_VARS["__repo_installed_key_text"],
        __repo_pinned_fingerprints=pins or [PINNED],
    )


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


# Lab keys the repo role does not list yet: amdrocm-lab signs the lab mirror's ROCm Core SDK 10.x
# repositories, a stream the repo role does not install yet. Whoever wires the stream into the role adds
# its fingerprint to __repo_lab_fingerprints and empties this (the strict xfail below then fails until then).
NOT_YET_IN_THE_REPO_ROLE = {"0AF0F0543594E3BFEC48725D1A340DEC657D9791"}  # amdrocm-lab


def _lab_key_fingerprints():
    from ansible_collections.rocm_fleet.core.plugins.module_utils.repo.openpgp import keyring_fingerprints

    return sorted(
        fingerprint for path in KEYS.glob("*.pub.asc") for fingerprint in keyring_fingerprints(path.read_bytes())
    )


def test_the_lab_fingerprints_are_those_of_the_lab_keys():
    """roles/repo/vars/main.yml lists exactly the keys of src/rocm_fleet/lab/keys (their public files define them),
    but for those named in NOT_YET_IN_THE_REPO_ROLE."""
    derived = _lab_key_fingerprints()
    assert set(derived) >= NOT_YET_IN_THE_REPO_ROLE
    assert sorted(REPO_VARS["__repo_lab_fingerprints"]) == sorted(set(derived) - NOT_YET_IN_THE_REPO_ROLE)
    assert len(derived) >= 5


@pytest.mark.xfail(
    strict=True,
    reason="roles/repo/vars/main.yml does not list the amdrocm-lab key yet: the repo role "
    "does not refuse it outside the lab until the 10.x stream is wired in (then drop this marker)",
)
def test_the_repo_role_refuses_every_lab_key():
    assert sorted(REPO_VARS["__repo_lab_fingerprints"]) == _lab_key_fingerprints()


def test_the_key_path_is_the_family_keyring():
    assert render(REPO_VARS["__repo_installed_key_path"], __repo_apt_keyring="/etc/apt/keyrings/rocm.asc") == (
        "/etc/apt/keyrings/rocm.asc"
    )
    assert render(REPO_VARS["__repo_installed_key_path"], __repo_rpm_key_path="/etc/pki/rpm-gpg/RPM-GPG-KEY-rocm") == (
        "/etc/pki/rpm-gpg/RPM-GPG-KEY-rocm"
    )
