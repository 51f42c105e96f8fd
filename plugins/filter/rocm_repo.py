# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the repo role: AMD's repository layout and the signing key's fingerprints.

* rocm_repo_dir: the directory AMD gives a ROCm release (x.y.0 is x.y).
* rocm_repo_urls: one repository URL per release, from a per-series layout table.
* rocm_repo_entries: {version, url} of the releases a layout table covers
  (AMD's graphics repositories exist from ROCm 7 on only).
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
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

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

_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def _release_key(version):
    match = _RELEASE.match(str(version).strip())
    if not match:
        raise AnsibleFilterError("not a ROCm release (x.y.z): %r" % (version,))
    return tuple(int(part) for part in match.groups())


def rocm_repo_dir(version):
    """AMD names the directory of an x.y.0 release x.y: '6.4.0' -> '6.4', '6.4.1' -> '6.4.1'."""
    major, minor, patch = _release_key(version)
    return "%d.%d" % (major, minor) if patch == 0 else "%d.%d.%d" % (major, minor, patch)


def _repo_url(version, base_urls, override, caller):
    """<base>/<dir> of ``version``: the base from ``override`` when set, else from the newest ``base_urls`` entry
    ({since, url}) whose 'since' is not above it; None when no entry covers the release."""
    _release_key(version)
    try:
        layout = newest_since(base_urls, version)
    except ValueError as error:
        raise AnsibleFilterError("%s: %s" % (caller, error)) from error
    if layout is None:
        return None
    base = str(override).rstrip("/") if override else layout["url"].rstrip("/")
    return "%s/%s" % (base, rocm_repo_dir(version))


def rocm_repo_urls(versions, base_urls, override=""):
    """One repository URL per release; a release no layout covers is an error."""
    urls = []
    for version in versions or []:
        url = _repo_url(version, base_urls, override, "rocm_repo_urls")
        if url is None:
            raise AnsibleFilterError("no repository layout covers ROCm %s" % version)
        urls.append(url)
    return urls


def rocm_repo_entries(versions, base_urls, override=""):
    """{version, url} for each release some ``base_urls`` entry covers; the others have no such repository."""
    entries = []
    for version in versions or []:
        url = _repo_url(version, base_urls, override, "rocm_repo_entries")
        if url is not None:
            entries.append({"version": version, "url": url})
    return entries


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


def rocm_signing_key_pins(value, lab_fingerprints=(), lab=False):
    """{pins, lab_pins, problem} of repo_signing_key_fingerprint (signing_key_pins.pin_decision)."""
    return pin_decision(value, lab_fingerprints or (), bool(lab))


def rocm_signing_key_verdict(text, pins):
    """{fingerprints, problem} of the key ``text`` under the pinned fingerprints ``pins``."""
    return key_verdict(_key_bytes(text), list(pins or []))


def rocm_signing_key_current(text, pins):
    """Whether the installed keyring ``text`` holds exactly the pinned keys (no fetch needed then)."""
    return keyring_current(_key_bytes(text), list(pins or []))


class FilterModule(object):
    def filters(self):
        return {
            "rocm_repo_dir": rocm_repo_dir,
            "rocm_repo_urls": rocm_repo_urls,
            "rocm_repo_entries": rocm_repo_entries,
            "rocm_layout": rocm_layout,
            "rocm_missing_repos": rocm_missing_repos,
            "openpgp_fingerprints": openpgp_fingerprints,
            "rocm_signing_key_pins": rocm_signing_key_pins,
            "rocm_signing_key_verdict": rocm_signing_key_verdict,
            "rocm_signing_key_current": rocm_signing_key_current,
        }
