# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A digest of what the distribution and processor facts of ``host_facts`` are read from.

While it is unchanged those facts would come out the same, so a caller that kept
them need not import setup's collectors again (most of a nightly check's cost on
the host). It covers more than the collectors read, never less: a change it sees
that they would not only costs one more read.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import hashlib
import platform
import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.host.boot_read import read_bytes

# What DistributionFactCollector and its bundled distro read: os-release, lsb-release (and lsb_release's output,
# made from them), every /etc/*-release and /etc/*_version file, and the update.conf of CoreOS and Flatcar.
RELEASE_FILES = ("/etc/os-release", "/usr/lib/os-release", "/etc/lsb-release", "/etc/coreos/update.conf",
                 "/etc/flatcar/update.conf")
RELEASE_GLOBS = ("/etc/*[-_]release", "/etc/*[-_]version")
CPUINFO = "/proc/cpuinfo"
# /proc/cpuinfo lines that change while the CPU does not (the x86 clock); none of them is in setup's facts.
VOLATILE_CPUINFO = re.compile(r"^cpu MHz\s*:.*$", re.MULTILINE)


def sources_digest(system, uname, files, cpuinfo):
    """A digest of what the distribution and processor facts are read from: the system, uname's release, version
    and machine, {path: bytes or None (absent)} of the release files, and /proc/cpuinfo less its volatile lines."""
    digest = hashlib.sha256()
    for part in [system] + list(uname):
        digest.update(b"%d:%s" % (len(part), part.encode("utf-8", "surrogateescape")))
    for path in sorted(files):
        content = files[path]
        digest.update(b"%s\0%s\0" % (path.encode("utf-8", "surrogateescape"),
                                     b"-" if content is None else hashlib.sha256(content).hexdigest().encode()))
    digest.update(VOLATILE_CPUINFO.sub("", cpuinfo).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def read_sources_digest(system):
    """``sources_digest`` of this host; None where /proc/cpuinfo cannot be read (the facts are then read)."""
    paths = set(RELEASE_FILES)
    for pattern in RELEASE_GLOBS:
        paths.update(glob.glob(pattern))
    cpuinfo = read_bytes(CPUINFO)
    if cpuinfo is None:
        return None
    uname = platform.uname()
    return sources_digest(system, (uname[2], uname[3], uname[4]), dict((path, read_bytes(path)) for path in paths),
                          cpuinfo.decode("utf-8", "surrogateescape"))
