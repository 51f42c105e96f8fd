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
    StreamError,
    host_os,
    host_plan,
    stream_problems,
)


def rocm_stream_plan(releases, default, facts, manager, usecases, targets=None, all_targets=False, extras=None):
    extras = extras or {}
    try:
        streams, keys = release_streams(extras.get("streams"), extras.get("keys"))
        matrix = preflight_data(None, extras.get("matrix"), None)[1]
        problems = stream_problems(streams, keys, matrix)
        if problems:
            raise StreamError("the release stream data is not usable: %s" % "; ".join(problems))
        facts = facts or {}
        host = host_os(facts.get("distribution"), facts.get("distribution_version"),
                       facts.get("distribution_release"))
        plan = host_plan(streams, keys, matrix, releases, default, host, manager, usecases, targets or [],
                         bool(all_targets))
        return dict(plan, problem=None)
    except (StreamError, RocmDataError) as error:
        return {"problem": str(error), "registrations": [], "keys": {}, "packages": {}, "roots": {}, "defaults": [],
                "tools": [], "streams": [], "stream": None, "title": None}


class FilterModule(object):
    def filters(self):
        return {"rocm_stream_plan": rocm_stream_plan}
