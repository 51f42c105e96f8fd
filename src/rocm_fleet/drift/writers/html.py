"""HTML form of a drift report: one self-contained page, no scripts, no external resources.

It leads with what is wrong and stays readable at a thousand hosts. Top to
bottom: summary counts; hosts not reached or whose checks could not run, and
stale waivers; the checks with findings, each with its counts and the hosts
that fail (or could not measure, warn, are waived on) it (html_fleet.py); a
hosts-by-checks table of the hosts with a finding, over the checks that have
one; one section per such host with its failed, errored, unknown, warning and
waived checks, each pending change with its diff, and its GPU link matrix
where a link check has a finding; then every compliant host folded into one line. Hosts go in ``host_order``:
unreachable, error, drift, unverified, then compliant with warnings.
An "unverified" host (a check could not be measured) has a slate-blue badge,
never the green one; a host with warnings has an amber "N warnings" badge
beside its status. Every text from a report goes through ``html.escape``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rocm_fleet.drift.model import SCHEMA_VERSION, CheckResult, DriftReport, HostResult
from rocm_fleet.drift.writers.atomic import atomic_write_text
from rocm_fleet.drift.writers.html_fleet import by_check_table, compliant_lines
from rocm_fleet.drift.writers.html_matrix import render_link_matrix
from rocm_fleet.drift.writers.html_style import STYLESHEET
from rocm_fleet.drift.writers.html_text import CHECK_ICONS, anchor, badges, e

# The checks about GPU links (topology, xGMI link state): a host with a finding in one gets its link matrix drawn.
LINK_CHECKS = ("ROCM-TOPO-", "ROCM-HEALTH-002")
SUMMARY_CARDS = (("hosts", "hosts"), ("compliant", "compliant"), ("unverified", "unverified"), ("drift", "drift"),
                 ("unreachable", "unreachable"), ("error", "error"), ("failed_checks", "failed checks"),
                 ("unknown_checks", "unknown checks"), ("warnings", "warnings"), ("changes", "changes"))  # fmt: skip
# A host's check counts beside "N of M pass", in this order.
OTHER_COUNTS = {"fail": "fail", "error": "error", "unknown": "unknown", "warn": "warn", "waived": "waived",
                "skipped": "not measurable"}  # fmt: skip


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def _diff_html(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        css = ""
        if line.startswith(("+++", "---")):
            css = "hunk"
        elif line.startswith("+"):
            css = "add"
        elif line.startswith("-"):
            css = "del"
        elif line.startswith("@@"):
            css = "hunk"
        lines.append(f'<span class="{css}">{e(line)}</span>' if css else e(line) + "\n")
    return "<pre>" + "".join(lines) + "</pre>"


def _header(report: DriftReport) -> str:
    run = report.run
    limit = f" &middot; limit <code>{e(run.limit)}</code>" if run.limit else ""
    cards = "".join(
        f'<div class="card {key}"><b>{report.summary()[key]}</b><span>{e(label)}</span></div>'
        for key, label in SUMMARY_CARDS
    )
    return (
        "<header><h1>rocm-fleet drift report</h1>"
        f'<p class="run">inventory <code>{e(run.inventory)}</code>{limit} &middot; started {e(run.started)} '
        f"&middot; finished {e(run.finished)} &middot; rocm-fleet {e(run.rocm_fleet_version)}<br>"
        f"<code>{e(run.command)}</code></p>"
        f'<div class="cards">{cards}</div></header>'
    )


def _notices(report: DriftReport, names: list[str]) -> str:
    parts = []
    for status, heading in (("unreachable", "Unreachable hosts"), ("error", "Hosts whose checks could not run")):
        hosts = [(index, name) for index, name in enumerate(names) if report.hosts[name].status == status]
        if hosts:
            items = "".join(
                f'<li><a href="#{anchor(index)}">{e(name)}</a>: {e(report.hosts[name].error or "no reason given")}</li>'
                for index, name in hosts
            )
            parts.append(f'<div class="notice"><h3>{heading} ({len(hosts)})</h3><ul>{items}</ul></div>')
    if report.stale_waivers:
        items = "".join(f"<li>{e(note)}</li>" for note in report.stale_waivers)
        parts.append(f'<div class="notice"><h3>Stale waivers</h3><ul>{items}</ul></div>')
    return "".join(parts)


def _check_cell(check: CheckResult | None) -> str:
    if check is None:
        return '<td class="cell-none" title="not checked">&middot;</td>'
    symbol, words = CHECK_ICONS[check.status]
    tooltip = f"{check.id} {words}" + (f": {check.message}" if check.message else "")
    return f'<td class="cell-{check.status}" title="{e(tooltip)}">{symbol}</td>'


def _grid(report: DriftReport, names: list[str], view: dict[str, dict]) -> str:
    """The hosts with a finding (``names`` in host order, clean ones skipped) over the checks that have one."""
    check_ids = sorted(check_id for check_id, entry in view.items() if entry["hosts"])
    shown = [(index, name) for index, name in enumerate(names) if not report.hosts[name].clean]
    if not shown:
        return ""
    head = "".join(f'<th class="check" title="{e(view[cid]["title"])}">{e(cid)}</th>' for cid in check_ids)
    rows = []
    for index, name in shown:
        host = report.hosts[name]
        status = host.status
        first = (
            f'<td class="host"><a href="#{anchor(index)}">{e(name)}</a></td>'
            f"<td>{badges(host)}</td>"
        )
        if not host.reached or host.error:
            span = len(check_ids) + 1
            reason = e(host.error or status)
            rows.append(f'<tr>{first}<td class="cell-unreachable" colspan="{span}">{reason}</td></tr>')
            continue
        by_id = {check.id: check for check in host.checks}
        cells = "".join(_check_cell(by_id.get(cid)) for cid in check_ids)
        changes = len(host.changes)
        change_css = "cell-fail" if changes else "cell-pass"
        rows.append(f'<tr>{first}{cells}<td class="{change_css}">{changes}</td></tr>')
    return (
        f'<section class="panel" id="hosts-with-findings"><h2>Hosts with findings ({len(shown)})</h2>'
        '<p class="muted">Only the checks with a finding on some host; every other check passed or did not apply.</p>'
        '<div class="scroll"><table class="grid">'
        f'<thead><tr><th class="host">host</th><th>status</th>{head}<th class="check">changes</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def _check_details(check: CheckResult) -> str:
    symbol, words = CHECK_ICONS[check.status]
    waiver = ""
    if check.waiver:
        waiver = (
            f"<dt>waiver</dt><dd>{e(check.waiver.reason)} (expires {e(check.waiver.expires)}, "
            f"hosts {e(check.waiver.hosts)})</dd>"
        )
    if check.repair:  # no task of site.yml repairs it: say what does
        waiver += f"<dt>repaired by</dt><dd>{e(check.repair)}</dd>"
    # Findings start open so the page reads (and prints) without clicking; waivers stay folded.
    state = "" if check.status == "waived" else " open"
    return (
        f'<details{state}><summary><span class="cell-{check.status}">&nbsp;{symbol}&nbsp;</span> '
        f'<span class="id">{e(check.id)}</span> {e(check.title)} <span class="muted">({words})</span></summary>'
        f'<div><dl class="values"><dt>message</dt><dd>{e(check.message or "-")}</dd>{waiver}</dl>'
        f"<h3>expected</h3><pre>{e(_json(check.expected))}</pre>"
        f"<h3>actual</h3><pre>{e(_json(check.actual))}</pre></div></details>"
    )


def _host_items(host: HostResult) -> str:
    if not host.reached:
        return f'<p class="muted">Not reached: {e(host.error or "no reason given")}. Nothing is known about it.</p>'
    parts = []
    if host.error:
        parts.append(f'<p class="cell-error">The checks could not run: {e(host.error)}</p>')
    findings = [check for check in host.checks if check.status not in ("pass", "skipped")]
    passed = sum(1 for check in host.checks if check.status == "pass")
    counts = {status: sum(1 for check in host.checks if check.status == status) for status in OTHER_COUNTS}
    counted = "".join(f", {count} {OTHER_COUNTS[status]}" for status, count in counts.items() if count)
    parts.append(f"<h3>Checks: {passed} of {len(host.checks)} pass{counted}</h3>")
    parts.extend(_check_details(check) for check in findings)
    parts.append(f"<h3>Changes site.yml --check would make: {len(host.changes)}</h3>")
    for change in host.changes:
        diff = _diff_html(change.diff) if change.diff else '<p class="muted">The module reported no diff.</p>'
        parts.append(
            f'<details open><summary><span class="id">{e(change.action)}</span> {e(change.label)}</summary>'
            f"<div>{diff}</div></details>"
        )
    return "".join(parts)


def _link_finding(host: HostResult) -> bool:
    return any(check.id.startswith(LINK_CHECKS) and check.status not in ("pass", "skipped") for check in host.checks)


def _host_gpu(name: str, host: HostResult) -> str:
    gpu = host.gpu
    if gpu is None:
        return ""
    products = ", ".join(sorted(set(gpu.products))) or "unknown product"
    if not gpu.link_type:
        picture = '<p class="muted">No link matrix reported.</p>'
    elif _link_finding(host):
        picture = render_link_matrix(name, gpu)
    else:  # an 8-GPU picture is 15 KB: a hundred drifted hosts would be mostly pictures of healthy links
        picture = '<p class="muted">Links as declared (no link check has a finding); drift.json has the matrix.</p>'

    return f'<div class="gpu"><h3>GPUs</h3><p>{gpu.count} &times; {e(products)}</p>{picture}</div>'


def _host_section(index: int, name: str, host: HostResult) -> str:
    return (
        f'<section class="panel host" id="{anchor(index)}"><h2>{e(name)} {badges(host)}</h2>'
        f'<div class="host-body"><div class="host-items">{_host_items(host)}</div>{_host_gpu(name, host)}</div>'
        "</section>"
    )


def render_html(report: DriftReport) -> str:
    names = report.host_order()
    view = report.by_check()
    unverified = f", {report.summary()['unverified']} unverified" if report.summary()["unverified"] else ""
    body = (
        _header(report)
        + _notices(report, names)
        + by_check_table(report, names, view)
        + _grid(report, names, view)
        + "".join(_host_section(index, name, report.hosts[name])
                  for index, name in enumerate(names) if not report.hosts[name].clean)
        + compliant_lines(report, names)
        + f"<footer>Written by rocm-fleet {e(report.run.rocm_fleet_version)}; "
        f"report schema {SCHEMA_VERSION}.</footer>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>rocm-fleet drift: {report.summary()['drift']} drifted of {len(names)} hosts{unverified}</title>"
        f"<style>{STYLESHEET}</style></head><body>{body}</body></html>\n"
    )


def write_html(report: DriftReport, path: str | Path) -> Path:
    return atomic_write_text(path, render_html(report))
