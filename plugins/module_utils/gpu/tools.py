# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers shared by the rocm-smi, amd-smi and rocminfo collectors.

Collector protocol: ``collect_X(run) -> (state, report)`` where
``run(args) -> (rc, stdout, stderr)`` runs the tool and raises
``ToolTimeout`` when it hangs. ``state`` is SOURCE_OK or SOURCE_FAILED (common/status.py); a collector
never raises anything but ToolTimeout (see ``guarded``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import (
    AMD_VENDOR_ID,
    DEVICE_KEYS,
    clean_lines,
    new_report,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.runner import ToolTimeout
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import SOURCE_FAILED

MAX_WARNINGS = 20

# A device's bus:device.function where the source does not say the PCI domain: rocminfo's
# BDFID is KFD's 16-bit location_id (ROCm/rocminfo rocminfo.cc@026828a8: agent_info_t.bdf_id
# is a uint16_t), so MI300A APUs in domains 0-3 all read 01:00.0. The merge matches it
# against the domain-qualified addresses of the other sources; it is never reported.
DOMAINLESS_BDF = "pci_bdf"

_HEX_ID = re.compile(r"^(?:0x)?([0-9a-fA-F]{1,4})$")
_GFX = re.compile(r"^gfx([0-9]+)([0-9a-fA-F]?)$")
_BANNER = re.compile(r"^[=+|\-_ ]+$")
_UNSUPPORTED_OPTION = re.compile(r"unrecognized arguments|invalid choice|unknown option|no such option", re.I)


def guarded(tool, collect, run):
    """Run ``collect(run)``; any exception but ToolTimeout becomes a failed state with a warning."""
    try:
        return collect(run)
    except ToolTimeout:
        raise
    except Exception as error:  # the module must never end in a traceback
        report = new_report()
        report["warnings"].append("%s: collector error %s: %s" % (tool, type(error).__name__, error))
        return SOURCE_FAILED, report


def failed(report, tool, problem, line=None):
    """Mark ``report`` failed: the warning names the tool, its version when known and the offending line."""
    version = report.get("tool_version") or "version unknown"
    message = "%s (%s): %s" % (tool, version, problem)
    if line and ("at line:" not in problem):
        message += " (first offending line: %r)" % line[:160]
    report["devices"] = []
    report["topology"] = None
    add_warning(report, message)
    return SOURCE_FAILED, report


def add_warning(report, message):
    if message not in report["warnings"] and len(report["warnings"]) < MAX_WARNINGS:
        report["warnings"].append(message)


def first_line(*texts):
    """First non-blank line of the given outputs (stdout before stderr), for warnings."""
    for text in texts:
        for line in clean_lines(text):
            if line.strip():
                return line.strip()
    return None


def is_unsupported_option(rc, stdout, stderr):
    """True when the tool rejected its arguments (an older tool without the option)."""
    return rc != 0 and bool(_UNSUPPORTED_OPTION.search((stderr or "") + "\n" + (stdout or "")))


def is_banner(line):
    """Separator lines: '=====', '+----+', '|=====|' and the like."""
    return bool(line.strip()) and bool(_BANNER.match(line.strip()))


def strict_hex_id(value):
    """'0x74a1' or '74a1' -> '0x74a1'; names, 'N/A' and decimal junk -> None."""
    value = plain_value(value)
    if value is None or isinstance(value, (dict, list)):
        return None
    match = _HEX_ID.match(str(value).strip())
    if not match:
        return None
    return "0x%04x" % int(match.group(1), 16)


def board_id(value, vendor=None):
    """A device or subsystem ID as strict_hex_id reads it, but never the vendor ID (0x1002, or
    ``vendor`` as printed): where rocm_smi_lib finds no pci.ids file it prints the vendor ID for
    every name it looks up (get_dev_name_from_id -> get_backup_name(vendor_id), ROCm/rocm_smi_lib
    src/rocm_smi.cc@rocm-5.2.3 and @rocm-6.1.2), so 'Card model: 0x1002' (5.x) and
    'Subsystem ID: 0x1002' (6.1.x) say nothing of the board."""
    hex_id = strict_hex_id(value)
    if hex_id in (AMD_VENDOR_ID, strict_hex_id(vendor)):
        return None
    return hex_id


def normalize_gfx_target(value):
    """'gfx942' -> 'gfx942'; rocm-smi's 'gfx9010' (step printed in decimal) -> 'gfx90a'; junk -> None."""
    match = _GFX.match(str(value or "").strip().lower())
    if not match:
        return None
    digits, hex_step = match.groups()
    if hex_step:
        return "gfx%s%s" % (digits, hex_step)
    major_len = 2 if digits.startswith("1") and len(digits) >= 4 else 1
    if len(digits) < major_len + 2:
        return None
    major, minor, step = digits[:major_len], digits[major_len], int(digits[major_len + 1 :])
    if step > 15:
        return None
    return "gfx%s%s%x" % (major, minor, step)


def useful_text(value):
    """Strip a tool's string value; 'N/A', 'None', '' -> None."""
    value = plain_value(value)
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    if not text or text.lower() in ("n/a", "na", "none", "unknown", "not supported"):
        return None
    return text


def product_name(value):
    """A marketing name, or None for raw hex IDs, cut names and values that carry no name.

    amd-smi's default table prints a name longer than 22 characters as '...' and its last
    19 (ROCm/rocm-systems projects/amdsmi/amdsmi_cli/amdsmi_logger.py@d11f630e,
    print_default_output): the start of such a name is lost, so it names nothing.
    """
    text = useful_text(value)
    if text is None or strict_hex_id(text) is not None or text.startswith("..."):
        return None
    return text


def plain_value(value):
    """amd-smi JSON wraps measured values as {"value": N, "unit": "..."}: the value alone."""
    if isinstance(value, dict) and "value" in value:
        return value["value"]
    return value


def merge_into(target, source):
    """Fill the None fields of device ``target`` from ``source``."""
    for key in DEVICE_KEYS:
        if target.get(key) is None and source.get(key) is not None:
            target[key] = source[key]


def square_matrix(size, pairs, diagonal):
    """N x N list from {(i, j): value}; missing pairs None; returns None when nothing is known."""
    if not pairs or size <= 0:
        return None
    matrix = [[None] * size for _index in range(size)]
    for (row, column), value in pairs.items():
        if 0 <= row < size and 0 <= column < size:
            matrix[row][column] = value
    for position in range(size):
        matrix[position][position] = diagonal
    return matrix


def link_type_name(value):
    text = (useful_text(value) or "").upper()
    if text in ("SELF", "XGMI", "PCIE"):
        return text
    if text in ("0",):
        return "SELF"
    return "UNKNOWN"


def tool_int(value):
    """Integer from a tool's value ('15', 15, '0x1f', {"value": 15}); 'N/A' and junk -> None."""
    value = plain_value(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = useful_text(value)
    if text is None:
        return None
    try:
        return int(text, 0) if text.lower().startswith("0x") else int(text)
    except ValueError:
        return None


def domainless_bdf(pci_bus):
    """'0001:01:00.0' -> '01:00.0' (None stays None)."""
    return pci_bus.split(":", 1)[1] if pci_bus and pci_bus.count(":") == 2 else None
