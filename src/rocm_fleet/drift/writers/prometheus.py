"""Prometheus text form of a drift report, for node_exporter's textfile collector.

Written atomically (temp file + fsync + rename in the target directory), so the
collector never scrapes half a file. For a host that could not be reached, or
whose checks could not run, the counts are unknown: those series are left out
rather than reported as 0, and the host still appears in ``compliant``,
``unreachable``, ``error`` and ``unverified``.

A host whose checks include one that could not be measured is ``unverified``:
``rocm_fleet_host_compliant`` is 0 for it, ``rocm_fleet_host_unverified`` 1,
and ``rocm_fleet_host_unknown_checks`` counts those checks (on a drifted host
too), so a dashboard can alert on it apart from drift. Warnings never change
``compliant``; ``rocm_fleet_host_warnings`` counts them.
``rocm_fleet_drift_checks`` counts the checks of the reached hosts by status.
``rocm_fleet_host_check_failed`` names each failed check of a host (``host`` and
``check`` labels, value 1), for an alert on one check ID; a check that passes has
no series, so the series is absent (stale) once the check passes again. Every
other sample has at most one label.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from rocm_fleet.drift.model import CHECK_STATUSES, HOST_STATUSES, DriftReport
from rocm_fleet.drift.writers.atomic import atomic_write_text

TEXTFILE_NAME = "rocm_fleet_drift.prom"

# name -> help text; the order here is the order in the file.
HOST_METRICS = {
    "rocm_fleet_host_compliant": "1 when the host matches its inventory and every compliance check was measured.",
    "rocm_fleet_host_unreachable": "1 when the drift run could not reach the host.",
    "rocm_fleet_host_error": "1 when the host was reached but its checks could not run.",
    "rocm_fleet_host_unverified": "1 when nothing differs on the host but a check could not be measured.",
    "rocm_fleet_host_drift_items": "Failed checks plus pending changes on the host (absent when unknown).",
    "rocm_fleet_host_failed_checks": "Compliance checks that failed or errored on the host (absent when unknown).",
    "rocm_fleet_host_changes": "Items site.yml --check would change on the host (absent when unknown).",
    "rocm_fleet_host_unknown_checks": "Compliance checks that could not be measured on the host (absent when unknown).",
    "rocm_fleet_host_warnings": "Compliance checks that warn on the host, not waived (absent when unknown).",
}


def escape_label_value(value: str) -> str:
    """Escape per the text exposition format: backslash, double quote, newline."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _timestamp(iso: str) -> float | None:
    try:
        moment = datetime.datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()


def _format_value(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _family(lines: list[str], name: str, help_text: str, samples: list[tuple[str, float]]) -> None:
    lines.append(f"# HELP {name} {help_text}")
    lines.append(f"# TYPE {name} gauge")
    lines.extend(f"{name}{labels} {_format_value(value)}" for labels, value in samples)


def _host_samples(report: DriftReport) -> dict[str, list[tuple[str, float]]]:
    samples: dict[str, list[tuple[str, float]]] = {name: [] for name in HOST_METRICS}
    for name in sorted(report.hosts):
        host = report.hosts[name]
        labels = '{host="%s"}' % escape_label_value(name)
        status = host.status
        samples["rocm_fleet_host_compliant"].append((labels, status == "compliant"))
        samples["rocm_fleet_host_unreachable"].append((labels, status == "unreachable"))
        samples["rocm_fleet_host_error"].append((labels, status == "error"))
        samples["rocm_fleet_host_unverified"].append((labels, status == "unverified"))
        if status in ("unreachable", "error"):
            continue
        failed = len(host.failed_checks)
        samples["rocm_fleet_host_drift_items"].append((labels, failed + len(host.changes)))
        samples["rocm_fleet_host_failed_checks"].append((labels, failed))
        samples["rocm_fleet_host_changes"].append((labels, len(host.changes)))
        samples["rocm_fleet_host_unknown_checks"].append((labels, len(host.unknown_checks)))
        samples["rocm_fleet_host_warnings"].append((labels, len(host.warnings)))
    return samples


def _failed_check_samples(report: DriftReport) -> list[tuple[str, float]]:
    samples = []
    for name in sorted(report.hosts):
        host = report.hosts[name]
        if host.status in ("unreachable", "error"):
            continue
        for check_id in sorted({check.id for check in host.failed_checks}):
            samples.append(('{host="%s",check="%s"}' % (escape_label_value(name), escape_label_value(check_id)), 1))
    return samples


def render_prometheus(report: DriftReport) -> str:
    lines: list[str] = []
    for name, samples in _host_samples(report).items():
        _family(lines, name, HOST_METRICS[name], samples)
    _family(
        lines,
        "rocm_fleet_host_check_failed",
        "1 for each compliance check that failed or errored on the host, by check ID (absent when it passes).",
        _failed_check_samples(report),
    )
    summary = report.summary()
    _family(
        lines,
        "rocm_fleet_drift_hosts",
        "Hosts in the last drift run by status.",
        [('{status="%s"}' % status, summary[status]) for status in HOST_STATUSES],
    )
    reached = [host for host in report.hosts.values() if host.status not in ("unreachable", "error")]
    _family(
        lines,
        "rocm_fleet_drift_checks",
        "Compliance checks of the reached hosts in the last drift run by status.",
        [('{status="%s"}' % status, sum(1 for host in reached for check in host.checks if check.status == status))
         for status in CHECK_STATUSES],
    )
    _family(
        lines,
        "rocm_fleet_drift_stale_waivers",
        "Waivers in the last drift run whose checks neither failed nor were unknown nor warned.",
        [("", len(report.stale_waivers))],
    )
    started, finished = _timestamp(report.run.started), _timestamp(report.run.finished)
    if finished is not None:
        _family(
            lines,
            "rocm_fleet_drift_last_run_timestamp_seconds",
            "When the last drift run finished, in seconds since the Unix epoch.",
            [("", finished)],
        )
    if started is not None and finished is not None:
        _family(
            lines,
            "rocm_fleet_drift_last_run_duration_seconds",
            "How long the last drift run took.",
            [("", max(finished - started, 0.0))],
        )
    return "\n".join(lines) + "\n"


def write_prometheus(report: DriftReport, path: str | Path) -> Path:
    return atomic_write_text(path, render_prometheus(report), mode=0o644)
