# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the repo role: AMD's repository layout and the signing key's fingerprints.

The ROCm repositories themselves are the release streams' (filter rocm_stream_plan).

* rocm_layout: the entry of a {since} table that applies to a release or
  driver line (the amdgpu repository's OS path changed with the 30.x lines).
* rocm_missing_repos: the prerequisite repositories (EPEL, CRB) that
  ``dnf repolist --enabled`` does not list.
* openpgp_fingerprints: primary-key fingerprints of a key, computed on the
  controller so the pinned-fingerprint check needs no gpg on the host and
  gives the same answer in check mode.
* rocm_signing_key_pins, rocm_signing_key_verdict, rocm_signing_key_current:
  the pinned fingerprints (one or a list, the lab's refused outside the lab), whether a
  key may be trusted under them, and whether an installed keyring holds exactly them
  (plugins/module_utils/repo/signing_key_pins.py, which compliance reads too).
* rocm_repo_keys, rocm_repo_key_texts: the keys a host's plan uses with their pins
  (repo_signing_keys, else AMD's published ones), and the text of each that the role checks.
* rocm_registration_object, rocm_repo_key_object: a registration and a key as the managed
  objects (plugins/plugin_utils/roles/managed_state.py) that the role writes and compliance checks.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64

from ansible.errors import AnsibleFilterError
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.repositories import missing_repositories
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import newest_since
from ansible_collections.rocm_fleet.core.plugins.module_utils.repo.openpgp import (
    OpenPgpError,
    keyring_fingerprints,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.repo.signing_key_pins import (
    key_verdict,
    keyring_current,
    pin_decision,
)


def rocm_layout(entries, version):
    """The ``entries`` item ({since, ...}) with the highest since not above ``version`` (a release or driver line)."""
    try:
        chosen = newest_since(entries, version)
    except ValueError as error:
        raise AnsibleFilterError("rocm_layout: %s" % error) from error
    if chosen is None:
        raise AnsibleFilterError("rocm_layout: no entry covers %s" % (version,))
    return chosen


def rocm_missing_repos(wanted, repolist):
    """The items of ``wanted`` ({name, match, ...}) that no repository id of ``repolist`` matches."""
    try:
        return missing_repositories(repolist, wanted)
    except (ValueError, TypeError, KeyError) as error:
        raise AnsibleFilterError("rocm_missing_repos: %s" % error) from error


def openpgp_fingerprints(text):
    """Upper-case hex fingerprints of every primary key in the (usually ASCII-armored) key ``text``."""
    data = text if isinstance(text, bytes) else str(text or "").encode("utf-8", "surrogateescape")
    try:
        return keyring_fingerprints(data)
    except (OpenPgpError, ValueError) as error:
        raise AnsibleFilterError("the signing key is not a usable OpenPGP key: %s" % error) from error


def _key_bytes(text):
    return text if isinstance(text, bytes) else str(text or "").encode("utf-8", "surrogateescape")


def rocm_signing_key_pins(value, lab_fingerprints=(), lab=False, variable="repo_signing_keys"):
    """{pins, lab_pins, problem} of a pinned fingerprint or list (signing_key_pins.pin_decision)."""
    return pin_decision(value, lab_fingerprints or (), bool(lab), variable)


def rocm_repo_keys(plan_keys, settings, lab_fingerprints=(), lab=False, known=()):
    """The keys a host's plan uses, each with its pins: [{name, title, url, content, apt_keyring, rpm_path, variable,
    listed (the pinned value as given), pins, lab_pins, problem}], in name order. ``settings`` is repo_signing_keys:
    {name: {fingerprints, content}}; a key it does not list is pinned to the plan's (AMD's published) fingerprints.
    A name of ``settings`` that no key of ``known`` (every key name) has is a problem of the first key."""
    settings = settings or {}
    keys = []
    unknown = sorted(set(settings) - set(known or plan_keys or {}))
    for name, key in sorted((plan_keys or {}).items()):
        given = settings.get(name) or {}
        variable = "repo_signing_keys.%s.fingerprints" % name
        listed = given.get("fingerprints", key.get("fingerprints"))
        if listed is None:
            decision = {"pins": [], "lab_pins": [], "problem": (
                "%s: AMD publishes no fingerprint of %s (%s); pin the key you checked in %s" % (
                    variable, key.get("title") or name, key.get("url"), variable))}
        else:
            decision = pin_decision(listed, lab_fingerprints or (), bool(lab), variable)
        keys.append(dict(decision, name=name, title=key.get("title") or name, url=key.get("url"),
                         content=str(given.get("content") or ""), apt_keyring=key.get("apt_keyring"),
                         rpm_path=key.get("rpm_path"), variable=variable, listed=listed))
    if unknown and keys:
        keys[0] = dict(keys[0], problem=keys[0]["problem"] or (
            "repo_signing_keys names %s, which is not a repository key (known: %s)" % (
                ", ".join(unknown), ", ".join(sorted(known or plan_keys)))))
    return keys


def rocm_signing_key_verdict(text, pins, variable="repo_signing_keys"):
    """{fingerprints, problem} of the key ``text`` under the pinned fingerprints ``pins``."""
    return key_verdict(_key_bytes(text), list(pins or []), variable)


def rocm_signing_key_current(text, pins):
    """Whether the installed keyring ``text`` holds exactly the pinned keys (no fetch needed then)."""
    return keyring_current(_key_bytes(text), list(pins or []))


def rocm_repo_key_texts(keys, installed, fetched):
    """{key name: armored text}: the inventory's content, else the key fetched now, else the installed one (the
    registered results of tasks/signing_key.yml's slurp and uri loops, whose items are the keys)."""
    texts = {key["name"]: key["content"] for key in keys or [] if key.get("content")}
    for result in (installed or {}).get("results") or []:
        if result.get("content"):
            texts.setdefault(result["item"]["name"], base64.b64decode(result["content"]).decode("utf-8", "replace"))
    for result in (fetched or {}).get("results") or []:
        if not result.get("skipped") and "content" in result:
            texts[result["item"]["item"]["name"]] = result["content"]
    return texts


def rocm_registration_object(registration, notify="repo apt sources changed"):
    """The managed file (managed_state kind file) of one registration of a host's plan, with its content; ``notify``
    the handler a change runs (none: dnf reads a changed repository file at its next run)."""
    header = "# rocm_fleet.core.repo: %s, as AMD's instructions register it. Changes here are replaced.\n" % (
        registration["name"])
    found = {"kind": "file", "id": "ROCM-REPO-001", "title": "the %s source as AMD registers it" % registration["name"],
             "path": registration["path"], "content": header + registration["content"], "state": "present"}
    if notify:
        found["notify"] = notify
    return found


def rocm_repo_key_object(key, registrations, driver_sources, lab_fingerprints=(), lab=False):
    """The managed signing_key of one key of the plan (rocm_repo_keys): its keyring, its pins as listed (so
    compliance decides, and refuses a lab key, as preflight does) and the source file that trusts it."""
    sources = [item["path"] for item in registrations or [] if item.get("key") == key["name"]]
    listed = key.get("listed")
    return {"kind": "signing_key", "id": "ROCM-REPO-002", "key": key["name"],
            "title": "the apt sources are signed by pinned keys only (%s)" % key.get("title"),
            "path": key["apt_keyring"], "fingerprints": [listed] if isinstance(listed, str) else list(listed or []),
            "lab_fingerprints": list(lab_fingerprints or []), "lab": bool(lab),
            "sources": sources[0] if sources else driver_sources, "pins_variable": key.get("variable")}


def rocm_rpm_key_object(key, lab_fingerprints=(), lab=False):
    """The managed rpm_key of one key of the plan (rocm_repo_keys): the file its repositories' gpgkey names, its pins
    as listed (so compliance decides, and refuses a lab key, as preflight does), imported into the rpm database."""
    listed = key.get("listed")
    return {"kind": "rpm_key", "id": "ROCM-REPO-002", "key": key["name"],
            "title": "the rpm repositories are signed by pinned keys only, imported (%s)" % key.get("title"),
            "path": key["rpm_path"], "fingerprints": [listed] if isinstance(listed, str) else list(listed or []),
            "lab_fingerprints": list(lab_fingerprints or []), "lab": bool(lab), "pins_variable": key.get("variable"),
            "pins": list(key.get("pins") or [])}


class FilterModule(object):
    def filters(self):
        return {
            "rocm_layout": rocm_layout,
            "rocm_missing_repos": rocm_missing_repos,
            "openpgp_fingerprints": openpgp_fingerprints,
            "rocm_signing_key_pins": rocm_signing_key_pins,
            "rocm_signing_key_verdict": rocm_signing_key_verdict,
            "rocm_repo_keys": rocm_repo_keys,
            "rocm_repo_key_texts": rocm_repo_key_texts,
            "rocm_repo_key_object": rocm_repo_key_object,
            "rocm_registration_object": rocm_registration_object,
            "rocm_rpm_key_object": rocm_rpm_key_object,
            "rocm_signing_key_current": rocm_signing_key_current,
        }
