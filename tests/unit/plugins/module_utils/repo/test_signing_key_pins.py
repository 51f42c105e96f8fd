"""Which signing keys a host may trust (signing_key_pins): the repo role's and compliance's one decision."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.repo.signing_key_pins import (
    key_verdict,
    keyring_current,
    keyring_problem,
    pin_decision,
)

KEYS = Path(__file__).resolve().parents[5] / "src" / "rocm_fleet" / "lab" / "keys"
CURRENT = "6BB40CEB51EC0E89B75E7214C2CB197087E7408C"  # rocm-lab
NEXT = "5A2413C48C8A7F5DE7BB72E41A59AF35C3B49428"  # rocm-next-lab
WRONG = "FE2E5E8D5C94865FFB27E7FFA4C5A27761A178A5"  # wrong-lab
AMD = "CA8BB4727A47B4D09B4EE8969386B48A1A693C5C"
V6 = "AB" * 32


def key(name: str) -> bytes:
    return (KEYS / f"{name}.pub.asc").read_bytes()


@pytest.mark.parametrize(
    ("value", "pins"),
    [
        (AMD, [AMD]),
        ("ca8b b472 7a47 b4d0 9b4e  e896 9386 b48a 1a69 3c5c", [AMD]),
        ("0x" + AMD, [AMD]),
        ([AMD, NEXT], [AMD, NEXT]),
        ([AMD, AMD.lower()], [AMD]),
        ([V6], [V6]),
    ],
)
def test_one_fingerprint_or_a_list(value, pins):
    assert pin_decision(value) == {"pins": pins, "lab_pins": [], "problem": None}


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("", "'' is not an OpenPGP fingerprint"),
        ([], "repo_signing_keys is empty"),
        (AMD[:-1], "is not an OpenPGP fingerprint (40 or 64 hex digits"),
        ([AMD, "rocm.gpg.key"], "'rocm.gpg.key' is not an OpenPGP fingerprint"),
        ([AMD, 42], "42 is not an OpenPGP fingerprint"),
        ({"fingerprint": AMD}, "must be a fingerprint or a list of them"),
        (None, "must be a fingerprint or a list of them"),
    ],
)
def test_what_is_not_a_pin_says_so(value, says):
    decision = pin_decision(value)
    assert decision["pins"] == []
    assert says in decision["problem"]


def test_a_lab_key_is_refused_outside_the_lab():
    decision = pin_decision([AMD, CURRENT], lab_fingerprints=[CURRENT, NEXT], lab=False)
    assert decision["lab_pins"] == [CURRENT]
    assert decision["problem"].startswith(
        "repo_signing_keys lists %s, a signing key of the rocm-fleet lab, whose secret half is published"
        % CURRENT)
    assert "only the lab's own inventory (inventory/lab) may pin it, and it says so with repo_lab: true" in (
        decision["problem"])
    assert pin_decision([AMD, CURRENT], lab_fingerprints=[CURRENT], lab=True)["problem"] is None


def test_every_key_of_a_file_must_be_pinned():
    assert keyring_problem([CURRENT], [CURRENT, NEXT]) is None
    assert keyring_problem([CURRENT, NEXT], [CURRENT, NEXT]) is None
    assert keyring_problem([CURRENT, NEXT], [CURRENT]) == (
        "holds %s, which repo_signing_keys does not list (it lists %s)" % (NEXT, CURRENT))
    assert keyring_problem([WRONG], [CURRENT, NEXT]) == (
        "holds %s, which repo_signing_keys does not list (it lists %s, %s)" % (WRONG, CURRENT, NEXT))
    assert keyring_problem([], [CURRENT]) == "holds no key"


def test_key_verdict_reads_every_armor_block():
    """Two armored blocks in one file: apt trusts both, so the second is checked too."""
    assert key_verdict(key("rocm-lab") + key("rocm-next-lab"), [CURRENT, NEXT]) == {
        "fingerprints": [CURRENT, NEXT], "problem": None}
    hidden = key_verdict(key("rocm-lab") + key("wrong-lab"), [CURRENT])
    assert hidden["fingerprints"] == [CURRENT, WRONG]
    assert "holds %s, which" % WRONG in hidden["problem"]


def test_key_verdict_of_garbage_is_a_problem_not_an_exception():
    verdict = key_verdict(b"<html>404</html>", [CURRENT])
    assert verdict["fingerprints"] == []
    assert verdict["problem"].startswith("is not a usable OpenPGP key")


def test_an_installed_keyring_is_current_only_with_exactly_the_pins():
    both = key("rocm-lab") + key("rocm-next-lab")
    assert keyring_current(key("rocm-lab"), [CURRENT]) is True
    assert keyring_current(key("rocm-lab"), [CURRENT, NEXT]) is False  # the next key is fetched
    assert keyring_current(both, [CURRENT, NEXT]) is True
    assert keyring_current(both, [NEXT]) is False  # the retired key is dropped
    assert keyring_current(b"", [CURRENT]) is False
    assert keyring_current(b"garbage", [CURRENT]) is False
