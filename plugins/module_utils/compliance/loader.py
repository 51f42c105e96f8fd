# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dynamic loader: the ROCm runtime libraries resolve to the default release (ROCM-ENV-008).

A program linked against HIP asks the loader for ``libamdhip64.so.<major>``; without an RPATH or an
LD_LIBRARY_PATH (ROCM-ENV-005/006 judge that one) the loader takes the first entry of that soname for the
host's architecture in /etc/ld.so.cache, which ldconfig builds from the directories /etc/ld.so.conf lists
(``include`` followed, in order) and its own trusted ones. The checker reads:

* the cache, with this machine's ``ldconfig -p`` (``-C <root>/etc/ld.so.cache`` for a root other than /:
  it only reads the file);
* /etc/ld.so.conf and what it includes, naming the file and line that lists each directory;
* the runtime libraries (``libraries``: HIP, the HSA runtime, AMD SMI) in the default release's lib
  directories and in each listed directory.

Findings: a soname that resolves outside the default release (naming the path and the line that lists its
directory); another release's directory in the cache or listed in a file, holding runtime libraries, even where
it does not win; a listed directory whose runtime libraries the cache does not have yet (pending ``ldconfig``),
or a cache entry whose directory no file lists now or whose file is gone (the cache is older than the files);
runtime libraries of the default release that no listed directory gives the loader. A soname the default
release does not have, resolving outside every ROCm release (the distribution's HSA runtime that its own rocminfo
loads, the distribution's libamd_smi.so.0 beside a release's libamd_smi.so.27), is said, not failed. With no
runtime library in the default release (a host with the tools only) and nothing of another release, the check is
skipped, saying so.

The decisions are the pure functions ``parse_cache``, ``first_for_arch`` and ``conf_lines``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import glob
import os
import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import (
    CheckError,
    CommandUnavailable,
    failed,
    passed,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.environment import (
    _resolved,
    default_release_test,
    other_release_root,
)

LDCONFIG = ("/sbin/ldconfig", "/usr/sbin/ldconfig", "/usr/bin/ldconfig", "/bin/ldconfig")
LD_SO_CONF = "/etc/ld.so.conf"
LD_SO_CACHE = "/etc/ld.so.cache"
# The directories ldconfig reads whatever ld.so.conf lists (/lib, /usr/lib, lib64, Debian's multiarch ones).
_TRUSTED = re.compile(r"^/(?:usr/)?lib(?:32|64|x32)?(?:/[a-z0-9_]+-linux-gnu[a-z0-9_]*)?$")
# The flag ldconfig -p prints for a library of the host's architecture ("libc6,x86-64"); a machine not listed
# takes every entry.
ARCH_FLAGS = {"x86_64": "x86-64", "aarch64": "AArch64", "ppc64le": "64bit", "ppc64": "64bit", "s390x": "64bit"}
_CACHE_LINE = re.compile(r"^\s+(\S+)\s+\(([^)]*)\)\s+=>\s+(\S.*?)\s*$")
PENDING_LDCONFIG = "pending ldconfig"


# ---- parsers ----------------------------------------------------------------------------------------------------


def parse_cache(text):
    """[{soname, flags, path}] in cache order from ``ldconfig -p``."""
    entries = []
    for line in (text or "").splitlines():
        match = _CACHE_LINE.match(line)
        if match:
            flags = [flag.strip() for flag in match.group(2).split(",")]
            entries.append({"soname": match.group(1), "flags": flags, "path": match.group(3)})
    return entries


def for_arch(entries, machine):
    """The entries of the host's architecture (every entry for a machine ARCH_FLAGS does not name)."""
    flag = ARCH_FLAGS.get(machine)
    return [entry for entry in entries if flag is None or flag in entry["flags"]]


def first_for_arch(entries, machine):
    """{soname: entry}: the first entry of each soname for the architecture, the one the loader takes."""
    chosen = {}
    for entry in for_arch(entries, machine):
        chosen.setdefault(entry["soname"], entry)
    return chosen


def conf_lines(read, expand, start=LD_SO_CONF):
    """[{directory, path, line}] that the files from ``start`` list, in ldconfig's order.

    ``read(path)`` is a file's text (None: none there), ``expand(pattern)`` the files a glob matches, in name
    order. ``include PATTERN...`` is read in place (a relative pattern against the including file's directory),
    ``hwcap`` lines are skipped, ``#`` starts a comment, a trailing ``=TYPE`` (the old library type) and trailing
    slashes are dropped.
    """
    listed, seen = [], set()

    def parse(path, depth):
        text = read(path) if path not in seen and depth <= 16 else None
        if text is None:
            return
        seen.add(path)
        for number, raw in enumerate(text.splitlines(), 1):
            words = raw.split("#", 1)[0].split()
            if not words or (words[0] == "hwcap" and len(words) > 1):
                continue
            if words[0] == "include" and len(words) > 1:
                for pattern in words[1:]:
                    if not pattern.startswith("/"):
                        pattern = os.path.join(os.path.dirname(path), pattern)
                    for match in expand(pattern):
                        parse(match, depth + 1)
                continue
            directory = raw.split("#", 1)[0].strip().split("=", 1)[0].strip().rstrip("/") or "/"
            listed.append({"directory": os.path.normpath(directory), "path": path, "line": number})

    parse(start, 0)
    return listed


# ---- reading the host -------------------------------------------------------------------------------------------


def _listed(host):
    """conf_lines of the host's /etc/ld.so.conf."""

    def read(path):
        try:
            return host.read_text(path)
        except CheckError:
            return None

    root = host.root.rstrip("/")

    def expand(pattern):
        return [
            full[len(root) :] if root else full
            for full in sorted(glob.glob(host.path(pattern)))
            if os.path.isfile(full)
        ]

    return conf_lines(read, expand)


def read_cache(host, timeout):
    """([{soname, flags, path}] or None, the reason it could not be read or None)."""
    ldconfig = next((path for path in LDCONFIG if os.path.isfile(path) and os.access(path, os.X_OK)), None)
    if ldconfig is None:
        return None, "ldconfig is not installed"
    argv = [ldconfig, "-p"] + ([] if host.is_live else ["-C", host.path(LD_SO_CACHE)])
    try:
        rc, out, err = host.run_reading(argv, timeout)
    except CommandUnavailable as exc:
        return None, str(exc)
    if rc != 0:
        detail = " ".join((err or out or "").split())
        return None, "ldconfig -p exited %d%s" % (rc, ": %s" % detail[:200] if detail else "")
    return parse_cache(out), None


def _machine():
    return os.uname()[4] if hasattr(os, "uname") else ""


def _libraries_in(host, directory, patterns):
    """The names of runtime library files (or links to them) in ``directory`` on the host."""
    resolved = _resolved(host, directory)  # links followed inside root (/opt/rocm -> /opt/rocm-6.4.1)
    full = host.path(resolved) if resolved else None
    if not full or not os.path.isdir(full):
        return []
    try:
        names = os.listdir(full)
    except OSError:
        return []
    return sorted(
        name
        for name in names
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns) and os.path.exists(os.path.join(full, name))
    )


def _stem(name):
    return name.split(".so", 1)[0]


def _shown(names):
    """One name per library (the shortest: the soname where it is there), for a message."""
    best = {}
    for name in names:
        stem = _stem(name)
        if stem not in best or len(name) < len(best[stem]):
            best[stem] = name
    return ", ".join(best[stem] for stem in sorted(best))


# ---- the check --------------------------------------------------------------------------------------------------


def check_runtime_libraries(expect, host):
    patterns, role_files = expect["libraries"], set(expect["role_files"])
    # The role's own linker file (ROCM-ENV-003): it lists the default release's directories.
    role_file = sorted(role_files)[0] if role_files else None
    rocm_path, release_dir = expect["rocm_path"], expect["release_dir"]
    is_default = default_release_test(host, rocm_path, release_dir)
    release = "%s%s" % (rocm_path, " (%s)" % release_dir if release_dir else "")
    names = [os.path.normpath(name) for name in (release_dir, rocm_path) if name]
    roots = set(names) | set(filter(None, (_resolved(host, name) for name in names)))

    def same_dir(path):
        return _resolved(host, path) or os.path.normpath(path)

    def in_default(path):
        if other_release_root(host, path, is_default):
            return False
        candidates = [os.path.normpath(path), _resolved(host, path)]
        return any(
            candidate and any(candidate == root or candidate.startswith(root.rstrip("/") + "/") for root in roots)
            for candidate in candidates
        )

    listed = _listed(host)
    by_dir = {}
    for entry in listed:
        by_dir.setdefault(same_dir(entry["directory"]), []).append(entry)

    def listed_by(directory):
        lines = by_dir.get(same_dir(directory), [])
        if lines:
            return "%s:%d lists %s" % (lines[0]["path"], lines[0]["line"], lines[0]["directory"])
        if _TRUSTED.match(os.path.normpath(directory)):
            return "%s is a directory ldconfig always reads" % directory
        return None

    # The default release's runtime libraries: its lib directories and the listed directories inside it.
    release_dirs = {}
    for directory in ["%s/%s" % (name, sub) for name in names for sub in ("lib", "lib64")] + [
        entry["directory"] for entry in listed if in_default(entry["directory"])
    ]:
        found = _libraries_in(host, directory, patterns)
        if found:
            release_dirs.setdefault(same_dir(directory), (directory, found))
    release_names = set(name for _directory, found in release_dirs.values() for name in found)
    release_stems = set(_stem(name) for name in release_names)

    entries, reason = (None, "not run (run: false)") if not expect["run"] else read_cache(host, expect["timeout"])
    runtime = [
        entry for entry in entries or [] if any(fnmatch.fnmatchcase(entry["soname"], pattern) for pattern in patterns)
    ]
    machine = _machine()
    problems, own, foreign, pending, reported = [], [], [], [], set()

    def finding(message, owner):
        if message not in problems:
            problems.append(message)
            (own if owner in role_files else foreign).append(message)

    winners, elsewhere, others = first_for_arch(runtime, machine), [], set()
    for soname, entry in sorted(winners.items()):
        if in_default(entry["path"]):
            continue
        directory = os.path.dirname(entry["path"])
        other = other_release_root(host, entry["path"], is_default)
        if other:
            others.add(other)
        if not other and soname not in release_names:
            # Not a ROCm release's, and the default release has no library of that soname to resolve to: the
            # distribution's HSA runtime under its own rocminfo beside a release with the tools only, or its
            # libamd_smi.so.0 beside a release whose AMD SMI is libamd_smi.so.27 (a program built for that
            # soname can load no other).
            elsewhere.append("%s resolves to %s, and the default release has no %s" % (soname, entry["path"], soname))
            continue
        lines = by_dir.get(same_dir(directory), [])
        why = listed_by(directory) or (
            "no ld.so.conf file lists %s now: the cache is older than the files (%s)" % (directory, PENDING_LDCONFIG)
        )
        finding(
            "%s resolves to %s%s, not the default release %s: %s"
            % (soname, entry["path"], " (release %s)" % other if other else "", release, why),
            lines[0]["path"] if lines else None,
        )
        reported.add(same_dir(directory))
    # Another release's libraries in the cache, behind the winners: one finding per directory.
    behind = {}
    for entry in for_arch(runtime, machine):
        directory = os.path.dirname(entry["path"])
        if other_release_root(host, entry["path"], is_default) and same_dir(directory) not in reported:
            others.add(other_release_root(host, entry["path"], is_default))
            behind.setdefault(directory, []).append(entry["soname"])
    for directory, sonames in sorted(behind.items()):
        reported.add(same_dir(directory))
        lines = by_dir.get(same_dir(directory), [])
        finding(
            "%s of release %s %s in the loader's cache too (from %s), behind the default release's: %s"
            % (
                ", ".join(sorted(set(sonames))),
                other_release_root(host, directory, is_default),
                "is" if len(set(sonames)) == 1 else "are",
                directory,
                listed_by(directory) or "no ld.so.conf file lists it now (%s)" % PENDING_LDCONFIG,
            ),
            lines[0]["path"] if lines else None,
        )
    # Listed directories: another release's, and what the cache lacks of them.
    cached_dirs = {}
    for entry in runtime:
        cached_dirs.setdefault(same_dir(os.path.dirname(entry["path"])), set()).add(_stem(entry["soname"]))
    checked = set()
    for entry in listed:
        key = same_dir(entry["directory"])
        if key in checked:
            continue  # ldconfig reads a directory once, where it is first listed
        checked.add(key)
        found = _libraries_in(host, entry["directory"], patterns)
        if not found:
            continue
        other = other_release_root(host, entry["directory"], is_default)
        if other:
            others.add(other)
        if other and key not in reported:
            reported.add(key)
            finding(
                "%s:%d lists %s, which holds %s of release %s, not the default release %s"
                % (entry["path"], entry["line"], entry["directory"], _shown(found), other, release),
                entry["path"],
            )
        if entries is None:
            continue
        missing = [name for name in found if _stem(name) not in cached_dirs.get(key, set())]
        if missing:
            pending.append(
                {"path": entry["path"], "line": entry["line"], "directory": entry["directory"], "libraries": missing}
            )
            finding(
                "%s: %s:%d lists %s, whose %s the loader's cache does not have yet (ldconfig rebuilds it)"
                % (PENDING_LDCONFIG, entry["path"], entry["line"], entry["directory"], _shown(missing)),
                entry["path"],
            )
    if entries is not None:
        # Entries the files no longer account for: a directory no file lists, a file that is gone.
        for entry in runtime:
            directory = os.path.dirname(entry["path"])
            if same_dir(directory) in reported:
                continue
            if _resolved(host, entry["path"]) is None:  # links followed inside root
                finding(
                    "%s: the loader's cache has %s => %s, which does not exist"
                    % (PENDING_LDCONFIG, entry["soname"], entry["path"]),
                    None,
                )
            elif listed_by(directory) is None:
                # The default release's directory: the role's linker file lists it (its removal or edit is
                # ROCM-ENV-003's finding); another directory is a person's.
                finding(
                    "%s: the loader's cache has %s => %s, from %s, which no ld.so.conf file lists now"
                    % (PENDING_LDCONFIG, entry["soname"], entry["path"], directory),
                    role_file if in_default(directory) else None,
                )
        # The default release's libraries the loader finds none of.
        in_cache = set(_stem(entry["soname"]) for entry in for_arch(runtime, machine) if in_default(entry["path"]))
        waiting = set(_stem(name) for item in pending for name in item["libraries"])
        for stem in sorted(release_stems - in_cache - waiting):
            directory, found = next(
                (directory, found)
                for directory, found in release_dirs.values()
                if any(_stem(name) == stem for name in found)
            )
            finding(
                "the loader's cache has no %s of the default release (%s has %s) and no ld.so.conf file lists "
                "that directory" % (stem, directory, _shown([name for name in found if _stem(name) == stem])),
                role_file,
            )
    actual = {
        "cache": {"read": entries is not None, "reason": reason},
        "resolves": dict((soname, entry["path"]) for soname, entry in sorted(winners.items())),
        "listed": [dict(entry) for entry in listed if _libraries_in(host, entry["directory"], patterns)],
        "release_libraries": dict((directory, found) for directory, found in release_dirs.values()),
        "pending": pending,
        # Every finding is the role's own linker file's (missing, or pending ldconfig): one_cause_once folds the
        # check into ROCM-ENV-003 where that file differs.
        "role_files_only": bool(own) and not foreign,
        # The other releases whose libraries the cache or the files hold: findings of their own, never folded.
        "other_releases": sorted(others),
    }
    if problems:
        outcome = failed(
            actual,
            "; ".join(problems) + ("; not seen: the loader's cache: %s" % reason if entries is None else ""),
            action="none",
        )
        outcome.update(_repair(own, foreign, role_files))
        return outcome
    if entries is None:
        return {
            "status": "unknown",
            "actual": actual,
            "diff": "",
            "action": "",
            "message": "unknown: the loader's cache: %s; the files read list no other release" % reason,
        }
    noted = "; %s" % "; ".join(elsewhere) if elsewhere else ""
    if not release_stems:
        return {
            "status": "skipped",
            "actual": actual,
            "diff": "",
            "action": "",
            "message": "the default release %s has no ROCm runtime library (%s): nothing of it to resolve (a host "
            "with the tools only)%s" % (release, ", ".join(patterns), noted),
        }
    resolved = [(soname, entry) for soname, entry in sorted(winners.items()) if in_default(entry["path"])]
    return passed(
        actual,
        "the loader resolves %s to the default release %s%s"
        % (", ".join("%s (%s)" % (soname, entry["path"]) for soname, entry in resolved), release, noted),
    )


def _repair(own, foreign, role_files):
    """site.yml where every finding is the role's own file's (it rebuilds the cache where that file waits);
    the item's repair (a person) otherwise, with site.yml's part added."""
    if not own:
        return {}
    site = "site.yml writes %s (ROCM-ENV-003) and runs ldconfig where the loader's cache lacks what it lists" % (
        " and ".join(sorted(role_files))
    )
    return {"repair": site} if not foreign else {"repair_also": site}
