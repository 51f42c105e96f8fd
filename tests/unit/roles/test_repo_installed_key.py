"""The repo role trusts a key installed on an earlier run only while it carries the pinned fingerprint.

A converged host then reads nothing from the key URL, so a mirror that is down
fails only the hosts that must download packages.
"""

from __future__ import annotations

import base64
from pathlib import Path

from conftest import load_yaml, render

KEYS = Path(__file__).resolve().parents[3] / "src" / "rocm_fleet" / "lab" / "keys"
REPO_VARS = load_yaml("repo/vars/main.yml")
# The lab's ROCm key (inventory/lab/group_vars/all/lab_mirror.yml pins it).
PINNED = "6BB40CEB51EC0E89B75E7214C2CB197087E7408C"


def installed(path: Path | None) -> dict:
    """The slurp result of the installed key: content when the file exists, a failure otherwise."""
    if path is None:
        return {"failed": True, "msg": "file not found"}
    return {"content": base64.b64encode(path.read_bytes()).decode()}


def pinned(key: dict) -> bool:
    return render(
        REPO_VARS["__repo_installed_key_pinned"],
        __repo_installed_key=key,
        __repo_installed_key_text=REPO_VARS["__repo_installed_key_text"],
        __repo_pinned_fingerprint=PINNED,
    )


def test_the_installed_pinned_key_is_reused():
    assert pinned(installed(KEYS / "rocm-lab.pub.asc")) is True


def test_another_key_or_none_is_fetched_again():
    assert pinned(installed(KEYS / "wrong-lab.pub.asc")) is False
    assert pinned(installed(None)) is False
    assert pinned({"skipped": True}) is False


def test_the_key_path_is_the_family_keyring():
    assert render(REPO_VARS["__repo_installed_key_path"], __repo_apt_keyring="/etc/apt/keyrings/rocm.asc") == (
        "/etc/apt/keyrings/rocm.asc"
    )
    assert render(REPO_VARS["__repo_installed_key_path"], __repo_rpm_key_path="/etc/pki/rpm-gpg/RPM-GPG-KEY-rocm") == (
        "/etc/pki/rpm-gpg/RPM-GPG-KEY-rocm"
    )
