# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ROCm upgrade of one host: where it stands, and what the upgrade (or its rollback) does.

* host_state(default_path, package_names, record): the default release (/opt/rocm's
  target), the installed releases (rocm-core<x.y.z> packages) and the host's upgrade
  record (/var/lib/rocm-fleet/upgrade.json), as the plan reads them.
* upgrade_plan(state, target, allow_downgrade, rollback): ``skip`` (already there, with
  the reason), ``upgrade`` or ``rollback``, with the releases installed side by side and
  the record to write; a plan that must not run raises ValueError with what to do.

The record keeps the release the host ran before the upgrade and the releases it had,
so a failed host is rolled back to exactly that, and a rerun of an unfinished upgrade
keeps the release it started from. Stdlib only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import (
    compare_versions,
    normalize_rocm_version,
)

RECORD_SCHEMA = 1
_RELEASE_DIR = re.compile(r"/opt/rocm-(\d+\.\d+\.\d+)/?$")
_CORE = re.compile(r"^rocm-core(\d+\.\d+\.\d+)$")


def _release_key(release):
    return tuple(int(part) for part in release.split("."))


def host_state(default_path, package_names, record=None):
    """{default, installed, record} from /opt/rocm's resolved path, the installed package names and the record."""
    match = _RELEASE_DIR.search(str(default_path or ""))
    installed = set()
    for name in package_names or []:
        core = _CORE.match(str(name))
        if core:
            installed.add(core.group(1))
    if record is not None and not (isinstance(record, dict) and record.get("schema") == RECORD_SCHEMA):
        raise ValueError("the upgrade record is not one this version writes (schema %s): %r" % (RECORD_SCHEMA, record))
    return {
        "default": match.group(1) if match else None,
        "installed": sorted(installed, key=_release_key),
        "record": record,
    }


def _target(target):
    release = normalize_rocm_version(target)
    if not target or release is None or release != str(target):
        raise ValueError(
            "upgrade_rocm_version must be an x.y.z ROCm release (-e upgrade_rocm_version=7.2.3), got %r" % (target,)
        )
    return release


def _sorted(releases):
    return sorted(set(releases), key=_release_key)


def upgrade_plan(state, target, allow_downgrade=False, rollback=False):
    """What the upgrade does on the host in ``state`` (from host_state); raises ValueError when it must not run."""
    record = state.get("record")
    current = state.get("default")
    if rollback:
        return _rollback_plan(state, record, current)
    target = _target(target)
    if current is None:
        raise ValueError(
            "no default ROCm release (/opt/rocm does not point at an /opt/rocm-x.y.z): provision the host first "
            "(site.yml or playbooks/onboard.yml), or leave it out with -l"
        )
    unfinished = bool(record) and record.get("to") == target and record.get("state") != "done"
    if current == target and not unfinished:
        return _plan("skip", current, target, state["installed"], None, "already on %s" % target)
    if unfinished:
        start, before = record["from"], record["installed_before"]
    else:
        start, before = current, state["installed"]
        if compare_versions(target, current) < 0 and not allow_downgrade:
            raise ValueError(
                "%s is older than the host's %s: set upgrade_allow_downgrade=true to move back to it, or "
                "upgrade_rollback=true to return to the release recorded before the last upgrade" % (target, current)
            )
    new_record = {
        "schema": RECORD_SCHEMA,
        "from": start,
        "to": target,
        "installed_before": list(before),
        "state": "started",
    }
    releases = _sorted(list(before) + [target])
    reason = "resumes the unfinished upgrade" if unfinished else None
    return _plan("upgrade", start, target, releases, new_record, reason)


def _rollback_plan(state, record, current):
    if not record:
        return _plan("skip", current, current, state["installed"], None, "no upgrade is recorded on this host")
    back = record["from"]
    releases = _sorted(record.get("installed_before") or [back])
    if current == back and record["to"] not in state["installed"]:
        return _plan("skip", current, back, state["installed"], None, "already back on %s" % back)
    new_record = dict(record, state="rolling back")
    return _plan("rollback", current, back, releases, new_record, None)


def _plan(action, start, target, releases, record, reason):
    return {
        "action": action,
        "from": start,
        "to": target,
        "releases": list(releases),
        "record": record,
        "reason": reason,
    }
