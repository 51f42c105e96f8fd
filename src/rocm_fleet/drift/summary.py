"""The short per-host summary printed when a drift run ends.

Hosts most in need of a look first (``DriftReport.host_order``); past
FOLD_COMPLIANT compliant hosts with nothing to tell, they are one line of names.
"""

from __future__ import annotations

from rocm_fleet.drift.model import DriftReport, exit_code

MAX_LISTED_CHECKS = 6
FOLD_COMPLIANT = 10
MAX_FOLDED_NAMES = 8


def _ids(checks: list) -> str:
    ids = [check.id for check in checks]
    shown = ", ".join(ids[:MAX_LISTED_CHECKS])
    if len(ids) > MAX_LISTED_CHECKS:
        shown += f", +{len(ids) - MAX_LISTED_CHECKS} more"
    return shown


def _host_line(name: str, width: int, report: DriftReport) -> str:
    host = report.hosts[name]
    status = host.status
    if status in ("unreachable", "error"):
        detail = host.error or "no reason given"
    else:
        detail = f"failed: {_ids(host.failed_checks) or '-'}; changes: {len(host.changes)}"
        # Never left out when there are any: an unknown keeps the host from compliant, a warning is a finding.
        if host.unknown_checks:
            detail += f"; unknown: {_ids(host.unknown_checks)}"
        if host.warnings:
            detail += f"; warnings: {_ids(host.warnings)}"
        waived = sum(1 for check in host.checks if check.status == "waived")
        if waived:
            detail += f"; waived: {waived}"
    # Keep each host on one line, whatever the error text holds.
    detail = " ".join(detail.split())
    return f"  {name:<{width}}  {status:<11}  {detail}"


def _folded(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_FOLDED_NAMES])
    if len(names) > MAX_FOLDED_NAMES:
        shown += f", +{len(names) - MAX_FOLDED_NAMES} more"
    return f"  {len(names)} compliant hosts, every check passed, waived or not measurable: {shown}"


def format_summary(report: DriftReport) -> str:
    names = report.host_order()
    clean = [name for name in names if report.hosts[name].clean]
    listed = [name for name in names if name not in clean] if len(clean) > FOLD_COMPLIANT else names
    width = max((len(name) for name in listed), default=4)
    summary = report.summary()
    lines = ["Drift summary:"]
    lines.extend(_host_line(name, width, report) for name in listed)
    if len(listed) < len(names):
        lines.append(_folded(clean))
    lines.append(
        f"{summary['hosts']} hosts: {summary['compliant']} compliant, {summary['unverified']} unverified, "
        f"{summary['drift']} drift, {summary['unreachable']} unreachable, {summary['error']} error; "
        f"{summary['failed_checks']} failed checks, {summary['unknown_checks']} unknown checks, "
        f"{summary['warnings']} warnings, {summary['changes']} changes"
    )
    if report.stale_waivers:
        lines.append(f"{len(report.stale_waivers)} stale waivers:")
        lines.extend(f"  {note}" for note in report.stale_waivers)
    lines.append(f"exit status {exit_code(report)}")
    return "\n".join(lines)
