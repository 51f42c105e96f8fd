# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Installed packages, read once per evaluation: dpkg's status file directly, or one ``rpm -qa`` call.

Reading /var/lib/dpkg/status costs a few milliseconds where a dpkg-query or
apt call per package would cost a process each. The host's own package manager
decides which database counts (/etc/os-release's ID and ID_LIKE): a RHEL host may
carry EPEL's dpkg, a Debian host Debian's rpm.

An RPM package is found as dnf finds what it is asked to install: by name, by its
name-version-release[.arch] (kernel-devel-5.14.0-570.12.1.el9_6.x86_64, the form
AMD's instructions write with $(uname -r)) and by what it provides.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import (
    CheckError,
    failed,
    passed,
    version_matches,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.runner import make_runner
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.package_locks import DPKG_STATUS, dpkg_paragraphs

RPM_DATABASES = ("/var/lib/rpm", "/usr/lib/sysimage/rpm")
RPM_BINARIES = ("/usr/bin/rpm", "/bin/rpm")
RPM_QUERY_FORMAT = "%{NAME}\\t%{EPOCH}\\t%{VERSION}-%{RELEASE}\\t%{ARCH}\\t[%{PROVIDENAME} ]\\n"
OS_RELEASE_FILES = ("/etc/os-release", "/usr/lib/os-release")
DPKG_SYSTEMS = ("debian", "ubuntu")
RPM_SYSTEMS = ("rhel", "fedora", "centos", "suse", "sles", "opensuse")
RPM_TIMEOUT = 60


def parse_dpkg_status(text):
    """{package: [version, ...]} of packages whose Status is 'install ok installed' (one per arch)."""
    installed = {}
    for fields in dpkg_paragraphs(text):
        if fields.get("status", "").split()[-1:] == ["installed"]:
            installed.setdefault(fields["package"], []).append(fields.get("version", ""))
    return installed


def parse_rpm_query(text):
    """{name: [version, ...]} of ``rpm -qa --qf RPM_QUERY_FORMAT``, each package also under its
    name-version-release, name-version-release.arch and the names it provides."""
    installed = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) not in (3, 5) or not parts[0]:
            continue
        name, epoch, version_release = parts[:3]
        version = version_release
        if epoch not in ("(none)", "", "0"):
            version = "%s:%s" % (epoch, version_release)
        aliases = [name]
        if len(parts) == 5:
            arch, provides = parts[3], parts[4].split()
            aliases += ["%s-%s" % (name, version_release), "%s-%s.%s" % (name, version_release, arch)] + provides
        for alias in dict.fromkeys(aliases):
            installed.setdefault(alias, []).append(version)
    return installed


def native_manager(host):
    """ "dpkg" or "rpm": the package manager /etc/os-release names (ID, then ID_LIKE), None if it names neither."""
    text = next((found for found in map(host.read_text, OS_RELEASE_FILES) if found is not None), "")
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key.strip()] = value.strip().strip("\"'")
    for word in (fields.get("ID", "") + " " + fields.get("ID_LIKE", "")).lower().split():
        if word in DPKG_SYSTEMS:
            return "dpkg"
        if word in RPM_SYSTEMS or word.startswith("opensuse"):
            return "rpm"
    return None


def _rpm_inventory(host):
    binary = next((path for path in RPM_BINARIES if os.access(path, os.X_OK)), None)
    if binary is None:
        raise CheckError("the host has an RPM database but no rpm command")
    # The database found, named: rpm's compiled-in default differs where rpm is not the system's own
    # (Debian's rpm reads ~/.rpmdb).
    database = next(path for path in RPM_DATABASES if os.path.isdir(host.path(path)))
    args = ["--dbpath", database, "-qa", "--qf", RPM_QUERY_FORMAT]
    if not host.is_live:
        args = ["--root", os.path.realpath(host.root)] + args
    rc, out, err = make_runner(binary, RPM_TIMEOUT)(args)
    if rc != 0:
        raise CheckError("rpm -qa failed (rc %d): %s" % (rc, err.strip()[:200]))
    return "rpm", parse_rpm_query(out)


def installed_packages(host):
    """(manager, {name: [versions]}), computed once per HostView."""

    def compute():
        has_rpm = any(os.path.isdir(host.path(path)) for path in RPM_DATABASES)
        if has_rpm and native_manager(host) == "rpm":
            return _rpm_inventory(host)
        text = host.read_text(DPKG_STATUS)
        if text is not None:
            return "dpkg", parse_dpkg_status(text)
        if has_rpm:
            return _rpm_inventory(host)
        raise CheckError("no package database: neither %s nor an RPM database exists" % DPKG_STATUS)

    outcome = host.cached("packages", lambda: _capture(compute))
    if isinstance(outcome, CheckError):
        raise outcome
    return outcome


def _capture(compute):
    # A failed inventory is remembered too: each package item reports the same reason, at the cost of one read.
    try:
        return compute()
    except CheckError as exc:
        return exc


def check_package(expect, host):
    name = expect["name"]
    manager, installed = installed_packages(host)
    versions = installed.get(name, [])
    actual = {"installed": versions, "manager": manager}
    if expect["state"] == "absent":
        if versions:
            return failed(actual, "%s %s is installed and should not be" % (name, ", ".join(versions)), action="remove")
        return passed(actual, "%s is not installed" % name)
    if not versions:
        return failed(actual, "%s is not installed" % name, action="install")
    wanted = expect.get("version")
    if wanted and not any(version_matches(version, wanted) for version in versions):
        message = "%s %s is installed, expected %s" % (name, ", ".join(versions), wanted)
        return failed(actual, message, action="update")
    return passed(actual, "%s %s is installed" % (name, ", ".join(versions)))
