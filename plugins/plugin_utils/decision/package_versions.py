# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Package versions compared as their package managers compare them.

* compare_deb_versions(a, b): dpkg's order (deb-version(7): epoch, upstream,
  revision; '~' sorts before everything, letters before other characters).
* compare_rpm_versions(a, b): rpm's order of [epoch:]version[-release]
  (rpmvercmp: alternating digit and letter segments, '~' and '^' as rpm 4.15+).
  A side without a release compares on epoch and version only, as rpm does for
  a dependency that names no release (amdgpu-dkms >= 1:6.16.13).

Stdlib only (runs on managed hosts too); each returns -1, 0 or 1.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re


def _sign(value):
    return (value > 0) - (value < 0)


def _split_epoch(text):
    text = str(text).strip()
    epoch, colon, rest = text.partition(":")
    if colon and epoch.isdigit():
        return int(epoch), rest
    if colon:
        raise ValueError("not a package version (bad epoch): %r" % (text,))
    return 0, text


def _deb_order(char):
    """dpkg's weight of one non-digit character ('' is the end of the string)."""
    if char == "~":
        return -1
    if not char:
        return 0
    if char.isalpha():
        return ord(char)
    return ord(char) + 256


def _deb_part(left, right):
    """dpkg's verrevcmp: non-digit runs by _deb_order, digit runs as numbers."""
    i = j = 0
    while i < len(left) or j < len(right):
        first_diff = 0
        while (i < len(left) and not left[i].isdigit()) or (j < len(right) and not right[j].isdigit()):
            a = _deb_order(left[i]) if i < len(left) and not left[i].isdigit() else 0
            b = _deb_order(right[j]) if j < len(right) and not right[j].isdigit() else 0
            if a != b:
                return _sign(a - b)
            i += 1
            j += 1
        while i < len(left) and left[i] == "0":
            i += 1
        while j < len(right) and right[j] == "0":
            j += 1
        while i < len(left) and left[i].isdigit() and j < len(right) and right[j].isdigit():
            if not first_diff:
                first_diff = ord(left[i]) - ord(right[j])
            i += 1
            j += 1
        if i < len(left) and left[i].isdigit():
            return 1
        if j < len(right) and right[j].isdigit():
            return -1
        if first_diff:
            return _sign(first_diff)
    return 0


def parse_deb_version(text):
    """(epoch, upstream, revision); the revision is '' when there is none."""
    epoch, rest = _split_epoch(text)
    upstream, dash, revision = rest.rpartition("-")
    if not dash:
        upstream, revision = rest, ""
    if not upstream or not upstream[0].isdigit():
        raise ValueError("not a Debian package version (upstream must start with a digit): %r" % (text,))
    return epoch, upstream, revision


def compare_deb_versions(left, right):
    a, b = parse_deb_version(left), parse_deb_version(right)
    if a[0] != b[0]:
        return _sign(a[0] - b[0])
    return _deb_part(a[1], b[1]) or _deb_part(a[2], b[2])


_RPM_SEGMENT = re.compile(r"(\d+|[a-zA-Z]+|~|\^)")


def rpmvercmp(left, right):
    """rpm's rpmvercmp for one version or release string."""
    if left == right:
        return 0
    a = list(_RPM_SEGMENT.findall(left))
    b = list(_RPM_SEGMENT.findall(right))
    while a or b:
        x = a.pop(0) if a else None
        y = b.pop(0) if b else None
        if x == "~" or y == "~":  # a tilde sorts before everything, the end included
            if x != y:
                return -1 if x == "~" else 1
            continue
        if x == "^" or y == "^":  # a caret sorts after the end, before anything else
            if x is None:
                return -1
            if y is None:
                return 1
            if x != y:
                return -1 if x == "^" else 1
            continue
        if x is None or y is None:
            return -1 if x is None else 1
        if x.isdigit() != y.isdigit():  # a number is newer than letters
            return 1 if x.isdigit() else -1
        if x.isdigit():
            x, y = x.lstrip("0") or "0", y.lstrip("0") or "0"
            if len(x) != len(y):
                return _sign(len(x) - len(y))
        if x != y:
            return 1 if x > y else -1
    return 0


def parse_rpm_version(text):
    """(epoch, version, release); the release is None when there is none."""
    epoch, rest = _split_epoch(text)
    version, dash, release = rest.rpartition("-")
    if not dash:
        version, release = rest, None
    if not version:
        raise ValueError("not an RPM version: %r" % (text,))
    return epoch, version, release


def compare_rpm_versions(left, right):
    a, b = parse_rpm_version(left), parse_rpm_version(right)
    if a[0] != b[0]:
        return _sign(a[0] - b[0])
    order = rpmvercmp(a[1], b[1])
    if order or a[2] is None or b[2] is None:
        return order
    return rpmvercmp(a[2], b[2])


COMPARATORS = {"deb": compare_deb_versions, "rpm": compare_rpm_versions}


def compare_package_versions(left, right, package_format):
    """compare_deb_versions or compare_rpm_versions by ``package_format`` ('deb' or 'rpm')."""
    if package_format not in COMPARATORS:
        raise ValueError("unknown package format %r (deb or rpm)" % (package_format,))
    return COMPARATORS[package_format](left, right)
