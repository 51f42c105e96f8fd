# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checkers for apt sources (deb822 ``.sources`` and one-line ``.list``), their keyrings, and apt pins."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import failed, passed
from ansible_collections.rocm_fleet.core.plugins.module_utils.repo.openpgp import (
    OpenPgpError,
    keyring_fingerprints,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.repo.signing_key_pins import keyring_problem, pin_decision


def parse_stanzas(text):
    """deb822 paragraphs as [{lower-case field: value}]; continuation lines join with newlines."""
    stanzas, current, last = [], {}, None
    for line in text.splitlines() + [""]:
        if line.startswith("#"):
            continue
        if not line.strip():
            if current:
                stanzas.append(current)
            current, last = {}, None
        elif line[:1] in (" ", "\t") and last:
            current[last] += "\n" + ("" if line.strip() == "." else line.strip())
        elif ":" in line:
            key, _sep, value = line.partition(":")
            last = key.strip().lower()
            current[last] = value.strip()
    return stanzas


def _entry(types, uris, suites, components, signed_by, enabled=True):
    return {
        "types": types,
        "uris": [uri.rstrip("/") for uri in uris],
        "suites": suites,
        "components": components,
        "signed_by": signed_by,
        "enabled": enabled,
    }


def parse_sources(text, path):
    """Entries of a deb822 ``.sources`` file or a one-line ``.list`` file, by the file name."""
    if path.endswith(".sources"):
        entries = []
        for stanza in parse_stanzas(text):
            enabled = stanza.get("enabled", "yes").strip().lower() not in ("no", "false", "0")
            entries.append(
                _entry(
                    stanza.get("types", "").split(),
                    stanza.get("uris", "").split(),
                    stanza.get("suites", "").split(),
                    stanza.get("components", "").split(),
                    stanza.get("signed-by", "").strip() or None,
                    enabled,
                )
            )
        return entries
    return [entry for entry in (_parse_list_line(line) for line in text.splitlines()) if entry]


def _parse_list_line(line):
    words = line.split("#", 1)[0].split()
    if len(words) < 3 or words[0] not in ("deb", "deb-src"):
        return None
    options = {}
    rest = words[1:]
    if rest[0].startswith("["):
        option_words = []
        while rest:
            word = rest.pop(0)
            option_words.append(word)
            if word.endswith("]"):
                break
        for option in " ".join(option_words).strip("[] ").split():
            key, _sep, value = option.partition("=")
            options[key.lower()] = value
    if len(rest) < 2:
        return None
    return _entry([words[0]], [rest[0]], [rest[1]], rest[2:], options.get("signed-by"))


def _keyring_problems(expect, host):
    path = expect["signed_by"]
    listed = ([expect["fingerprint"]] if expect.get("fingerprint") else []) + list(expect.get("fingerprints") or [])
    variable = expect.get("pins_variable") or "repo_signing_keys"
    pins = pin_decision(listed, expect.get("lab_fingerprints") or [], bool(expect.get("lab")), variable)
    if pins["problem"]:
        return {"keyring": "not checked"}, [pins["problem"]]
    info = host.lstat(path)
    if info is None:
        return {"keyring": "absent"}, ["keyring %s does not exist" % path]
    try:
        found = keyring_fingerprints(host.read_bytes(path))
    except OpenPgpError as exc:
        return {"keyring": "unreadable"}, ["keyring %s is not an OpenPGP keyring: %s" % (path, exc)]
    # The repo role's own decision (signing_key_pins): every key of the keyring is pinned.
    problem = keyring_problem(found, pins["pins"], variable)
    return {"keyring_fingerprints": found}, ["keyring %s %s" % (path, problem)] if problem else []


def check_apt_source(expect, host):
    path = expect["path"]
    text = host.read_text(path)
    if text is None:
        return failed({"state": "absent"}, "%s does not exist" % path, action="create")
    entries = [entry for entry in parse_sources(text, path) if entry["enabled"]]
    actual = {"entries": entries}
    problems = []
    wanted_uris = [uri.rstrip("/") for uri in expect["uris"]]
    for uri in wanted_uris:
        if not any(uri in entry["uris"] for entry in entries):
            problems.append("no enabled entry for %s" % uri)
    relevant = [entry for entry in entries if not wanted_uris or set(entry["uris"]) & set(wanted_uris)]
    if not entries:
        problems.append("no enabled entry")
    for entry in relevant:
        where = " ".join(entry["uris"])
        missing_suites = [suite for suite in expect["suites"] if suite not in entry["suites"]]
        missing_components = [comp for comp in expect["components"] if comp not in entry["components"]]
        if missing_suites:
            problems.append("%s lacks suite %s" % (where, ", ".join(missing_suites)))
        if missing_components:
            problems.append("%s lacks component %s" % (where, ", ".join(missing_components)))
        if expect.get("signed_by") and entry["signed_by"] != expect["signed_by"]:
            problems.append("%s is signed-by %s, expected %s" % (where, entry["signed_by"], expect["signed_by"]))
    if expect.get("fingerprint") or expect.get("fingerprints") is not None:
        keyring, keyring_problems = _keyring_problems(expect, host)
        actual.update(keyring)
        problems.extend(keyring_problems)
    if problems:
        return failed(actual, "%s: %s" % (path, "; ".join(problems)), action="update")
    return passed(actual, "%s is as expected" % path)


def check_apt_pin(expect, host):
    path = expect["path"]
    text = host.read_text(path)
    if text is None:
        return failed({"state": "absent"}, "%s does not exist" % path, action="create")
    stanzas = [
        {
            "package": " ".join(s.get("package", "").split()),
            "pin": s.get("pin", "").strip(),
            "priority": s.get("pin-priority", "").strip(),
        }
        for s in parse_stanzas(text)
    ]
    actual = {"stanzas": stanzas}
    package, pin = " ".join(expect["package"].split()), expect["pin"].strip()
    match = [stanza for stanza in stanzas if stanza["package"] == package and stanza["pin"] == pin]
    if not match:
        return failed(actual, "%s has no stanza 'Package: %s' with 'Pin: %s'" % (path, package, pin), action="update")
    if match[-1]["priority"] != str(expect["priority"]):
        message = "%s: Pin-Priority %s, expected %d" % (path, match[-1]["priority"] or "unset", expect["priority"])
        return failed(actual, message, action="update")
    return passed(actual, "%s pins %s (%s) at %d" % (path, package, pin, expect["priority"]))
