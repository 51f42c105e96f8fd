# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ROCm upgrade of one host: where it stands, and what the upgrade (or its rollback) does.

* host_state(default_path, packages, record, core_path, core_version, streams, matrix): the default
  release and its release stream (/opt/rocm -> /opt/rocm-<release> on the legacy stream, /opt/rocm/core
  -> /opt/rocm/core-<series> on the ROCm Core SDK), the installed releases of every stream (their
  release packages: rocm-core<release>, amdrocm-sysdeps<series>) and the host's upgrade record
  (/var/lib/rocm-fleet/upgrade.json), as the plan reads them.
* upgrade_plan(state, target, allow_downgrade, rollback, served, streams, matrix): ``skip`` (already
  there, with the reason), ``upgrade`` or ``rollback``, with the releases the host keeps, the release
  packages to remove first and the record to write; a plan that must not run raises ValueError with
  what to do.

Within a stream the target is installed beside the releases the host has. Where the target's stream
replaces the host's (AMD: uninstall ROCm 7.2.4 or older before installing the ROCm Core SDK), the upgrade
is a move: the replaced stream's releases are removed first and the host keeps the target alone. The
record keeps the release the host ran before the upgrade, the releases it had and both streams, so a
failed host is rolled back to exactly that (a move back removes the new stream's releases first), and a
rerun of an unfinished upgrade keeps the release it started from.

The stream tables are release_streams.yml and the support matrix (plugin_utils.decision.data), the
built-in ones unless the caller passes its own (with the inventory's *_extra).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import (
    compare_versions,
    normalize_rocm_version,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.data import preflight_data, release_streams
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.streams import (
    DEFAULT_STREAM,
    StreamError,
    conflicting,
    default_link_release,
    install_root,
    installed_releases,
    replaces,
    stream_name,
    stream_of,
)

RECORD_SCHEMA = 1
# The links that make a release the default: update-alternatives' rocm (the legacy stream) and core (the
# ROCm Core SDK, where /opt/rocm is a plain directory); each stream's first default entry names its link.
DEFAULT_LINK = "/opt/rocm"
CORE_LINK = "/opt/rocm/core"
NO_DEFAULT = (
    "no default ROCm release (neither /opt/rocm -> /opt/rocm-x.y.z of the legacy ROCm stream nor /opt/rocm/core -> "
    "/opt/rocm/core-x.y of the ROCm Core SDK)"
)


def _release_key(release):
    return tuple(int(part) for part in release.split("."))


def _tables(streams, matrix):
    """The stream tables and the support matrix: the caller's, else the built-in ones."""
    if streams is None:
        streams = release_streams()[0]
    if matrix is None:
        matrix = preflight_data()[1]
    return streams, matrix


def host_state(default_path, packages, record=None, core_path=None, core_version=None, streams=None, matrix=None):
    """{default, default_stream, installed, streams, packages, record} of a host.

    ``default_path``: the resolved path of /opt/rocm (/opt/rocm-7.2.3 on the legacy stream), or None;
    ``packages``: ansible_facts.packages ({name: [{version}]}), or the installed package names (a Core SDK
    release package then takes its release from the support matrix); ``core_path``: the resolved path of
    /opt/rocm/core (/opt/rocm/core-10.1 on the ROCm Core SDK), or None; ``core_version``: the text of
    /opt/rocm/core/.info/version (10.1.0), or None. ``installed`` lists the installed releases of every
    stream in version order; ``streams`` and ``packages`` map each to its stream and its release package.
    """
    streams, matrix = _tables(streams, matrix)
    if record is not None and not (isinstance(record, dict) and record.get("schema") == RECORD_SCHEMA):
        raise ValueError("the upgrade record is not one this version writes (schema %s): %r" % (RECORD_SCHEMA, record))
    installed = installed_releases(streams, matrix, packages, [core_version] if core_version else [])
    default = default_link_release(streams, matrix, DEFAULT_LINK, default_path, None, installed)
    if default is None and core_path:
        try:
            default = default_link_release(streams, matrix, CORE_LINK, core_path, core_version, installed)
        except StreamError as error:
            raise ValueError("/opt/rocm/core points at %s (.info/version: %s), whose ROCm release is not known: %s" % (
                core_path, (core_version or "").strip() or "not read", error)) from error
    releases = sorted(installed, key=_release_key)
    return {
        "default": default[0] if default else None,
        "default_stream": default[1] if default else None,
        "installed": releases,
        "streams": {release: installed[release]["stream"] for release in releases},
        "packages": {release: installed[release]["package"] for release in releases},
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


class _Streams:
    """The stream tables as the plan asks them: a release's stream and a stream's title."""

    def __init__(self, state, streams, matrix):
        self.state, self.streams, self.matrix = state, streams, matrix

    def of(self, release):
        """The matrix's stream of ``release``, else the one its installed release package belongs to."""
        if release is None:
            return None
        if str(release) in self.matrix:
            return stream_name(self.matrix, release)
        return (self.state.get("streams") or {}).get(release) or DEFAULT_STREAM

    def title(self, name):
        return str(((self.streams or {}).get(name) or {}).get("title") or name) if name else None

    def conflicting(self, first, second):
        return bool(first and second and conflicting(self.streams, first, second))

    def removed_first(self, stream):
        """The release packages of the installed releases that cannot sit beside a release of ``stream``."""
        return sorted(package for release, package in (self.state.get("packages") or {}).items()
                      if self.conflicting(self.state["streams"][release], stream))

    def same_root(self, release, target):
        """Whether ``release`` installs where ``target`` does (10.1.0 and 10.1.1 in /opt/rocm/core-10.1): the
        target replaces it in place, so the two are not listed side by side."""
        if release == target or release not in self.matrix or target not in self.matrix:
            return False
        return install_root(self.streams, self.matrix, release) == install_root(self.streams, self.matrix, target)


def upgrade_plan(state, target, allow_downgrade=False, rollback=False, served=None, streams=None, matrix=None):
    """What the upgrade does on the host in ``state`` (from host_state); raises ValueError when it must not run.

    ``served``: the releases the mirror serves (repo_available_rocm_versions); a rollback to a release it
    does not list is refused. None or empty: not known, not checked.
    """
    tables = _Streams(state, *_tables(streams, matrix))
    record = state.get("record")
    current = state.get("default")
    if rollback:
        return _rollback_plan(state, tables, record, current, served)
    target = _target(target)
    to_stream = stream_of(tables.streams, tables.matrix, target)[0]
    unfinished = bool(record) and record.get("to") == target and record.get("state") != "done"
    if current is None and not unfinished:
        raise ValueError(_no_default(record))
    if current == target and not unfinished:
        stream = state.get("default_stream") or to_stream
        return _plan(tables, "skip", current, target, state["installed"], None, "already on %s" % target,
                     stream, stream, [])
    if unfinished:
        start, before = record["from"], record["installed_before"]
        from_stream = record.get("from_stream") or tables.of(start)
    else:
        start, before = current, state["installed"]
        from_stream = state.get("default_stream") or tables.of(current)
        if tables.conflicting(from_stream, to_stream) and not replaces(tables.streams, to_stream, from_stream):
            if not allow_downgrade:
                raise ValueError(
                    "ROCm %s (%s) cannot be installed beside the host's %s (%s), which replaces it: moving back "
                    "removes %s first (%s). Set upgrade_allow_downgrade=true to move back to it, or "
                    "upgrade_rollback=true to return to the release recorded before the last upgrade" % (
                        target, tables.title(to_stream), current, tables.title(from_stream),
                        tables.title(from_stream), ", ".join(tables.removed_first(to_stream)) or "its releases"))
        elif compare_versions(target, current) < 0 and not allow_downgrade:
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
        "from_stream": from_stream,
        "to_stream": to_stream,
    }
    kept = [release for release in before
            if not tables.conflicting(tables.of(release), to_stream) and not tables.same_root(release, target)]
    remove_first = tables.removed_first(to_stream)
    move = tables.conflicting(from_stream, to_stream)
    if move:
        reason = "%s the move from %s to %s (%s removed first)" % (
            "resumes" if unfinished else "starts", tables.title(from_stream), tables.title(to_stream),
            ", ".join(remove_first) or "nothing left to remove")
    else:
        reason = "resumes the unfinished upgrade" if unfinished else None
    return _plan(tables, "upgrade", start, target, _sorted(kept + [target]), new_record, reason, from_stream,
                 to_stream, remove_first)


def _no_default(record):
    message = NO_DEFAULT
    if record and record.get("state") not in ("done", "rolled back"):
        message += "; its upgrade record names the unfinished upgrade from %s to %s: run it again with " \
                   "upgrade_rocm_version=%s, or return the host with upgrade_rollback=true" % (
                       record.get("from"), record.get("to"), record.get("to"))
        return message
    return message + ": provision the host first (site.yml or playbooks/onboard.yml), or leave it out with -l"


def _rollback_plan(state, tables, record, current, served):
    current_stream = state.get("default_stream") or tables.of(current)
    if not record:
        return _plan(tables, "skip", current, current, state["installed"], None, "no upgrade is recorded on this host",
                     current_stream, current_stream, [])
    back, upgraded = record["from"], record["to"]
    back_stream = record.get("from_stream") or tables.of(back)
    upgraded_stream = record.get("to_stream") or tables.of(upgraded)
    releases = _sorted(record.get("installed_before") or [back])
    remove_first = tables.removed_first(back_stream)
    if tables.conflicting(back_stream, upgraded_stream):
        # Back only where nothing of the new stream is left and every release the host had is there again.
        done = current == back and not remove_first and all(release in state["installed"] for release in releases)
    else:
        done = current == back and upgraded not in state["installed"]
    if done:
        return _plan(tables, "skip", current, back, state["installed"], None, "already back on %s" % back,
                     back_stream, back_stream, [])
    missing = [release for release in releases if served and release not in [str(item) for item in served]]
    if missing:
        raise ValueError(
            "the rollback would return the host from %s to ROCm %s (%s), but the mirror no longer serves %s, which "
            "the upgrade record lists among the releases the host had (repo_available_rocm_versions: %s): mirror %s "
            "again and list it in repo_available_rocm_versions, or keep the host on %s (leave it out with -l)" % (
                "ROCm %s (%s)" % (current, tables.title(current_stream)) if current else "no default release",
                back, tables.title(back_stream), ", ".join(missing), ", ".join(str(item) for item in served),
                ", ".join(missing), current or "what it has"))
    reason = None
    if tables.conflicting(back_stream, upgraded_stream):
        reason = "moves back from %s to %s (%s removed first)" % (tables.title(upgraded_stream), tables.title(
            back_stream), ", ".join(remove_first) or "nothing left to remove")
    return _plan(tables, "rollback", current, back, releases, dict(record, state="rolling back"), reason,
                 upgraded_stream, back_stream, remove_first)


def _plan(tables, action, start, target, releases, record, reason, from_stream, to_stream, remove_first):
    return {
        "action": action,
        "from": start,
        "to": target,
        "releases": list(releases),
        "record": record,
        "reason": reason,
        "move": tables.conflicting(from_stream, to_stream),
        "from_stream": from_stream,
        "to_stream": to_stream,
        "from_title": tables.title(from_stream),
        "to_title": tables.title(to_stream),
        "remove_first": list(remove_first),
    }
