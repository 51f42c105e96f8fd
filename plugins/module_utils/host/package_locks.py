# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The package holds and version locks a site keeps, read from the package managers' own files.

* apt: a hold is dpkg's selection ``hold`` (``apt-mark hold``), the first word of a
  package's ``Status`` in /var/lib/dpkg/status. It keeps the installed version: apt
  neither removes nor replaces a held package unless told to change held packages.
* dnf: the versionlock plugin's list (``dnf versionlock add``), where its
  /etc/dnf/plugins/versionlock.conf enables it and names the list, and dnf.conf leaves
  plugins on. A lock offers only the locked version of its name to an install; an entry
  with ``!`` excludes that version. Neither stops a removal. Without the plugin's
  configuration no lock applies, whatever a list file holds.
* zypper: libzypp's locks file (``zypper addlock``, locks(5)), where zypp.conf leaves
  locksfile.apply on. A lock keeps what it matches as it is: an installed package is
  neither removed nor replaced, one not installed is not installed. Its version
  constraint (``version: < 6.14``) is kept as written.

What runs is read, no command: the controller decides what blocks a run
(plugins/plugin_utils/decision/package_locks.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

DPKG_STATUS = "/var/lib/dpkg/status"
DNF_CONF = "/etc/dnf/dnf.conf"
VERSIONLOCK_CONF = "/etc/dnf/plugins/versionlock.conf"
ZYPP_CONF = "/etc/zypp/zypp.conf"
ZYPP_LOCKS = "/etc/zypp/locks"
# What `dnf versionlock add` writes: NAME-EPOCH:VERSION-RELEASE.* (the plugin's pkgtup2spec).
_NEVRA = re.compile(r"^(?P<name>.+)-(?P<epoch>[0-9]+):(?P<version>[^-]+)-(?P<release>[^-]+?)(?:\.\*)?$")
_TRUE = ("1", "yes", "true", "on")


def dpkg_paragraphs(text):
    """Each package paragraph of dpkg's status file as {field (lower case): value}, continuation lines left out."""
    for paragraph in text.split("\n\n"):
        fields = {}
        for line in paragraph.splitlines():
            if line[:1] in (" ", "\t") or ":" not in line:
                continue  # continuation lines of Description and Conffiles
            key, _sep, value = line.partition(":")
            fields[key.strip().lower()] = value.strip()
        if fields.get("package"):
            yield fields


def dpkg_holds(text):
    """[{name, version, installed, kind: hold}] of the packages whose selection is hold."""
    holds = []
    for fields in dpkg_paragraphs(text):
        status = fields.get("status", "").split()
        if status[:1] == ["hold"]:
            installed = status[-1:] == ["installed"]
            holds.append({"name": fields["package"], "version": fields.get("version") if installed else None,
                          "installed": installed, "kind": "hold"})
    return holds


def _ini(text):
    """{section: {key: value}} of an ini text, keys in lower case (dnf's configuration files)."""
    sections, section = {}, None
    for line in (text or "").splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = sections.setdefault(line[1:-1].strip(), {})
        elif section is not None and "=" in line:
            key, _sep, value = line.partition("=")
            section[key.strip().lower()] = value.strip()
    return sections


def versionlock_entry(line):
    """{name, version, kind} of one versionlock list line: kind lock or exclude (``!``); version EPOCH:VERSION-RELEASE,
    None where the entry is a bare name or glob (it then stands for every version of the names it matches)."""
    entry = line.strip()
    kind = "exclude" if entry.startswith("!") else "lock"
    entry = entry.lstrip("!")
    match = _NEVRA.match(entry)
    if not match:
        return {"name": entry, "version": None, "kind": kind}
    return {"name": match.group("name"), "kind": kind,
            "version": "%s:%s-%s" % (match.group("epoch"), match.group("version"), match.group("release"))}


def versionlock_list_path(read_text):
    """The list the versionlock plugin reads, None where the plugin is absent or off (``read_text(path)``)."""
    if _ini(read_text(DNF_CONF)).get("main", {}).get("plugins", "1").lower() not in _TRUE:
        return None
    conf = read_text(VERSIONLOCK_CONF)
    if conf is None:
        return None
    main = _ini(conf).get("main", {})
    if main.get("enabled", "1").lower() not in _TRUE:
        return None
    return main.get("locklist") or None


def dnf_locks(read_text):
    """[{name, version, kind}] of the versionlock plugin's list; empty without the plugin."""
    path = versionlock_list_path(read_text)
    text = read_text(path) if path else None
    return [versionlock_entry(line) for line in (text or "").splitlines()
            if line.strip() and not line.strip().startswith("#")]


def zypper_lock_entries(text):
    """Each lock of a locks(5) file as {attribute: value}; locks are separated by empty lines, comments start with #."""
    entries, entry = [], {}
    for line in (text or "").splitlines() + [""]:
        stripped = line.strip()
        if not stripped:
            if entry:
                entries.append(entry)
            entry = {}
        elif not stripped.startswith("#") and ":" in stripped:
            key, _sep, value = stripped.partition(":")
            entry[key.strip()] = value.strip()
    return entries


def zypper_locks(read_text):
    """[{name, version, kind: zypper}] of the package locks libzypp applies; empty where zypp.conf turns the locks
    file off. A lock naming no package (a query by summary, a patch or pattern) is left out: it stops nothing the run
    installs or removes by name."""
    main = _ini(read_text(ZYPP_CONF)).get("main", {})
    if main.get("locksfile.apply", "true").lower() not in _TRUE:
        return []
    locks = []
    for entry in zypper_lock_entries(read_text(main.get("locksfile.path") or ZYPP_LOCKS)):
        name = entry.get("solvable_name") or entry.get("query_string")
        if not name or entry.get("type", "package") != "package":
            continue
        if entry.get("match_type", "substring") == "substring":  # libzypp's default match (exact and glob: as is)
            name = "*%s*" % name
        locks.append({"name": name, "version": entry.get("version") or None, "kind": "zypper"})
    return locks


def read_locks(manager, root="/"):
    """The holds or locks of ``manager`` (apt, dnf, zypper) on the host at ``root``."""

    def read_text(path):
        try:
            with open(os.path.join(root, path.lstrip("/")), "r") as handle:
                return handle.read()
        except (IOError, OSError):
            return None

    if manager == "apt":
        return dpkg_holds(read_text(DPKG_STATUS) or "")
    if manager == "dnf":
        return dnf_locks(read_text)
    if manager == "zypper":
        return zypper_locks(read_text)
    raise ValueError("reading the locks of %r is not supported (apt, dnf, zypper)" % (manager,))
