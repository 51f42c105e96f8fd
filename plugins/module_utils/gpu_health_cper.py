# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPER records from ``amd-smi ras --cper`` (ROCm 7.0 and later) and the per-GPU verdict.

The command prints a ``WARNING:`` line (no space after the colon) unless ``--folder`` is
given, then a ``timestamp  gpu_id  severity`` table, one row per record. A FATAL or
uncorrected record means the GPU has had a hardware error that was not corrected.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_health_common import (
    FAIL,
    PASS,
    gpu_label,
    result,
    text_lines,
)

_CPER_ROW = re.compile(r"^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d)\s+(\d+)\s+([A-Z_]+)\s*$")


def parse_amd_smi_cper(text):
    """``[{timestamp, gpu, severity}]`` from ``amd-smi ras --cper``; ``WARNING:`` lines are skipped."""
    entries, header = [], False
    for line in text_lines(text):
        if line.split()[:3] == ["timestamp", "gpu_id", "severity"]:
            header = True
            continue
        row = _CPER_ROW.match(line.strip())
        if row:
            entries.append({"timestamp": row.group(1), "gpu": int(row.group(2)), "severity": row.group(3)})
    if not header and not entries:
        raise ValueError("no amd-smi ras --cper table (timestamp gpu_id severity) found")
    return entries


def decide_cper(gpu, entries, bus=None):
    """fail when one of ``gpu``'s CPER records is FATAL or uncorrected; pass otherwise."""
    who = gpu_label(gpu, bus)
    mine = [e for e in entries if e.get("gpu") == gpu]
    bad = [e for e in mine if e["severity"] == "FATAL" or "UNCORRECT" in e["severity"]]
    if bad:
        times = ", ".join("%s %s" % (e["timestamp"], e["severity"]) for e in bad)
        return result(
            FAIL, "%s: %d fatal hardware error record(s) in CPER: %s" % (who, len(bad), times), records=len(bad)
        )
    return result(PASS, "%s: %d CPER record(s), none fatal" % (who, len(mine)), records=len(mine))
