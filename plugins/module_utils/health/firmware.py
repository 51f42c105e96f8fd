# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU firmware versions from ``amd-smi firmware`` and their comparison with per-class minimums.

``amd-smi firmware`` prints ``GPU: n`` blocks of ``FW_ID: X`` / ``FW_VERSION: Y`` pairs (the
same layout on amd-smi 24.x to 26.x; the set of IDs differs per GPU: RDNA3 has no TA_XGMI
or PLDM_BUNDLE, MI300A has no PLDM_BUNDLE). Versions mix plain decimal numbers (CP_MEC1
166), dotted hex bytes (VCN ``06.11.30.0C``, TA_RAS ``1B.36.02.0F``) and dotted decimal
bytes (PM ``04.85.103.184``: a byte above 99 cannot be two hex digits).

How versions compare (``compare_fw``):

* Dotted versions compare field by field as numbers. A field of digits only has the same
  order in base 10 and 16 (a longer number without leading zeros is larger, equal lengths
  compare digit by digit), so the base only matters when a field holds a-f: then both
  sides of that field are read as hex.
* A minimum with fewer fields is a prefix: ``01.25`` is met by every ``01.25.x.y`` and more.
* PM is the SMU (PMFW) version ``program.major.minor.debug``: the kernel prints the same
  32-bit value as ``smu fw program = P, smu fw version = 0x... (major.minor.debug)``. A PM
  minimum names ``major.minor[.debug]`` (``85.130``) and skips the program byte; the
  maintainer reads PM ``00.85.129.03`` as PMFW 85.129 (ROCm/ROCm#5231).
* PLDM_BUNDLE ``01.25.03.12`` is the IFWI/BKC bundle (BKC 25.03 in the same reading).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import FAIL, PASS, UNKNOWN
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.common import (
    gpu_label,
    result,
    text_lines,
)

_GPU = re.compile(r"^GPU:\s*(\d+)\s*$")
_FIELD = re.compile(r"^(FW_ID|FW_VERSION):\s*(.*?)\s*$")
_VERSION = re.compile(r"^[0-9a-fA-F]+(?:\.[0-9a-fA-F]+)*$")


def parse_amd_smi_firmware(text):
    """``{gpu: {fw_id: version}}`` from ``amd-smi firmware`` text (versions kept as printed).

    Raises ValueError without a ``GPU: n`` block or when an FW_VERSION has no FW_ID.
    """
    out, gpu, fw_id = {}, None, None
    for line in text_lines(text):
        stripped = line.strip()
        head = _GPU.match(stripped)
        if head:
            gpu, fw_id = int(head.group(1)), None
            out[gpu] = {}
            continue
        field = _FIELD.match(stripped)
        if not field or gpu is None:
            continue
        if field.group(1) == "FW_ID":
            fw_id = field.group(2)
        elif fw_id is None:
            raise ValueError("GPU %d: FW_VERSION %r without an FW_ID" % (gpu, field.group(2)))
        else:
            out[gpu][fw_id], fw_id = field.group(2), None
    if not out:
        raise ValueError("no 'GPU: n' block in amd-smi firmware output")
    return out


def version_fields(version):
    """The fields of a dotted version as strings; ValueError for N/A, empty or non-version text."""
    text = str(version).strip() if version is not None else ""
    if not _VERSION.match(text):
        raise ValueError("not a firmware version: %r" % (text[:40],))
    return text.split(".")


def _field_pair(a, b):
    if a.isdigit() and b.isdigit():
        return int(a), int(b)
    return int(a, 16), int(b, 16)


def compare_fw(actual, minimum):
    """-1, 0 or 1: ``actual`` against ``minimum`` over the minimum's fields (a prefix); ValueError on a non-version."""
    left, right = version_fields(actual), version_fields(minimum)
    if len(left) < len(right):
        raise ValueError("version %r has fewer fields than the minimum %r" % (actual, minimum))
    for a, b in zip(left, right):  # noqa: B905 - a prefix comparison, lengths checked above
        x, y = _field_pair(a, b)
        if x != y:
            return -1 if x < y else 1
    return 0


def pmfw_version(pm):
    """``(program, "major.minor.debug")`` from amd-smi's PM ``program.major.minor.debug``."""
    fields = version_fields(pm)
    if len(fields) != 4 or not all(f.isdigit() for f in fields):
        raise ValueError("PM %r is not program.major.minor.debug in decimal" % (pm,))
    return int(fields[0]), ".".join(str(int(f)) for f in fields[1:])


def meets_minimum(fw_id, actual, minimum):
    """-1, 0 or 1 as compare_fw, with PM read as PMFW (program byte skipped, see module docstring)."""
    if fw_id == "PM":
        return compare_fw(pmfw_version(actual)[1], minimum)
    return compare_fw(actual, minimum)


def _minimum_of(spec):
    return spec.get("min") if isinstance(spec, dict) else spec


def decide_firmware(gpu, firmware, minimums, bus=None):
    """pass / fail / unknown for one GPU: ``firmware`` ``{fw_id: version}`` against ``minimums``.

    ``minimums`` maps fw_id to a version or to ``{min, source, ...}`` (roles/preflight/vars/
    gpu_firmware.yml). Below any minimum fails; a minimum whose firmware is not reported or
    not a version is unknown; no minimum for the class is unknown (nothing to judge).
    """
    who = gpu_label(gpu, bus)
    if not minimums:
        return result(UNKNOWN, "%s: no sourced firmware minimum for this GPU class" % who)
    firmware = firmware or {}
    below, unknown, met = [], [], []
    for fw_id in sorted(minimums):
        minimum = _minimum_of(minimums[fw_id])
        actual = firmware.get(fw_id)
        if actual is None:
            unknown.append("%s not reported (minimum %s)" % (fw_id, minimum))
            continue
        try:
            order = meets_minimum(fw_id, actual, minimum)
        except ValueError as error:
            unknown.append("%s %s: %s" % (fw_id, actual, error))
            continue
        shown = (
            "%s %s (PMFW %s)" % (fw_id, actual, pmfw_version(actual)[1]) if fw_id == "PM" else "%s %s" % (fw_id, actual)
        )
        (below if order < 0 else met).append("%s %s minimum %s" % (shown, "below" if order < 0 else "meets", minimum))
    details = dict(below=below, unknown=unknown, met=met)
    if below:
        return result(FAIL, "%s: firmware below minimum: %s" % (who, "; ".join(below)), **details)
    if unknown:
        return result(UNKNOWN, "%s: firmware not judged: %s" % (who, "; ".join(unknown)), **details)
    return result(PASS, "%s: firmware %s" % (who, "; ".join(met)), **details)
