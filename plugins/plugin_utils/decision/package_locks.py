# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which of a host's package holds and version locks would block a run, decided before any change.

The package managers refuse late, after the repositories changed and maybe after a removal:
apt stops at a held package it must remove or replace ("Held packages were changed and
-y was used without --allow-change-held-packages"), dnf offers only a locked version
("All matches were filtered out by exclude filtering"), zypper's solver finds a locked
package in its way. The packages role asks this first.

What a run changes, as the packages role decides it: the release packages it removes (a
release the host must not keep, with every package of that release), the packages it installs
(a release's, each of any version of its name) and amdgpu-dkms of the decided driver line
(a version glob), which moves amdgpu-dkms-firmware with it. A lock on a package outside
these (a library ROCm depends on) is found by the package manager itself, at the install.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import re

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.drivers import DKMS

DKMS_FIRMWARE = DKMS + "-firmware"
# What each kind stops, and the command that releases it (versionlock's delete matches both kinds of entry).
KINDS = {
    "hold": {"stops_removal": True, "what": "apt-mark hold", "release": "apt-mark unhold %s"},
    "lock": {"stops_removal": False, "what": "dnf versionlock", "release": "dnf versionlock delete %s"},
    "exclude": {"stops_removal": False, "what": "dnf versionlock exclude (!)", "release": "dnf versionlock delete %s"},
    # A zypper lock keeps what it matches as it is, whatever its version constraint says: judged as if it had none
    # (the run's versions are globs), so a constrained lock that would let the run pass still stops it here.
    "zypper": {"stops_removal": True, "what": "zypper addlock", "release": "zypper removelock %s"},
}
_RELEASE_TOKEN = re.compile(r"[0-9]+(?:[.][0-9]+)+$")


def _without_epoch_zero(version):
    return version[2:] if version and version.startswith("0:") else version


def _version_fits(version, glob):
    """Whether ``version`` (dpkg's, or rpm's EPOCH:VERSION-RELEASE) matches the wanted version glob."""
    return any(fnmatch.fnmatchcase(candidate, glob) for candidate in (version, _without_epoch_zero(version)))


def _matching(lock, names):
    return [name for name in names if fnmatch.fnmatchcase(name, lock["name"])]


def _removal_problem(lock, removes, installed):
    """Why ``lock`` stops the removal of a release: it holds the release package or one of that release's."""
    for release_package in removes:
        token = _RELEASE_TOKEN.search(release_package)
        of_release = [name for name in _matching(lock, installed)
                      if name == release_package or (token and name.endswith(token.group(0)))]
        dependents = [name for name in of_release if name != release_package]
        if lock["name"] == release_package or of_release:
            return "the run removes %s, a release the host must not keep%s" % (
                release_package, (", and with it " + ", ".join(dependents)) if dependents else "")
    return None


def _install_problem(lock, wanted, dkms_moves, installed=()):
    """Why ``lock`` stops an install: a hold or a zypper lock keeps a package out or in place, a lock or an
    exclusion hides the version the run installs."""
    kind = lock["kind"]
    for name, glob in sorted(wanted.items()):
        if not _matching(lock, [name]):
            continue
        if kind == "hold" and not lock.get("installed"):
            return "the run installs %s, which the hold keeps from being installed" % name
        if kind == "zypper" and name not in installed:
            return "the run installs %s, which the lock keeps from being installed" % name
        if name in (DKMS, DKMS_FIRMWARE):
            if not dkms_moves:
                continue
            fits = lock["version"] is not None and name == DKMS and _version_fits(lock["version"], glob)
            if kind in ("hold", "zypper") or (kind == "lock" and not fits):
                return "the run moves %s to the decided driver line (%s %s)" % (name, DKMS, glob)
            if kind == "exclude" and (fits or lock["version"] is None):
                return "the run installs %s %s, which the entry excludes" % (name, glob)
        elif kind == "exclude" and lock["version"] is None:
            return "the run installs %s, which the entry excludes" % name
    return None


def blocking_locks(locks, removes=(), wanted=None, installed=(), dkms_moves=False):
    """[{name, kind, reason, release, what}] of the ``locks`` (the package_locks module's) that would block the run.

    ``removes``: the release packages the run removes; ``wanted``: {package: version glob, or "" for any
    version} the run installs; ``installed``: the host's installed package names; ``dkms_moves``: whether
    amdgpu-dkms moves to the decided line (rocm_dkms_move), taking amdgpu-dkms-firmware with it.
    """
    wanted = dict(wanted or {})
    if DKMS in wanted:
        wanted.setdefault(DKMS_FIRMWARE, "")
    problems = []
    for lock in locks:
        kind = KINDS[lock["kind"]]
        reason = _removal_problem(lock, removes, installed) if kind["stops_removal"] else None
        reason = reason or _install_problem(lock, wanted, dkms_moves, installed)
        if reason:
            problems.append({"name": lock["name"], "kind": lock["kind"], "reason": reason,
                             "release": kind["release"] % lock["name"], "what": kind["what"]})
    return problems


def lock_problem(host, problems):
    """One message naming the host, each blocking lock, why, and the command that releases it; None without."""
    if not problems:
        return None
    return "%s: %s would block this run before it could finish, so nothing was changed: %s" % (
        host, "a package hold or version lock" if len(problems) == 1 else "%d package holds or version locks" % len(
            problems), "; ".join("%s on %s (%s; release it: %s)" % (
                problem["what"], problem["name"], problem["reason"], problem["release"]) for problem in problems))
