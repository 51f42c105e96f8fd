# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Version arithmetic for the preflight decisions: ROCm releases, kernels, OS releases.

Stdlib only (runs on managed hosts too). Versions are compared as tuples of
integers; anything after the numeric part ("-91-generic", "+deb12") is ignored.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_NUMERIC_PREFIX = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")

# ansible_distribution (and common spellings) -> the key the support matrix uses.
OS_KEYS = {
    "ubuntu": "ubuntu",
    "debian": "debian",
    "redhat": "rhel",
    "rhel": "rhel",
    "red hat enterprise linux": "rhel",
    "sles": "sles",
    "sles_sap": "sles",
    "suse": "sles",
    "oraclelinux": "ol",
    "oracle linux": "ol",
    "ol": "ol",
    "centos": "centos",
    "rocky": "rocky",
    "azure linux": "azurelinux",
    "azurelinux": "azurelinux",
    "azurelinuxos": "azurelinux",
}

OS_LABELS = {
    "ubuntu": "Ubuntu",
    "debian": "Debian",
    "rhel": "RHEL",
    "sles": "SLES",
    "ol": "Oracle Linux",
    "centos": "CentOS",
    "rocky": "Rocky Linux",
    "azurelinux": "Azure Linux",
}


def parse_version(value):
    """'6.4.1' -> (6, 4, 1); '6.18.44-fc-v595' -> (6, 18, 44); junk or None -> None."""
    if value is None:
        return None
    match = _NUMERIC_PREFIX.match(str(value))
    if not match:
        return None
    return tuple(int(part) for part in match.group(1).split("."))


def version_key(value, width=3):
    """A parsed version padded with zeros, so '6.4' and '6.4.0' compare equal."""
    parsed = parse_version(value)
    if parsed is None:
        return None
    return (parsed + (0,) * width)[:width] if len(parsed) < width else parsed


def newest_since(entries, release):
    """The entry of ``entries`` ({since: x.y.z, ...}) with the highest 'since' not above ``release``; None if none.

    Raises ValueError naming the bad value when ``release`` or a 'since' is not a version.
    """
    wanted = version_key(release)
    if wanted is None:
        raise ValueError("%r is not an x.y.z ROCm release" % (release,))
    best, best_key = None, None
    for entry in entries or []:
        since = version_key(entry.get("since"))
        if since is None:
            raise ValueError("since %r of %r is not a version" % (entry.get("since"), entry))
        if since <= wanted and (best_key is None or since > best_key):
            best, best_key = entry, since
    return best


def compare_versions(left, right, width=3):
    """-1, 0 or 1; raises ValueError when either side is not a version."""
    a, b = version_key(left, width), version_key(right, width)
    if a is None or b is None:
        raise ValueError("cannot compare versions %r and %r" % (left, right))
    return (a > b) - (a < b)


def in_range(value, minimum=None, below=None, maximum=None, width=3):
    """minimum <= value, value < below, and value <= maximum, each bound optional.

    ``maximum`` compares only as many components as it has, so a kernel range
    whose maximum is '6.12' admits 6.12.40 but not 6.13.
    """
    key = version_key(value, width)
    if key is None:
        raise ValueError("not a version: %r" % (value,))
    if minimum is not None and key < version_key(minimum, width):
        return False
    if below is not None and key >= version_key(below, width):
        return False
    if maximum is not None:
        limit = parse_version(maximum)
        if limit is None:
            raise ValueError("not a version: %r" % (maximum,))
        if key[: len(limit)] > limit:
            return False
    return True


def normalize_rocm_version(value):
    """'6.4' -> '6.4.0' (the apt repository names x.y.0 releases 'x.y'); junk -> None."""
    parsed = parse_version(value)
    if parsed is None or len(parsed) > 3:
        return None
    return ".".join(str(part) for part in (parsed + (0, 0))[:3])


def os_key(distribution):
    """ansible_distribution ('RedHat', 'OracleLinux', 'SLES') -> matrix key ('rhel', 'ol', 'sles')."""
    if not distribution:
        return None
    text = str(distribution).strip().lower()
    return OS_KEYS.get(text, text.replace(" ", ""))


def os_label(key, release):
    name = OS_LABELS.get(key, key or "unknown OS")
    return "%s %s" % (name, release) if release else name


def os_release_matches(listed, actual):
    """A listed release '12' matches '12' and '12.7'; '9.4' matches '9.4' but not '9.40' or '9'."""
    listed_parts = parse_version(listed)
    actual_parts = parse_version(actual)
    if listed_parts is None or actual_parts is None:
        return str(listed).strip() == str(actual).strip()
    return actual_parts[: len(listed_parts)] == listed_parts


def release_listed(releases_by_os, key, release):
    """True when ``{os_key: [releases]}`` lists this OS release."""
    return any(os_release_matches(listed, release) for listed in (releases_by_os or {}).get(key) or [])


def gfx_target_from_override(value):
    """HSA_OVERRIDE_GFX_VERSION '10.3.0' -> 'gfx1030', '9.0.10' -> 'gfx90a'; invalid -> None."""
    parts = str(value or "").split(".")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        return None
    major, minor, step = (int(part) for part in parts)
    if major > 63 or minor > 255 or step > 255:
        return None
    return "gfx%d%d%s" % (major, minor, format(step, "x"))


def gfx_major(target):
    """'gfx1031' -> 10, 'gfx90a' -> 9, 'gfx942' -> 9; junk -> None.

    The last two characters are minor and stepping; what precedes them is the major.
    """
    match = re.match(r"^gfx(\d{1,2})([0-9a-f])([0-9a-f])$", str(target or ""))
    return int(match.group(1)) if match else None
