# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checkers for the rpm side of a repository's trust: the key file a ``.repo`` file's ``gpgkey`` names, holding
pinned keys only, and each of its keys imported into the rpm database (what ``rpm_key`` leaves).

rpm names an imported key ``gpg-pubkey-<keyid>-<created>``: the version is the last 8 hex digits of the key's
fingerprint, in lower case (rpmkeys --import; RPM's own keyring documentation).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import CheckError, failed, passed
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.packages import installed_packages
from ansible_collections.rocm_fleet.core.plugins.module_utils.repo.openpgp import OpenPgpError, keyring_fingerprints
from ansible_collections.rocm_fleet.core.plugins.module_utils.repo.signing_key_pins import keyring_problem, pin_decision

PUBKEY = "gpg-pubkey"


def imported_key_ids(host):
    """The key ids of the keys imported into the host's rpm database (gpg-pubkey versions)."""
    manager, installed = installed_packages(host)
    if manager != "rpm":
        raise CheckError("the host keeps its packages in %s, not an rpm database" % manager)
    return sorted(set(version.split("-", 1)[0].lower() for version in installed.get(PUBKEY, [])))


def check_rpm_key(expect, host):
    path = expect["path"]
    variable = expect.get("pins_variable") or "repo_signing_keys"
    pins = pin_decision(list(expect.get("fingerprints") or []), expect.get("lab_fingerprints") or [],
                        bool(expect.get("lab")), variable)
    if pins["problem"]:
        return failed({"key": "not checked"}, pins["problem"], action="update")
    if host.lstat(path) is None:
        return failed({"key": "absent"}, "%s does not exist" % path, action="create")
    try:
        found = keyring_fingerprints(host.read_bytes(path))
    except OpenPgpError as exc:
        return failed({"key": "unreadable"}, "%s is not an OpenPGP key: %s" % (path, exc), action="update")
    actual = {"key_fingerprints": found}
    problem = keyring_problem(found, pins["pins"], variable)
    if problem:
        return failed(actual, "%s %s" % (path, problem), action="update")
    imported = imported_key_ids(host)
    actual["imported_key_ids"] = imported
    missing = [fingerprint for fingerprint in found if fingerprint[-8:].lower() not in imported]
    if missing:
        names = ", ".join("%s-%s" % (PUBKEY, fingerprint[-8:].lower()) for fingerprint in missing)
        return failed(actual, "%s: the rpm database has not imported %s (%s)" % (path, ", ".join(missing), names),
                      action="import")
    return passed(actual, "%s holds pinned keys only, each imported into the rpm database" % path)
