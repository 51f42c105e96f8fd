"""What the report page's parts share: escaping, host anchors, status symbols and badges."""

from __future__ import annotations

from html import escape
from typing import Any

from rocm_fleet.drift.model import HostResult

# check status -> (symbol, words for the tooltip)
CHECK_ICONS = {"pass": ("\u2713", "pass"), "fail": ("\u2717", "fail"), "error": ("\u26a0", "error"),
               "waived": ("\u2298", "waived"), "skipped": ("\u2013", "not measurable"),
               "unknown": ("?", "unknown: could not be measured"), "warn": ("!", "warning")}  # fmt: skip


def e(value: Any) -> str:
    return escape(str(value), quote=True)


def anchor(index: int) -> str:
    # Host names may hold anything; anchors use the position in the page's host order instead.
    return f"host-{index}"


def badges(host: HostResult) -> str:
    status = host.status
    badge = f'<span class="badge {status}">{status}</span>'
    if host.warnings:
        count = len(host.warnings)
        badge += f' <span class="badge warnings">{count} warning{"s" if count != 1 else ""}</span>'
    return badge
