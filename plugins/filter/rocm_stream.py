# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the repo, packages and environment roles: a host's releases through their release streams.

* rocm_stream_plan: the registrations, keys, package names, install roots, default links and tools of a
  host's releases (plugin_utils.decision.streams.host_plan), from the built-in release_streams.yml and
  support_matrix.yml combined with their *_extra; a problem comes back as ``problem`` (a sentence naming
  what to do) so a role's preflight reports it before anything changes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

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
    mirrored,
    retired_paths,
    stream_problems,
)


def rocm_stream_plan(releases, default, facts, manager, usecases, targets=None, all_targets=False, extras=None,
                     mirrors=None, mirror_required=False, driver_repository=False, extra_packages=None):
    extras = extras or {}
    empty = {"registrations": [], "keys": {}, "packages": {}, "roots": {}, "defaults": [], "default_links": [],
             "tools": [], "streams": [],
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


def rocm_mirrored_url(url, mirrors):
    """``url`` through repo_mirrors ({AMD origin: mirror base}): the mirror's where it maps the origin."""
    return mirrored(url, mirrors or {})


class FilterModule(object):
    def filters(self):
        return {"rocm_stream_plan": rocm_stream_plan, "rocm_mirrored_url": rocm_mirrored_url}
