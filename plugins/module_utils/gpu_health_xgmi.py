# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""XGMI link health: ``amd-smi xgmi`` text, sysfs ``xgmi_num_links``, and the verdicts.

* ``amd-smi xgmi`` prints a LINK METRIC TABLE (bdf, bit_rate, max_bandwidth, link_type),
  a GPU LINK PORT STATUS table (``U`` up, ``D`` down, ``X`` disabled per port) and an XGMI
  LINK STATUS matrix. On a GPU without XGMI the rates are max-uint placeholders glued to
  the next column (``65535 Gb/s4294967295 Gb/sN/A``): a placeholder is no value, never
  4.29 Pb/s.
* sysfs ``/sys/class/drm/card*/device/xgmi_num_links``: one row per GPU of physical link
  counts to every GPU (MI250X: 8x8).

``decide_xgmi`` compares the ports that are up with the count the class expects (an
input); ``decide_xgmi_weights`` reads a WEIGHT of 0 between two GPUs of a real XGMI mesh
as unknown (amd-smi 26.x printed all-zero weights on MI355X), not as a topology.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_health_common import (
    FAIL,
    PASS,
    UNKNOWN,
    gpu_label,
    reading,
    result,
    text_lines,
)

_ROW = re.compile(r"^GPU(\d+)\s+((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s*(.*)$")
_RATE = re.compile(r"\s*(?:(\d+)\s*Gb/s|(N/A))")
_SECTIONS = {"LINK METRIC TABLE:": "metric", "GPU LINK PORT STATUS:": "ports", "XGMI LINK STATUS:": "status"}
_PORT_STATES = ("U", "D", "X")


def _rates(rest):
    """``(bit_rate, max_bandwidth, link_type)`` from the colliding cells after the BDF."""
    values = []
    for _ in range(2):
        match = _RATE.match(rest)
        if not match:
            break
        values.append(reading(match.group(1), "XGMI rate") if match.group(1) else "N/A (unsupported)")
        rest = rest[match.end() :]
    values += ["not reported"] * (2 - len(values))
    link_type = rest.split()[0] if rest.split() else None
    return values[0], values[1], link_type


def parse_amd_smi_xgmi(text):
    """``{gpu: {bdf, bit_rate, max_bandwidth, link_type, ports, status}}`` from ``amd-smi xgmi``.

    ``bit_rate``/``max_bandwidth`` are Gb/s ints or reason strings; ``ports`` a list of
    ``U``/``D``/``X``; ``status`` ``{peer_gpu: cell}``. Raises ValueError without a GPU row.
    """
    out, section, peers = {}, None, []
    for line in text_lines(text):
        stripped = line.strip()
        if stripped in _SECTIONS:
            section = _SECTIONS[stripped]
            continue
        if section == "status" and stripped.startswith("bdf"):
            peers = [int(p[3:]) for p in stripped.split()[1:] if p.startswith("GPU") and p[3:].isdigit()]
            continue
        row = _ROW.match(stripped)
        if not row or section is None:
            continue
        gpu = out.setdefault(int(row.group(1)), {"bdf": row.group(2).lower(), "ports": [], "status": {}})
        rest = row.group(3)
        if section == "metric":
            gpu["bit_rate"], gpu["max_bandwidth"], gpu["link_type"] = _rates(rest)
        elif section == "ports":
            gpu["ports"] = [cell for cell in rest.split() if cell in _PORT_STATES]
        else:
            gpu["status"] = dict(zip(peers, rest.split()))  # noqa: B905 - a row may be cut short
    if not out:
        raise ValueError("no 'GPUn BDF' rows in amd-smi xgmi output")
    return out


def xgmi_present(info):
    """True when a port is up or down or a peer link is not N/A/SELF; False when all disabled/unsupported."""
    if any(p in ("U", "D") for p in info.get("ports", [])):
        return True
    return any(cell not in ("N/A", "SELF", "X") for cell in info.get("status", {}).values())


def decide_xgmi(gpu, info, expected_links, bus=None):
    """pass / fail / unknown: the GPU's XGMI ports that are up against ``expected_links`` (the class's count).

    ``expected_links`` 0 (or None): no XGMI expected; pass when none is present.
    """
    who = gpu_label(gpu, bus or info.get("bdf"))
    ports = info.get("ports", [])
    up, down = ports.count("U"), ports.count("D")
    if not expected_links:
        if xgmi_present(info):
            return result(PASS, "%s: no XGMI expected; %d port(s) up, %d down" % (who, up, down), up=up)
        return result(PASS, "%s: no XGMI expected and none present (ports %s)" % (who, " ".join(ports) or "none"), up=0)
    if not ports:
        return result(UNKNOWN, "%s: no XGMI port status reported; %d link(s) expected" % (who, expected_links))
    if not xgmi_present(info):
        return result(
            FAIL, "%s: XGMI not present (ports %s), %d link(s) expected" % (who, " ".join(ports), expected_links), up=0
        )
    if up < expected_links:
        return result(
            FAIL,
            "%s: %d of %d expected XGMI link(s) up (%d down; ports %s)"
            % (who, up, expected_links, down, " ".join(ports)),
            up=up,
        )
    return result(PASS, "%s: %d XGMI link(s) up (%d expected)" % (who, up, expected_links), up=up)


def parse_xgmi_num_links(text):
    """The square matrix of link counts from ``cat /sys/class/drm/card*/device/xgmi_num_links``."""
    rows = [line.split() for line in text_lines(text) if line.strip()]
    if not rows or any(len(row) != len(rows) for row in rows):
        raise ValueError("xgmi_num_links is not a square matrix (%d row(s))" % len(rows))
    if not all(cell.isdigit() for row in rows for cell in row):
        raise ValueError("xgmi_num_links holds a value that is not a link count")
    return [[int(cell) for cell in row] for row in rows]


def decide_xgmi_peers(gpu, matrix, expected_peers, bus=None):
    """pass / fail: the number of GPUs with at least one direct XGMI link against ``expected_peers``."""
    who = gpu_label(gpu, bus)
    row = matrix[gpu]
    peers = [i for i, n in enumerate(row) if n and i != gpu]
    links = sum(n for i, n in enumerate(row) if i != gpu)
    state = FAIL if len(peers) < expected_peers else PASS
    reason = "%s: %d direct XGMI peer(s) of %d expected, %d link(s)" % (who, len(peers), expected_peers, links)
    return result(state, reason, peers=peers, links=links)


def decide_xgmi_weights(gpu, peers, bus=None):
    """unknown when an XGMI link to another GPU has WEIGHT 0 (``peers``: ``[{peer, link_type, weight}]``)."""
    who = gpu_label(gpu, bus)
    xgmi = [p for p in peers if str(p.get("link_type", "")).upper() == "XGMI" and p.get("peer") != gpu]
    if not xgmi:
        return result(UNKNOWN, "%s: no XGMI link to another GPU in the topology" % who)
    zero = sorted(p["peer"] for p in xgmi if p.get("weight") in (0, "0"))
    if zero:
        return result(
            UNKNOWN,
            "%s: XGMI weight 0 to GPU(s) %s: the tool reports no weight, not a topology"
            % (who, ", ".join(str(z) for z in zero)),
        )
    weights = sorted(set(str(p.get("weight")) for p in xgmi))
    return result(PASS, "%s: %d XGMI peer(s), weights %s" % (who, len(xgmi), ", ".join(weights)))
