"""The short per-host summary printed when a drift run ends."""

from __future__ import annotations

from rocm_fleet.drift.model import DriftReport, exit_code

MAX_LISTED_CHECKS = 6


def _host_line(name: str, width: int, report: DriftReport) -> str:
    host = report.hosts[name]
    status = host.status
    if status in ("unreachable", "error"):
        detail = host.error or "no reason given"
    else:
        failed = [check.id for check in host.failed_checks]
        shown = ", ".join(failed[:MAX_LISTED_CHECKS])
        if len(failed) > MAX_LISTED_CHECKS:
            shown += f", +{len(failed) - MAX_LISTED_CHECKS} more"
        waived = sum(1 for check in host.checks if check.status == "waived")
        detail = f"failed: {shown or '-'}; changes: {len(host.changes)}"
        if waived:
            detail += f"; waived: {waived}"
    # Keep each host on one line, whatever the error text holds.
    detail = " ".join(detail.split())
    return f"  {name:<{width}}  {status:<11}  {detail}"


def format_summary(report: DriftReport) -> str:
    names = sorted(report.hosts)
    width = max((len(name) for name in names), default=4)
    summary = report.summary()
    lines = ["Drift summary:"]
    lines.extend(_host_line(name, width, report) for name in names)
    lines.append(
        f"{summary['hosts']} hosts: {summary['compliant']} compliant, {summary['drift']} drift, "
        f"{summary['unreachable']} unreachable, {summary['error']} error; "
        f"{summary['failed_checks']} failed checks, {summary['changes']} changes"
    )
    if report.stale_waivers:
        lines.append(f"{len(report.stale_waivers)} stale waivers:")
        lines.extend(f"  {note}" for note in report.stale_waivers)
    lines.append(f"exit status {exit_code(report)}")
    return "\n".join(lines)
