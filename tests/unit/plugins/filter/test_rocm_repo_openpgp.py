"""openpgp_fingerprints (plugins/filter/rocm_repo.py), against gpg's own answer for the same keys."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.rocm_fleet.core.plugins.filter.rocm_repo import openpgp_fingerprints

KEYS = Path(__file__).resolve().parents[4] / "src" / "rocm_fleet" / "lab" / "keys"
PUBLIC_KEYS = sorted(KEYS.glob("*.pub.asc"))


def gpg_fingerprints(path: Path) -> list[str]:
    result = subprocess.run(
        ["gpg", "--show-keys", "--with-colons", str(path)], capture_output=True, text=True, check=True
    )
    lines = result.stdout.splitlines()
    # The fpr record that follows each pub record is the primary key's.
    return [lines[i + 1].split(":")[9] for i, line in enumerate(lines) if line.startswith("pub:")]


@pytest.mark.skipif(shutil.which("gpg") is None, reason="gpg is not installed")
@pytest.mark.parametrize("key", PUBLIC_KEYS, ids=lambda path: path.name)
def test_fingerprints_match_gpg(key):
    assert openpgp_fingerprints(key.read_text()) == gpg_fingerprints(key)


def test_keys_differ():
    prints = [openpgp_fingerprints(key.read_text())[0] for key in PUBLIC_KEYS]
    assert len(PUBLIC_KEYS) >= 2
    assert len(set(prints)) == len(prints)


def test_armor_headers_are_skipped():
    text = PUBLIC_KEYS[0].read_text()
    with_header = text.replace(
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n", "-----BEGIN PGP PUBLIC KEY BLOCK-----\nComment: site mirror\n", 1
    )
    assert with_header != text
    assert openpgp_fingerprints(with_header) == openpgp_fingerprints(text)


@pytest.mark.parametrize(
    "text",
    ["", "not a key", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!!\n-----END PGP PUBLIC KEY BLOCK-----\n"],
)
def test_malformed_input_fails(text):
    with pytest.raises(AnsibleFilterError):
        openpgp_fingerprints(text)


def test_truncated_key_fails():
    lines = PUBLIC_KEYS[0].read_text().splitlines()
    body = [line for line in lines if line and not line.startswith(("-----", "="))]
    truncated = "\n".join(
        ["-----BEGIN PGP PUBLIC KEY BLOCK-----", "", body[0][:40], "-----END PGP PUBLIC KEY BLOCK-----"]
    )
    with pytest.raises(AnsibleFilterError):
        openpgp_fingerprints(truncated)


def test_signing_key_filters_wrap_the_shared_decision():
    from ansible_collections.rocm_fleet.core.plugins.filter.rocm_repo import (
        rocm_signing_key_current,
        rocm_signing_key_pins,
        rocm_signing_key_verdict,
    )

    rocm, wrong = (KEYS / "rocm-lab.pub.asc").read_text(), (KEYS / "wrong-lab.pub.asc").read_text()
    pins = rocm_signing_key_pins("6bb4 0ceb 51ec 0e89 b75e 7214 c2cb 1970 87e7 408c", None, None)
    assert pins == {"pins": ["6BB40CEB51EC0E89B75E7214C2CB197087E7408C"], "lab_pins": [], "problem": None}
    assert rocm_signing_key_verdict(rocm, pins["pins"])["problem"] is None
    assert "does not list" in rocm_signing_key_verdict(wrong, pins["pins"])["problem"]
    assert rocm_signing_key_current(rocm, pins["pins"]) is True
    assert rocm_signing_key_current(None, pins["pins"]) is False
