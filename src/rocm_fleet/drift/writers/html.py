"""HTML form of a drift report: one self-contained page, no scripts, no external resources.

Top to bottom: summary counts, unreachable and unverified hosts, warnings and
stale waivers, a hosts-by-checks table, then one section per host with its
failed, errored, unknown, warning and waived checks, each pending change with
its diff, and its GPU link matrix. An "unverified" host (a check could not be
measured) has a slate-blue badge, never the green one; a host with warnings
has an amber "N warnings" badge beside its status.
Every text from a report goes through ``html.escape``.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from rocm_fleet.drift.model import SCHEMA_VERSION, CheckResult, DriftReport, HostResult
from rocm_fleet.drift.writers.atomic import atomic_write_text
from rocm_fleet.drift.writers.html_matrix import render_link_matrix
from rocm_fleet.drift.writers.html_style import STYLESHEET

# check status -> (symbol, words for the tooltip)
CHECK_ICONS = {"pass": ("\u2713", "pass"), "fail": ("\u2717", "fail"), "error": ("\u26a0", "error"),
               "waived": ("\u2298", "waived"), "skipped": ("\u2013", "not measurable"),
               "unknown": ("?", "unknown: could not be measured"), "warn": ("!", "warning")}  # fmt: skip
SUMMARY_CARDS = (("hosts", "hosts"), ("compliant", "compliant"), ("unverified", "unverified"), ("drift", "drift"),
                 ("unreachable", "unreachable"), ("error", "error"), ("failed_checks", "failed checks"),
                 ("unknown_checks", "unknown checks"), ("warnings", "warnings"), ("changes", "changes"))  # fmt: skip
# A host's check counts beside "N of M pass", in this order.
OTHER_COUNTS = {"fail": "fail", "error": "error", "unknown": "unknown", "warn": "warn", "waived": "waived",
                "skipped": "not measurable"}  # fmt: skip


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _anchor(index: int) -> str:
    # Host names may hold anything; anchors use the position instead.
    return f"host-{index}"


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
        lines.append(f'<span class="{css}">{_e(line)}</span>' if css else _e(line) + "\n")
    return "<pre>" + "".join(lines) + "</pre>"


def _header(report: DriftReport) -> str:
    run = report.run
    limit = f" &middot; limit <code>{_e(run.limit)}</code>" if run.limit else ""
    cards = "".join(
        f'<div class="card {key}"><b>{report.summary()[key]}</b><span>{_e(label)}</span></div>'
        for key, label in SUMMARY_CARDS
    )
    return (
        "<header><h1>rocm-fleet drift report</h1>"
        f'<p class="run">inventory <code>{_e(run.inventory)}</code>{limit} &middot; started {_e(run.started)} '
        f"&middot; finished {_e(run.finished)} &middot; rocm-fleet {_e(run.rocm_fleet_version)}<br>"
        f"<code>{_e(run.command)}</code></p>"
        f'<div class="cards">{cards}</div></header>'
    )


def _notices(report: DriftReport, names: list[str]) -> str:
    parts = []
    unreachable = [(index, name) for index, name in enumerate(names) if report.hosts[name].status == "unreachable"]
    if unreachable:
        items = "".join(
            f'<li><a href="#{_anchor(index)}">{_e(name)}</a>: {_e(report.hosts[name].error or "no reason given")}</li>'
            for index, name in unreachable
        )
        parts.append(f'<div class="notice"><h3>Unreachable hosts ({len(unreachable)})</h3><ul>{items}</ul></div>')
    unverified = [(index, name) for index, name in enumerate(names) if report.hosts[name].status == "unverified"]
    if unverified:
        items = "".join(
            f'<li><a href="#{_anchor(index)}">{_e(name)}</a>: could not measure '
            f'{_e(", ".join(check.id for check in report.hosts[name].unknown_checks))}</li>'
            for index, name in unverified
        )
        parts.append(f'<div class="notice"><h3>Unverified hosts ({len(unverified)})</h3><ul>{items}</ul></div>')
    warnings = [(index, name, check) for index, name in enumerate(names) for check in report.hosts[name].warnings]
    if warnings:
        items = "".join(
            f'<li><a href="#{_anchor(index)}">{_e(name)}</a>: <span class="id">{_e(check.id)}</span> '
            f"{_e(check.message or check.title)}</li>"
            for index, name, check in warnings
        )
        parts.append(f'<div class="notice"><h3>Warnings ({len(warnings)})</h3><ul>{items}</ul></div>')
    if report.stale_waivers:
        items = "".join(f"<li>{_e(note)}</li>" for note in report.stale_waivers)
        parts.append(f'<div class="notice"><h3>Stale waivers</h3><ul>{items}</ul></div>')
    return "".join(parts)


def _check_cell(check: CheckResult | None) -> str:
    if check is None:
        return '<td class="cell-none" title="not checked">&middot;</td>'
    symbol, words = CHECK_ICONS[check.status]
    tooltip = f"{check.id} {words}" + (f": {check.message}" if check.message else "")
    return f'<td class="cell-{check.status}" title="{_e(tooltip)}">{symbol}</td>'


def _badges(host: HostResult) -> str:
    status = host.status
    badge = f'<span class="badge {status}">{status}</span>'
    if host.warnings:
        count = len(host.warnings)
        badge += f' <span class="badge warnings">{count} warning{"s" if count != 1 else ""}</span>'
    return badge


def _grid(report: DriftReport, names: list[str]) -> str:
    check_ids = sorted({check.id for host in report.hosts.values() for check in host.checks})
    titles = {check.id: check.title for host in report.hosts.values() for check in host.checks}
    head = "".join(f'<th class="check" title="{_e(titles[cid])}">{_e(cid)}</th>' for cid in check_ids)
    rows = []
    for index, name in enumerate(names):
        host = report.hosts[name]
        status = host.status
        first = (
            f'<td class="host"><a href="#{_anchor(index)}">{_e(name)}</a></td>'
            f"<td>{_badges(host)}</td>"
        )
        if not host.reached or host.error:
            span = len(check_ids) + 1
            reason = _e(host.error or status)
            rows.append(f'<tr>{first}<td class="cell-unreachable" colspan="{span}">{reason}</td></tr>')
            continue
        by_id = {check.id: check for check in host.checks}
        cells = "".join(_check_cell(by_id.get(cid)) for cid in check_ids)
        changes = len(host.changes)
        change_css = "cell-fail" if changes else "cell-pass"
        rows.append(f'<tr>{first}{cells}<td class="{change_css}">{changes}</td></tr>')
    return (
        '<section class="panel"><h2>Hosts by checks</h2><div class="scroll"><table class="grid">'
        f'<thead><tr><th class="host">host</th><th>status</th>{head}<th class="check">changes</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def _check_details(check: CheckResult) -> str:
    symbol, words = CHECK_ICONS[check.status]
    waiver = ""
    if check.waiver:
        waiver = (
            f"<dt>waiver</dt><dd>{_e(check.waiver.reason)} (expires {_e(check.waiver.expires)}, "
            f"hosts {_e(check.waiver.hosts)})</dd>"
        )
    if check.repair:  # no task of site.yml repairs it: say what does
        waiver += f"<dt>repaired by</dt><dd>{_e(check.repair)}</dd>"
    # Findings start open so the page reads (and prints) without clicking; waivers stay folded.
    state = "" if check.status == "waived" else " open"
    return (
        f'<details{state}><summary><span class="cell-{check.status}">&nbsp;{symbol}&nbsp;</span> '
        f'<span class="id">{_e(check.id)}</span> {_e(check.title)} <span class="muted">({words})</span></summary>'
        f'<div><dl class="values"><dt>message</dt><dd>{_e(check.message or "-")}</dd>{waiver}</dl>'
        f"<h3>expected</h3><pre>{_e(_json(check.expected))}</pre>"
        f"<h3>actual</h3><pre>{_e(_json(check.actual))}</pre></div></details>"
    )


def _host_items(host: HostResult) -> str:
    if not host.reached:
        return f'<p class="muted">Not reached: {_e(host.error or "no reason given")}. Nothing is known about it.</p>'
    parts = []
    if host.error:
        parts.append(f'<p class="cell-error">The checks could not run: {_e(host.error)}</p>')
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
            f'<details open><summary><span class="id">{_e(change.action)}</span> {_e(change.label)}</summary>'
            f"<div>{diff}</div></details>"
        )
    return "".join(parts)


def _host_gpu(name: str, host: HostResult) -> str:
    gpu = host.gpu
    if gpu is None:
        return ""
    products = ", ".join(sorted(set(gpu.products))) or "unknown product"
    picture = (
        render_link_matrix(name, gpu) if gpu.link_type else '<p class="muted">No link matrix reported.</p>'
    )
    return f'<div class="gpu"><h3>GPUs</h3><p>{gpu.count} &times; {_e(products)}</p>{picture}</div>'


def _host_section(index: int, name: str, host: HostResult) -> str:
    return (
        f'<section class="panel host" id="{_anchor(index)}"><h2>{_e(name)} {_badges(host)}</h2>'
        f'<div class="host-body"><div class="host-items">{_host_items(host)}</div>{_host_gpu(name, host)}</div>'
        "</section>"
    )


def render_html(report: DriftReport) -> str:
    names = sorted(report.hosts)
    unverified = f", {report.summary()['unverified']} unverified" if report.summary()["unverified"] else ""
    body = (
        _header(report)
        + _notices(report, names)
        + _grid(report, names)
        + "".join(_host_section(index, name, report.hosts[name]) for index, name in enumerate(names))
        + f"<footer>Written by rocm-fleet {_e(report.run.rocm_fleet_version)}; "
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
