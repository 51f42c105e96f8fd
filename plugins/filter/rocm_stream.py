# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the repo, packages and environment roles: a host's releases through their release streams.

* rocm_stream_plan: the registrations, keys, package names, install roots, default links and tools of a
  host's releases (plugin_utils.decision.streams.host_plan), from the built-in release_streams.yml and
  support_matrix.yml combined with their *_extra; a problem comes back as ``problem`` (a sentence naming
  what to do) so a role's preflight reports it before anything changes.
* rocm_unlisted_release_packages: the installed release packages (rocm-core6.4.1, amdrocm-sysdeps10.0) of the
  releases a host no longer lists, of any stream: removing them removes those releases.
* rocm_release_roots: {release: install root} (/opt/rocm-7.2.3, /opt/rocm/core-10.1), for the environment role.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.data import (
    RocmDataError,
    preflight_data,
    release_streams,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.streams import (
    MANAGERS,
    StreamError,
    host_os,
    host_plan,
    install_root,
    mirrored,
    retired_paths,
    unlisted_release_packages,
    stream_problems,
)


def rocm_stream_plan(releases, default, facts, manager, usecases, targets=None, all_targets=False, extras=None,
                     mirrors=None, mirror_required=False, driver_repository=False, extra_packages=None):
    extras = extras or {}
    empty = {"registrations": [], "keys": {}, "packages": {}, "roots": {}, "defaults": [], "default_links": [],
             "tools": [], "version_file": None, "streams": [],
             "stream": None, "title": None, "apt_pin": False, "retired": [], "known_keys": [], "all_keyrings": []}
    try:
        streams, keys = release_streams(extras.get("streams"), extras.get("keys"))
        matrix = preflight_data(None, extras.get("matrix"), None)[1]
    except RocmDataError as error:
        return dict(empty, problem=str(error))
    # What a host leaves behind is known without its releases: a host whose plan fails still lists them.
    empty.update(retired=retired_paths(streams, [], manager) if manager in MANAGERS else [],
                 known_keys=sorted(keys),
                 all_keyrings=sorted({key.get("apt_keyring") for key in keys.values() if key.get("apt_keyring")}))
    try:
        problems = stream_problems(streams, keys, matrix)
        if problems:
            raise StreamError("the release stream data is not usable: %s" % "; ".join(problems))
        facts = facts or {}
        host = host_os(facts.get("distribution"), facts.get("distribution_version"),
                       facts.get("distribution_release"))
        plan = host_plan(streams, keys, matrix, releases, default, host, manager, usecases, targets or [],
                         bool(all_targets), mirrors or {}, bool(mirror_required), bool(driver_repository))
        for release, names in plan["packages"].items():
            plan["packages"][release] = names + [name for name in extra_packages or [] if name not in names]
        return dict(plan, problem=None)
    except StreamError as error:
        return dict(empty, problem=str(error))


def _tables(extras):
    extras = extras or {}
    try:
        streams, _keys = release_streams(extras.get("streams"), extras.get("keys"))
        return streams, preflight_data(None, extras.get("matrix"), None)[1]
    except RocmDataError as error:
        raise AnsibleFilterError(str(error)) from error


def rocm_unlisted_release_packages(installed, releases, extras=None, conflicting=False):
    """``installed`` (package names, ansible_facts.packages) -> the release packages to remove, sorted; with
    ``conflicting``, only those of a stream that cannot sit beside the releases' streams."""
    streams, matrix = _tables(extras)
    try:
        return unlisted_release_packages(streams, matrix, list(installed or []), [str(item) for item in releases or []],
                                         bool(conflicting))
    except StreamError as error:
        raise AnsibleFilterError(str(error)) from error


def rocm_release_roots(releases, extras=None):
    """{release: the directory it installs to}; a release no stream knows is an error naming what to do."""
    streams, matrix = _tables(extras)
    try:
        return {str(release): install_root(streams, matrix, str(release)) for release in releases or [] if release}
    except StreamError as error:
        raise AnsibleFilterError(str(error)) from error


def rocm_mirrored_url(url, mirrors):
    """``url`` through repo_mirrors ({AMD origin: mirror base}): the mirror's where it maps the origin."""
    return mirrored(url, mirrors or {})


class FilterModule(object):
    def filters(self):
        return {"rocm_stream_plan": rocm_stream_plan, "rocm_mirrored_url": rocm_mirrored_url,
                "rocm_unlisted_release_packages": rocm_unlisted_release_packages,
                "rocm_release_roots": rocm_release_roots}
