"""The report page's fleet-scale parts: the checks with findings, and the compliant hosts one line each.

The by-check table answers "which hosts fail ROCM-X": a row per check with a
finding, failures first, its counts per status and links to the hosts; a long
host list shows its first few and folds the rest. Compliant hosts (nothing to
tell) are one line each at the end: checks passed, GPUs, waivers.
"""

from __future__ import annotations

from rocm_fleet.drift.model import CHECK_STATUSES, FINDING_STATUSES, DriftReport, HostResult
from rocm_fleet.drift.writers.html_text import CHECK_ICONS, anchor, e

# Hosts named in a by-check row before the rest fold behind "N more".
SHOWN_HOSTS = 12
NOTE_SEPARATOR = " \u00b7 "
# The findings first, then the rest: fail, error, unknown, warn, waived, pass, skipped.
COUNTED = FINDING_STATUSES + tuple(status for status in CHECK_STATUSES if status not in FINDING_STATUSES)


def _host_links(names: list[str], positions: dict[str, int]) -> str:
    links = [f'<a href="#{anchor(positions[name])}">{e(name)}</a>' for name in names]
    shown = ", ".join(links[:SHOWN_HOSTS])
    if len(links) > SHOWN_HOSTS:
        shown += f' <details class="more"><summary>{len(links) - SHOWN_HOSTS} more</summary>'
        shown += ", ".join(links[SHOWN_HOSTS:]) + "</details>"
    return shown


def by_check_table(report: DriftReport, names: list[str], view: dict[str, dict]) -> str:
    """``view`` is ``report.by_check()`` (failures first); checks without a finding are left out."""
    positions = {name: index for index, name in enumerate(names)}
    rows = []
    for check_id, entry in view.items():
        if not entry["hosts"]:
            continue
        counts = "".join(
            f'<td class="{"cell-" + status if entry["counts"].get(status) else "cell-none"}">'
            f'{entry["counts"].get(status, 0)}</td>'
            for status in COUNTED
        )
        hosts = "".join(
            f'<div><span class="cell-{status}">&nbsp;{CHECK_ICONS[status][0]}&nbsp;</span> '
            f"{_host_links(entry['hosts'][status], positions)}</div>"
            for status in FINDING_STATUSES if status in entry["hosts"]
        )
        rows.append(f'<tr><td class="id">{e(check_id)}</td><td class="title">{e(entry["title"])}</td>'
                    f'{counts}<td class="hosts">{hosts}</td></tr>')
    if not rows:
        return ('<section class="panel" id="by-check"><h2>Checks with findings</h2>'
                '<p class="muted">None: every check that ran passed or did not apply.</p></section>')
    head = "".join(f"<th>{e(CHECK_ICONS[status][1].split(':')[0])}</th>" for status in COUNTED)
    return (
        f'<section class="panel" id="by-check"><h2>Checks with findings ({len(rows)})</h2>'
        '<div class="scroll"><table class="bycheck"><thead><tr><th>check</th><th>title</th>'
        f"{head}<th>hosts</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def _line(index: int, name: str, host: HostResult) -> str:
    """Name, then what is notable first (waivers, checks not measurable), the passes and the GPUs; no badge:
    the heading says they are compliant, and a thousand green badges would be the page of green again."""
    notes = []
    waived = [check.id for check in host.checks if check.status == "waived"]
    if waived:
        notes.append(f"waived: {', '.join(waived)}")
    skipped = sum(1 for check in host.checks if check.status == "skipped")
    if skipped:
        notes.append(f"{skipped} not measurable")
    passed = sum(1 for check in host.checks if check.status == "pass")
    notes.append(f"{passed} of {len(host.checks)} checks pass")
    if host.gpu is not None:
        notes.append(f"{host.gpu.count} \u00d7 {', '.join(sorted(set(host.gpu.products))) or 'unknown product'}")
    return (f'<li id="{anchor(index)}"><a href="#{anchor(index)}">{e(name)}</a> '
            f'<span class="muted">{e(NOTE_SEPARATOR.join(notes))}</span></li>')


def compliant_lines(report: DriftReport, names: list[str]) -> str:
    lines = [_line(index, name, report.hosts[name]) for index, name in enumerate(names) if report.hosts[name].clean]
    if not lines:
        return ""
    return (f'<section class="panel" id="compliant"><h2>Compliant hosts ({len(lines)})</h2>'
            '<p class="muted">Every check passed, was waived or could not apply.</p>'
            f'<ul class="folded">{"".join(lines)}</ul></section>')
