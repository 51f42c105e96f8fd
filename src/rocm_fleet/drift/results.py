"""Turn one host's node_compliance result into the report's checks, pending changes and GPU summary.

node_compliance returns one result per item (several items may share a check
ID: one per file, user or package) and one per GPU class check. A check passes
when all its items pass; it errors when any item could not be read; else it
fails when any item fails, is unknown when any item could not be measured, and
warns when any item warns (``_PRECEDENCE``); every such item's message shows. A failed
item with a label is also a change that ``ansible-playbook site.yml --check``
would report under that label (the role's task prints it as its loop item);
an item that no task repairs says what does instead (``repair``).
"""

from __future__ import annotations

from collections.abc import Mapping

from rocm_fleet.drift.model import ITEM_STATUSES, LINK_TYPES, Change, CheckResult, GpuSummary, HostResult
from rocm_fleet.drift.schema import ReportFormatError

# A check with several items takes the first of these that any item has; "skipped" only when all are.
_PRECEDENCE = ("error", "fail", "unknown", "warn")


def _known_status(result: Mapping) -> Mapping:
    """An item status this version does not know is an error of the check, never a quiet pass."""
    if result["status"] in ITEM_STATUSES:
        return result
    message = f"status {result['status']!r} is not one of {', '.join(ITEM_STATUSES)}: {result.get('message') or ''}"
    return {**result, "status": "error", "message": message.rstrip(": ")}


def check_results(results: list[Mapping]) -> list[CheckResult]:
    by_id: dict[str, list[Mapping]] = {}
    for result in results:
        by_id.setdefault(result["id"], []).append(_known_status(result))
    checks = []
    for check_id, items in by_id.items():
        # Every item that is a finding shows, whatever the check's status: a warning or an unknown reason
        # beside a failure is not dropped.
        findings = [item for item in items if item["status"] in _PRECEDENCE]
        skipped = all(item["status"] == "skipped" for item in items)
        status = next((wanted for wanted in _PRECEDENCE if any(item["status"] == wanted for item in findings)),
                      "skipped" if skipped else "pass")
        shown = findings or items
        count = sum(item.get("items", 1) for item in items)
        checks.append(
            CheckResult(
                id=check_id,
                title=items[0]["title"],
                status=status,
                # Passed items may come folded by findings_only: one entry, no expected or actual, ``items`` of them.
                expected=shown[0].get("expected") if len(shown) == 1 else [item.get("expected") for item in shown],
                actual=shown[0].get("actual") if len(shown) == 1 else [item.get("actual") for item in shown],
                repair="; ".join(dict.fromkeys(item["repair"] for item in findings if item.get("repair"))),
                message="; ".join(item["message"] for item in findings) if findings else
                items[0]["message"] if skipped else f"{count} item(s) as expected",
            )
        )
    return checks


def pending_changes(results: list[Mapping]) -> list[Change]:
    """One change per object (its label), in the order the items came; the diffs of one object are joined."""
    changes: dict[str, Change] = {}
    for result in results:
        if result["status"] != "fail" or not result.get("label"):
            continue
        label = result["label"]
        if label in changes:
            if result.get("diff"):
                changes[label].diff += result["diff"]
            continue
        changes[label] = Change(label=label, role=result.get("role"), action=result.get("action") or "change",
                                diff=result.get("diff") or "")
    return list(changes.values())


def gpu_summary(gpu: Mapping | None) -> GpuSummary | None:
    if not gpu:
        return None
    devices = gpu.get("devices") or []
    link_type = (gpu.get("topology") or {}).get("link_type")
    if link_type is not None:
        link_type = [[cell if cell in LINK_TYPES else "UNKNOWN" for cell in row] for row in link_type]
    try:
        return GpuSummary(
            count=int(gpu.get("count") or 0),
            products=[str(device.get("product") or "unknown") for device in devices],
            link_type=link_type,
            numa_affinity=[device.get("numa_node") for device in devices],
        )
    except ReportFormatError:  # a malformed matrix costs the picture, not the host's checks
        return GpuSummary(count=int(gpu.get("count") or 0), products=[str(d.get("product")) for d in devices])


def host_result(module_result: Mapping) -> HostResult:
    results = list(module_result.get("results") or [])
    return HostResult(
        checks=check_results(results), changes=pending_changes(results), gpu=gpu_summary(module_result.get("gpu"))
    )

