# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OS, kernel and CPU facts a GPU decision needs, as ``ansible.builtin.setup`` reports them.

``gather_host_facts(module)`` returns ``(facts, warnings)``: ``facts`` holds the
names of ``HOST_FACTS`` with setup's ``ansible_`` prefix (``ansible_distribution``
...), so a play sees them as ``ansible_facts.distribution`` exactly as after
``setup`` with ``gather_subset: [min, hardware]``; ``warnings`` names each fact
that could not be read. It never raises, and it always reads the real host (the
``sysfs_root`` of the GPU facts does not apply).

``facts`` also holds ``ansible_host_facts_digest``: a digest of everything the
distribution and processor facts are read from (``sources_digest``). Given the
digest of an earlier read (``known_digest``) that still matches, those facts are
left out: they would come out the same, and importing setup's collectors is most
of the cost of a nightly check on the host. A caller that passes it keeps the
earlier facts (the fact cache does).

Where the values come from, all of it setup's own code from ansible-core:

* distribution, distribution_version, distribution_major_version,
  distribution_release, os_family: ``DistributionFactCollector``, unchanged (it
  reads /etc/os-release and the other release files; the bundled ``distro``
  also asks ``lsb_release -a`` where it is installed, as in setup).
* kernel, kernel_version, architecture: on Linux the three expressions
  ``PlatformFactCollector`` uses (``platform.release()``, ``platform.version()``,
  ``platform.machine()`` with its i86 mapping), in ``platform_facts``. The
  whole collector also resolves the FQDN (a DNS query) and runs ``file`` on the
  interpreter for facts not wanted here. On other systems the whole collector runs.
* processor: ``LinuxHardware.get_cpu_facts``, the code of setup's hardware
  subset on Linux: one read of /proc/cpuinfo (plus /proc/xen and
  /sys/hypervisor/type), no command on Python 3 (its ``nproc`` fallback is for
  interpreters without ``os.sched_getaffinity``). On x86 the list is, per logical
  CPU, its index, vendor_id and model name: ``["0", "AuthenticAMD", "AMD EPYC
  9654 96-Core Processor", "1", ...]``. Other systems get no ``processor`` and a
  warning.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import platform
import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.host.facts_digest import read_sources_digest

HOST_FACTS = (
    "distribution",
    "distribution_version",
    "distribution_major_version",
    "distribution_release",
    "os_family",
    "kernel",
    "kernel_version",
    "architecture",
    "processor",
)
DISTRIBUTION_FACTS = HOST_FACTS[:5]
DIGEST_FACT = "host_facts_digest"
# The facts read from the digest's sources, left out when it is unchanged.
DIGEST_FACTS = DISTRIBUTION_FACTS + ("processor",)

PLATFORM_FACTS = ("kernel", "kernel_version", "architecture")
FACT_PREFIX = "ansible_"
# ansible.module_utils.facts.system.platform.SOLARIS_I86_RE_PATTERN (i86pc is a Solaris-ism; Linux has i386..i686).
I86_RE = re.compile(r"i([3456]86|86pc)")


def prefixed(facts):
    """The wanted facts under setup's names: ``{"ansible_distribution": ...}``, in HOST_FACTS order, then the
    digest."""
    return dict((FACT_PREFIX + name, facts[name]) for name in HOST_FACTS + (DIGEST_FACT,) if name in facts)


def architecture_of(machine):
    """PlatformFactCollector's ``architecture`` on a system other than AIX and OpenBSD."""
    if machine == "x86_64":
        return machine
    if I86_RE.search(machine):
        return "i386"
    return machine


def platform_facts(release, version, machine):
    """kernel, kernel_version, architecture from uname's parts, as PlatformFactCollector sets them on Linux."""
    return {"kernel": release, "kernel_version": version, "architecture": architecture_of(machine)}


def failure(name, exc):
    return "host_facts: %s could not be read (%s: %s)" % (name, type(exc).__name__, exc)


def read_distribution(module):
    from ansible.module_utils.facts.system.distribution import DistributionFactCollector

    found = DistributionFactCollector().collect(module=module) or {}
    return dict((name, found[name]) for name in DISTRIBUTION_FACTS if name in found)


def read_platform(module, system):
    if system == "Linux":
        return platform_facts(platform.release(), platform.version(), platform.machine())
    from ansible.module_utils.facts.system.platform import PlatformFactCollector

    found = PlatformFactCollector().collect(module=module) or {}
    return dict((name, found[name]) for name in PLATFORM_FACTS if name in found)


def read_processor(module, architecture):
    """setup's ``processor`` list on Linux; None when /proc/cpuinfo cannot be read."""
    from ansible.module_utils.facts.hardware.linux import LinuxHardware

    collected = {FACT_PREFIX + "architecture": architecture} if architecture else {}
    return LinuxHardware(module).get_cpu_facts(collected_facts=collected).get("processor")


def gather_host_facts(module, system=None, known_digest=None):
    """``(facts, warnings)``: setup's prefixed HOST_FACTS that could be read, and one warning per failure; the
    distribution and processor facts are left out where ``known_digest`` is still the host's digest."""
    system = system or platform.system()
    facts, warnings = {}, []
    try:
        digest = read_sources_digest(system)
    except Exception as exc:  # a digest that cannot be made only costs the shortcut
        digest = None
        warnings.append(failure("the digest of the release files and /proc/cpuinfo", exc))
    if digest is not None:
        facts[DIGEST_FACT] = digest
    if digest and digest == known_digest:
        # Unchanged sources: only the cheap platform facts, read as ever.
        try:
            facts.update(read_platform(module, system))
        except Exception as exc:
            warnings.append(failure("kernel and architecture", exc))
        return prefixed(facts), warnings
    readers = (
        ("distribution", lambda: read_distribution(module)),
        ("kernel and architecture", lambda: read_platform(module, system)),
    )
    for name, read in readers:
        try:
            facts.update(read())
        except Exception as exc:  # a collector bug costs its facts, never the GPU facts
            warnings.append(failure(name, exc))
    if system != "Linux":
        warnings.append(
            "host_facts: processor is read from /proc/cpuinfo on Linux only, not on %s;"
            " use ansible.builtin.setup with gather_subset hardware there" % system
        )
    else:
        try:
            processor = read_processor(module, facts.get("architecture"))
        except Exception as exc:
            warnings.append(failure("processor (/proc/cpuinfo)", exc))
        else:
            if processor is None:
                warnings.append("host_facts: processor could not be read: /proc/cpuinfo is not readable")
            else:
                facts["processor"] = processor
    if warnings:  # what could not be read is read again next time, whatever the digest
        facts.pop(DIGEST_FACT, None)
    return prefixed(facts), warnings
