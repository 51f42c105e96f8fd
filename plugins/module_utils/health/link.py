# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCIe link health of a GPU: what sysfs, ``lspci -vv`` and ``amd-smi metric`` say, and the verdict.

Readings:

* sysfs ``current_link_speed`` / ``max_link_speed``: ``"16.0 GT/s PCIe"`` (pci_speed_string,
  kernels since 4.17), ``"8 GT/s"`` / ``"2.5 GT/s"`` (older kernels), ``"Unknown"`` or
  ``"Unknown speed"``; ``current_link_width`` / ``max_link_width``: a lane count.
* ``lspci -vv`` ``LnkCap:`` (what the port can do) and ``LnkSta:`` (what it trained at);
  without root lspci prints ``Capabilities: <access denied>`` and no link lines.
* ``amd-smi metric --json`` ``pcie.width`` and ``pcie.speed`` (the current link only: the
  maximum comes from ``amd-smi static`` or sysfs).

The rule (``decide_link``), and why:

* **Width is the hard signal.** A link that trained at fewer lanes than the device's
  maximum (x8 of x16) fails. amdgpu keeps the negotiated width; lane count is what a bad
  riser, slot or seating changes.
* **Speed below the maximum fails only when the GPU is at its highest PCIe power level**
  (``at_max_performance=True``: the caller knows, e.g. ``pp_dpm_pcie`` marks its highest
  level active, or a load runs). Otherwise it is reported and not judged. amdgpu's PCIe
  DPM switches the link generation with the power state (amdgpu_pm.c, DOC pp_dpm_pcie:
  the levels are power levels of the power state) and ASPM saves power on an idle link,
  so an idle GPU legitimately reads 2.5 GT/s; judging it would flap with the load.
* The readings must be of the **slot link**. Radeon GPUs (Navi and later) sit behind an
  internal PCIe switch whose GPU-side link reads e.g. "16.0 GT/s PCIe x2" while the slot
  runs 32 GT/s x16 (shared capture rx9070xt lspci LnkCap/LnkSta); read the upstream port
  of that switch there.
* Missing or ``Unknown`` values give ``unknown`` with the reason, never a pass or a fail.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import FAIL, PASS, UNKNOWN
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.common import (
    amd_smi_gpu_entries,
    gpu_label,
    result,
    text_lines,
)

_SPEED = re.compile(r"^(\d+(?:\.\d+)?)\s*GT/s(?:\s+PCIe)?$", re.I)
_LSPCI_HEAD = re.compile(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s")
_LSPCI_LINK = re.compile(r"^\s*(LnkCap|LnkSta):\s*(.*)$")
_LSPCI_SPEED = re.compile(r"Speed\s+(\d+(?:\.\d+)?GT/s|unknown)", re.I)
_LSPCI_WIDTH = re.compile(r"Width\s+x(\d+)")


def parse_sysfs_speed(text):
    """GT/s as a float from a sysfs ``*_link_speed`` file; ``None`` for Unknown, empty or garbage."""
    if text is None:
        return None
    match = _SPEED.match(str(text).strip())
    return float(match.group(1)) if match else None


def parse_sysfs_width(text):
    """Lanes as an int from a sysfs ``*_link_width`` file; ``None`` for 0, empty or garbage."""
    text = "" if text is None else str(text).strip()
    if not text.isdigit() or int(text) == 0:
        return None
    return int(text)


def link_from_sysfs(current_speed, current_width, max_speed, max_width):
    """``{current_speed, current_width, max_speed, max_width}`` from the four sysfs files' text."""
    return {
        "current_speed": parse_sysfs_speed(current_speed),
        "current_width": parse_sysfs_width(current_width),
        "max_speed": parse_sysfs_speed(max_speed),
        "max_width": parse_sysfs_width(max_width),
    }


def _lspci_values(rest):
    speed = _LSPCI_SPEED.search(rest)
    width = _LSPCI_WIDTH.search(rest)
    value = None
    if speed and speed.group(1).lower() != "unknown":
        value = float(speed.group(1)[:-4])
    return value, int(width.group(1)) if width else None


def parse_lspci_links(text, bus=None):
    """``{bus: link}`` from ``lspci -vv`` text; a stanza without link lines gives ``{"unknown": why}``.

    ``bus`` names the device when the text has no stanza header (``lspci -s BUS -vv | grep``).
    A link is ``{current_speed, current_width, max_speed, max_width}`` (LnkSta, LnkCap).
    """
    links, denied, current = {}, {}, bus
    for line in text_lines(text):
        head = _LSPCI_HEAD.match(line)
        if head:
            current = head.group(1)
            continue
        if "<access denied>" in line:
            denied[current] = "lspci ran without root: Capabilities <access denied>, no LnkCap/LnkSta"
            continue
        match = _LSPCI_LINK.match(line)
        if not match:
            continue
        speed, width = _lspci_values(match.group(2))
        entry = links.setdefault(current, {})
        prefix = "max" if match.group(1) == "LnkCap" else "current"
        entry[prefix + "_speed"], entry[prefix + "_width"] = speed, width
    out = {}
    for key in set(links) | set(denied):
        out[key] = links[key] if key in links else {"unknown": denied[key]}
    return out


def _gt_per_s(speed):
    if isinstance(speed, dict):
        value, unit = speed.get("value"), str(speed.get("unit", "GT/s"))
    else:
        value, unit = speed, "GT/s"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) / 1000 if unit.upper() == "MT/S" else float(value)


def parse_amd_smi_metric_pcie(document):
    """``{gpu: {current_speed, current_width}}`` from a parsed ``amd-smi metric --json`` document.

    Accepts the bare list (amd-smi before 26) and ``{"gpu_data": [...]}`` (26 and later);
    ``N/A`` values become ``None``. Raises ValueError when ``document`` has neither shape.
    """
    out = {}
    for gpu, entry in amd_smi_gpu_entries(document):
        pcie = entry.get("pcie") if isinstance(entry.get("pcie"), dict) else {}
        width = pcie.get("width")
        valid_width = isinstance(width, int) and not isinstance(width, bool) and width > 0
        out[gpu] = {
            "current_speed": _gt_per_s(pcie.get("speed")),
            "current_width": width if valid_width else None,
        }
    return out


def _speed_text(speed):
    return "%s GT/s" % (("%.1f" % speed) if speed is not None else "unknown")


def _judge(cur_w, max_w, cur_s, max_s, at_max_performance):
    """``(state, text)`` for known widths: the rule of the module docstring."""
    speeds = "%s of %s" % (_speed_text(cur_s), _speed_text(max_s))
    if cur_w < max_w:
        return FAIL, "PCIe link trained at x%d of x%d (%s)" % (cur_w, max_w, speeds)
    if cur_w > max_w:
        return UNKNOWN, "PCIe width x%d above its maximum x%d: inconsistent readings" % (cur_w, max_w)
    width = "x%d of x%d" % (cur_w, max_w)
    if cur_s is None or max_s is None:
        if at_max_performance:
            return UNKNOWN, "PCIe width %s, speed not reported (%s) at max performance" % (width, speeds)
        return PASS, "PCIe width %s; speed not reported, not judged" % width
    if cur_s < max_s:
        below = "%s below its maximum %s" % (_speed_text(cur_s), _speed_text(max_s))
        if at_max_performance:
            return FAIL, "PCIe link at %s at max performance (width %s)" % (below, width)
        return PASS, "PCIe width %s; speed %s not judged (power saving downshifts an idle link)" % (width, below)
    return PASS, "PCIe link %s at %s" % (width, _speed_text(cur_s))


def decide_link(gpu, link, bus=None, at_max_performance=None):
    """pass / fail / unknown for one GPU's slot link ``{current_speed, current_width, max_speed, max_width}``.

    Width below the maximum fails; speed below the maximum fails only with
    ``at_max_performance=True`` (see the module docstring for why).
    """
    who = gpu_label(gpu, bus)
    link = link or {}
    if "unknown" in link:
        return result(UNKNOWN, "%s: PCIe link unknown: %s" % (who, link["unknown"]))
    cur_w, max_w = link.get("current_width"), link.get("max_width")
    cur_s, max_s = link.get("current_speed"), link.get("max_speed")
    values = dict(current_width=cur_w, max_width=max_w, current_speed=cur_s, max_speed=max_s)
    if cur_w is None or max_w is None:
        missing = "current" if cur_w is None else "maximum"
        return result(UNKNOWN, "%s: PCIe %s link width not reported" % (who, missing), **values)
    state, text = _judge(cur_w, max_w, cur_s, max_s, at_max_performance)
    return result(state, "%s: %s" % (who, text), **values)
