# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RAS/ECC error counters of a GPU: the readings of each tool and the verdict.

Every parser gives blocks of counters, ``{block: {"ue": n, "ce": n}}``, where a count is
an ``int`` and anything else (N/A, an empty cell, EINVAL, a max-uint placeholder) is the
``str`` reason it is not one (health.common.reading). Sources:

* sysfs ``ras/<block>_err_count``: ``ue: N`` / ``ce: M`` (and ``de: K`` on newer kernels),
  ``Query currently inaccessible`` during a reset (amdgpu_ras.c amdgpu_ras_sysfs_read);
  a read that fails with EINVAL (``cat: ...: Invalid argument``) means unsupported.
* ``rocm-smi --showrasinfo``: a Block / Status / Correctable / Uncorrectable table per GPU.
* ``amd-smi metric``: ECC totals and ``XGMI_ERR`` (JSON ``ecc``/``xgmi_err`` or text lines).
* ``rdci dmon -e ..._UE,..._CE``: one row per GPU.
* ``amd-smi ras --cper``: CPER records, in (removed) gpu_health_cper.

``decide_ras``: an uncorrectable count above 0 fails; correctable counts above the
threshold (a variable) fail; with no real count at all the state is ``unknown``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import FAIL, PASS, UNKNOWN
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.common import (
    amd_smi_gpu_entries,
    gpu_label,
    is_count,
    reading,
    result,
    text_lines,
)

_SYSFS_LINE = re.compile(r"^\s*(ue|ce|de)\s*:\s*(\S*)\s*$")
_READ_ERROR = re.compile(
    r":\s*(Invalid argument|No such file or directory|Permission denied|"
    r"Input/output error|Operation not supported|No such device)\s*$"
)
_ERRNO = {
    "Invalid argument": "EINVAL",
    "No such file or directory": "ENOENT",
    "Permission denied": "EACCES",
    "Input/output error": "EIO",
    "Operation not supported": "EOPNOTSUPP",
    "No such device": "ENODEV",
}
_RAS_GPU = re.compile(r"^GPU\[(\d+)\]\s*:\s*RAS INFO")
_RAS_ROW = re.compile(r"^\s*([A-Z][A-Z0-9_]*)\s+(ENABLED|DISABLED)\b\s*(.*)$")
_METRIC_KEYS = {"TOTAL_CORRECTABLE_COUNT": "ce", "TOTAL_UNCORRECTABLE_COUNT": "ue", "TOTAL_DEFERRED_COUNT": "de"}


def sysfs_read_error(text):
    """``"EINVAL: ... (unsupported)"`` when ``text`` is a failed sysfs read (``cat: PATH: Invalid argument``)."""
    for line in text_lines(text):
        match = _READ_ERROR.search(line)
        if match:
            name = _ERRNO[match.group(1)]
            return "%s reading the counter (%s): unsupported, not a count" % (name, match.group(1))
    return None


def parse_sysfs_err_count(text):
    """``{"ue", "ce"[, "de"]}`` from one sysfs ``*_err_count`` file (or its failed read).

    A failed read, ``Query currently inaccessible``, empty or garbage text give the reason
    string for every counter; a counter line with a non-number gives its own reason.
    """
    error = sysfs_read_error(text)
    if error is None and "inaccessible" in " ".join(text_lines(text)).lower():
        error = "query currently inaccessible (GPU reset in progress)"
    found = {}
    for line in text_lines(text) if error is None else []:
        match = _SYSFS_LINE.match(line)
        if match:
            found[match.group(1)] = reading(match.group(2), match.group(1))
    if error is None and not ("ue" in found and "ce" in found):
        error = "not an err_count file (no 'ue:' and 'ce:' lines): %r" % (" ".join(text_lines(text))[:60],)
    if error is not None:
        return {"ue": error, "ce": error}
    return found


def parse_rocm_smi_rasinfo(text):
    """``{gpu: {block: {"status", "ce", "ue"}}}`` from ``rocm-smi --showrasinfo``.

    A block with no counts (empty cells) or a DISABLED block gets reason strings.
    Raises ValueError when no ``GPU[n]: RAS INFO`` table is found.
    """
    out, gpu = {}, None
    for line in text_lines(text):
        head = _RAS_GPU.match(line.strip())
        if head:
            gpu = int(head.group(1))
            out[gpu] = {}
            continue
        row = _RAS_ROW.match(line)
        if gpu is None or not row or row.group(1) == "Block":
            continue
        block, status, cells = row.group(1), row.group(2), row.group(3).split()
        if status == "DISABLED":
            why = "%s RAS is DISABLED" % block
            out[gpu][block] = {"status": status, "ce": why, "ue": why}
        else:
            cells = cells + [""] * (2 - len(cells))
            out[gpu][block] = {
                "status": status,
                "ce": reading(cells[0], block + " correctable"),
                "ue": reading(cells[1], block + " uncorrectable"),
            }
    if not out:
        raise ValueError("no 'GPU[n]: RAS INFO' table in rocm-smi --showrasinfo output")
    return out


def parse_amd_smi_metric_ecc_json(document):
    """``{gpu: {"ecc": {...}, "xgmi_err": value}}`` from a parsed ``amd-smi metric --json`` document."""
    out = {}
    for gpu, entry in amd_smi_gpu_entries(document):
        ecc = entry.get("ecc") if isinstance(entry.get("ecc"), dict) else {}
        counts = {}
        for key, short in (
            ("total_uncorrectable_count", "ue"),
            ("total_correctable_count", "ce"),
            ("total_deferred_count", "de"),
        ):
            counts[short] = reading(ecc.get(key), "ECC " + key)
        out[gpu] = {"ecc": counts, "xgmi_err": entry.get("xgmi_err")}
    return out


def parse_amd_smi_metric_text(text):
    """``{"ecc": {...}, "xgmi_err": value}`` from ``amd-smi metric -g N`` text (or a grep of it)."""
    ecc, xgmi = {}, None
    for line in text_lines(text):
        key, sep, value = line.strip().partition(":")
        if not sep:
            continue
        if key in _METRIC_KEYS:
            ecc[_METRIC_KEYS[key]] = reading(value, "ECC " + key)
        elif key == "XGMI_ERR":
            xgmi = value.strip()
    return {"ecc": ecc, "xgmi_err": xgmi}


def xgmi_error_state(gpu, value, bus=None):
    """pass / fail / unknown for amd-smi's XGMI error status; ``N/A`` is unsupported, never healthy."""
    who = gpu_label(gpu, bus)
    text = "" if value is None else str(value).strip()
    upper = text.upper()
    if upper in ("", "N/A", "NA"):
        return result(
            UNKNOWN,
            "%s: XGMI_ERR is %s: unsupported, not zero (use the XGMI_WAFL RAS counts)" % (who, text or "not reported"),
        )
    if "NO_ERR" in upper:
        return result(PASS, "%s: XGMI_ERR %s" % (who, text))
    if "ERR" in upper:
        return result(FAIL, "%s: XGMI_ERR %s" % (who, text))
    return result(UNKNOWN, "%s: XGMI_ERR value %r not understood" % (who, text[:40]))


def parse_rdci_dmon(text):
    """``{gpu: {field: count}}`` from ``rdci dmon`` (a ``GPU`` header row, then one row per GPU)."""
    header, out = None, {}
    for line in text_lines(text):
        cells = line.split()
        if cells and cells[0] == "GPU":
            header = cells[1:]
        elif header and cells and cells[0].isdigit() and len(cells) == len(header) + 1:
            out[int(cells[0])] = dict((name, reading(value, name)) for name, value in zip(header, cells[1:]))  # noqa: B905 - same length
    if not out:
        raise ValueError("no rdci dmon header and GPU rows found")
    return out


def rdci_blocks(fields):
    """``{block: {"ue", "ce"}}`` from one GPU's rdci fields (``ECC_XGMI_WAFL_UE`` -> block ``XGMI_WAFL``)."""
    blocks = {}
    for name, value in fields.items():
        stem, _sep, kind = name.rpartition("_")
        if name.startswith("ECC_") and kind in ("UE", "CE"):
            blocks.setdefault(stem[4:], {})[kind.lower()] = value
    return blocks


def decide_ras(gpu, blocks, ce_threshold, bus=None):
    """pass / fail / unknown from ``{block: {"ue", "ce"}}`` counters and the correctable threshold.

    Any uncorrectable count > 0 fails; the sum of correctable counts above ``ce_threshold``
    fails; otherwise, without a single real uncorrectable count, the state is ``unknown``
    naming every reason (an unsupported UE counter is not a zero).
    """
    who = gpu_label(gpu, bus)
    blocks = blocks or {}
    ue = dict((b, c.get("ue")) for b, c in blocks.items() if is_count(c.get("ue")))
    ce = dict((b, c.get("ce")) for b, c in blocks.items() if is_count(c.get("ce")))
    unsupported = sorted(
        set("%s: %s" % (b, v) for b, c in blocks.items() for k, v in c.items() if k in ("ue", "ce") and not is_count(v))
    )
    bad = sorted(b for b, n in ue.items() if n > 0)
    if bad:
        return result(
            FAIL,
            "%s: uncorrectable errors: %s" % (who, ", ".join("%s %d" % (b, ue[b]) for b in bad)),
            uncorrectable=sum(ue.values()),
            correctable=sum(ce.values()),
        )
    total = sum(ce.values())
    if ce and total > ce_threshold:
        worst = ", ".join("%s %d" % (b, n) for b, n in sorted(ce.items()) if n)
        return result(
            FAIL,
            "%s: %d correctable errors, above the threshold %d (%s)" % (who, total, ce_threshold, worst),
            uncorrectable=0,
            correctable=total,
        )
    if not ue:
        return result(UNKNOWN, "%s: no uncorrectable count reported (%s)" % (who, "; ".join(unsupported) or "none"))
    note = "; not counted: %s" % "; ".join(unsupported) if unsupported else ""
    return result(
        PASS,
        "%s: uncorrectable 0, correctable %d (threshold %d)%s" % (who, total, ce_threshold, note),
        uncorrectable=0,
        correctable=total,
    )
