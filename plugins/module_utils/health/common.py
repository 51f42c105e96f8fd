# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared pieces of the GPU health checks (issue 11 section 3): results and placeholders.

Every check returns ``result(state, reason, **details)``: a dict with ``state`` one of
``pass``, ``fail`` or ``unknown`` and a ``reason`` that names the GPU (by PCI bus where
known) and the values it judged. Unsupported is neither healthy nor failed: ``N/A``,
EINVAL from a counter, max-uint placeholders and an empty cell give ``unknown`` with the
reason, never a zero.

A reading is kept as an ``int`` when the tool gave a real count and as a ``str`` (the
reason it is not a count) otherwise; ``reading()`` makes one from a raw value.

Stdlib only (runs on managed hosts too); Python 2.7 compatible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import HEALTH_STATES
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import tool_int

# 2**16-1, 2**32-1 and 2**64-1: what amd-smi and the SMI libraries print for "no value".
MAX_UINTS = (0xFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF)
_NA = ("n/a", "na", "not supported", "unsupported", "unknown", "none", "")
_INT = re.compile(r"^[+]?\d+$")
_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
# int and, on Python 2, long (2**64 is a long there).
_INTS = (int, type(2**64))


def result(state, reason, **details):
    """A check result: ``{"state", "reason", ...details}``; ``state`` must be one of HEALTH_STATES."""
    if state not in HEALTH_STATES:
        raise ValueError("not a health state: %r" % (state,))
    out = {"state": state, "reason": reason}
    out.update(details)
    return out


def gpu_label(gpu, bus=None):
    """``GPU 0 (0000:0b:00.0)``, ``GPU 0``, or the bus alone: how a reason names a GPU."""
    if gpu is None and bus:
        return "GPU %s" % (bus,)
    if bus:
        return "GPU %s (%s)" % (gpu, bus)
    return "GPU %s" % (gpu,)


def is_max_uint(value):
    """True for the max-uint placeholders (65535, 4294967295, 18446744073709551615)."""
    return isinstance(value, _INTS) and not isinstance(value, bool) and value in MAX_UINTS


def reading(value, what="value"):
    """An ``int`` for a real count, otherwise a ``str`` saying why it is not one.

    ``None``, ``N/A``, an empty cell, a negative number, a max-uint placeholder and any
    text that is not a number give the reason string (``"N/A"``, ``"max-uint placeholder
    4294967295"``...). ``what`` names the value in the reason.
    """
    if isinstance(value, bool):
        return "%s is a boolean (%r), not a count" % (what, value)
    if isinstance(value, dict) and "value" in value:
        value = value["value"]
    if isinstance(value, _INTS):
        number = value
    elif value is None:
        return "%s not reported" % (what,)
    else:
        text = str(value).strip()
        if text.lower() in _NA:
            return "%s is %s (unsupported)" % (what, text or "empty")
        if _INT.match(text):
            number = int(text)
        elif _HEX.match(text):
            number = int(text, 16)
        else:
            return "%s is not a number: %r" % (what, text[:40])
    if number < 0:
        return "%s is negative (%d)" % (what, number)
    if is_max_uint(number):
        return "%s is a max-uint placeholder (%d)" % (what, number)
    return number


def is_count(value):
    """True when ``value`` is a real count (an int, not a reason string)."""
    return isinstance(value, _INTS) and not isinstance(value, bool)


def text_lines(text):
    """The lines of ``text``, NBSP as a space, trailing whitespace removed; ``[]`` for ``None``."""
    if text is None:
        return []
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not hasattr(text, "splitlines"):
        text = str(text)
    return [line.rstrip() for line in text.replace("\u00a0", " ").splitlines()]


def amd_smi_gpu_entries(document):
    """``[(gpu number, entry)]`` of a parsed ``amd-smi metric --json`` document, found as gpu_facts finds them
    (bare list or "gpu_data"; CPU, core and NIC entries passed over). Raises ValueError when it holds no GPU
    entry but entries of no known kind, or is no amd-smi document at all."""
    # Imported here: a nightly check reads sysfs only, and amd-smi's parsers cost every host their import.
    from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi.json_output import gpu_entries_of

    entries, unknown = gpu_entries_of(document)
    if unknown and not entries:
        raise ValueError("amd-smi metric JSON: %d entries without a 'gpu' number and no GPU entry" % unknown)
    return [(tool_int(entry["gpu"]), entry) for entry in entries]
