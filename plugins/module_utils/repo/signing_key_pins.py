# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which repository signing keys a host may trust: the decisions the repo role and compliance share.

``repo_signing_keys.<key>.fingerprints`` pins one fingerprint or a list of them (the current
key and the next one while a repository rotates its key). A key file or keyring is
trusted when every key in it is pinned: one that also carries an unpinned key is
refused whole, because apt's Signed-By and dnf's gpgkey trust every key of the file.
The keys of the rocm-fleet lab are refused unless the inventory says it is the lab
(``repo_lab``): their secret halves are public, so a signature by them proves nothing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.repo.openpgp import (
    OpenPgpError,
    keyring_fingerprints,
    normalize_fingerprint,
)

# v4 fingerprints are 40 hex digits (SHA-1), v5 and v6 ones 64 (SHA-256).
_FINGERPRINT = re.compile(r"^(?:[0-9A-F]{40}|[0-9A-F]{64})$")
_VARIABLE = "repo_signing_keys"


def pin_decision(value, lab_fingerprints=(), lab=False, variable=_VARIABLE):
    """The pins of ``variable`` (one fingerprint or a list of them).

    Returns {pins: upper-case hex without blanks, in order, without repeats; lab_pins: those that are keys of the
    rocm-fleet lab; problem: why the value cannot be used, with what to do, or None}.
    """
    items = [value] if isinstance(value, str) else value if isinstance(value, (list, tuple)) else None
    if items is None:
        return _decision([], [], "%s must be a fingerprint or a list of them, got %r" % (variable, value))
    pins = []
    for item in items:
        pin = normalize_fingerprint(item) if isinstance(item, str) else ""
        if not _FINGERPRINT.match(pin):
            return _decision([], [], "%s: %r is not an OpenPGP fingerprint (40 or 64 hex digits; blanks and a 0x "
                                     "prefix are allowed)" % (variable, item))
        if pin not in pins:
            pins.append(pin)
    if not pins:
        return _decision([], [], "%s is empty: list the repository key's fingerprint" % variable)
    lab_keys = set(normalize_fingerprint(fingerprint) for fingerprint in lab_fingerprints)
    lab_pins = [pin for pin in pins if pin in lab_keys]
    problem = None
    if lab_pins and not lab:
        problem = (
            "%s lists %s, a signing key of the rocm-fleet lab, whose secret half is published with rocm-fleet: "
            "a signature by it proves nothing. Pin your repository's own key (the repo role's default is AMD's); "
            "only the lab's own inventory (inventory/lab) may pin it, and it says so with repo_lab: true."
            % (variable, ", ".join(lab_pins)))
    return _decision(pins, lab_pins, problem)


def _decision(pins, lab_pins, problem):
    return {"pins": pins, "lab_pins": lab_pins, "problem": problem}


def keyring_problem(key_fingerprints, pins, variable=_VARIABLE):
    """Why a key file or keyring holding ``key_fingerprints`` may not be trusted under ``pins``; None if it may."""
    if not key_fingerprints:
        return "holds no key"
    unpinned = [fingerprint for fingerprint in key_fingerprints if normalize_fingerprint(fingerprint) not in pins]
    if unpinned:
        return "holds %s, which %s does not list (it lists %s)" % (", ".join(unpinned), variable, ", ".join(pins))
    return None


def key_verdict(data, pins, variable=_VARIABLE):
    """{fingerprints, problem} of a key file's content (armored or binary) under ``pins``."""
    try:
        fingerprints = keyring_fingerprints(data)
    except OpenPgpError as error:
        return {"fingerprints": [], "problem": "is not a usable OpenPGP key: %s" % error}
    return {"fingerprints": fingerprints, "problem": keyring_problem(fingerprints, pins, variable)}


def keyring_current(data, pins):
    """Whether a keyring installed on an earlier run stays without fetching the key again.

    Only when it holds exactly the pinned keys: a keyring that lacks a newly pinned key is
    fetched again, so the next key reaches every host before the repository signs with it.
    """
    verdict = key_verdict(data, pins) if data else {"problem": "empty"}
    return verdict["problem"] is None and set(verdict["fingerprints"]) == set(pins)
