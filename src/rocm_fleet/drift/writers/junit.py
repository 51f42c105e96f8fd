"""JUnit XML form of a drift report, for CI test-result views (Jenkins, GitLab).

One testsuite per host; in it one testcase per check, one per pending change
and the pseudo-checks HOST-REACHABLE (every host, so the test count stays the
same night after night) and HOST-CHECKED (only where the checks could not
run). Only attributes the common Jenkins/xunit JUnit schema allows are used.

A check that could not be measured ("unknown") is ``<skipped type="unknown">``
with its reason: never a pass, not a failure either. A warning is a passing
testcase whose ``<system-out>`` starts with ``warning:``; each suite's
properties count both (``unknown_checks``, ``warnings``).
"""

from __future__ import annotations

import datetime
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from rocm_fleet.drift.model import CheckResult, DriftReport, HostResult
from rocm_fleet.drift.writers.atomic import atomic_write_text

REACHABLE_CASE = "HOST-REACHABLE"
CHECKED_CASE = "HOST-CHECKED"
# XML 1.0 forbids most control characters; tool output (ANSI colour) carries them.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: Any) -> str:
    return _NOT_XML.sub(lambda match: "\\x%02x" % ord(match.group()), str(value))


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def _seconds_between(started: str, finished: str) -> str | None:
    try:
        delta = datetime.datetime.fromisoformat(finished) - datetime.datetime.fromisoformat(started)
    except (TypeError, ValueError):
        return None
    return "%.3f" % max(delta.total_seconds(), 0.0)


def _case(suite: ET.Element, host: str, name: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", {"classname": xml_text(host), "name": xml_text(name)})


def _outcome(case: ET.Element, tag: str, message: str, kind: str, body: str = "") -> None:
    element = ET.SubElement(case, tag, {"message": xml_text(message), "type": xml_text(kind)})
    if body:
        element.text = xml_text(body)


def _check_body(check: CheckResult, with_message: bool = True) -> str:
    lines = [f"expected: {_json(check.expected)}", f"actual: {_json(check.actual)}"]
    if check.message and with_message:
        lines.append(f"message: {check.message}")
    if check.repair:
        lines.append(f"repaired by: {check.repair}")
    if check.waiver:
        lines.append(f"waiver: {check.waiver.reason} (expires {check.waiver.expires}, hosts {check.waiver.hosts})")
    return "\n".join(lines) + "\n"


def _add_check(suite: ET.Element, host: str, check: CheckResult) -> None:
    case = _case(suite, host, f"{check.id} {check.title}")
    if check.status == "fail":
        _outcome(case, "failure", check.message or f"{check.id} failed", check.id, _check_body(check))
    elif check.status == "error":
        _outcome(case, "error", check.message or f"{check.id} could not run", check.id, _check_body(check))
    elif check.status == "skipped":
        ET.SubElement(case, "skipped", {"message": xml_text(check.message or "not measurable")})
    elif check.status == "unknown":
        message = check.message or f"{check.id} could not be measured"
        if not message.startswith("unknown"):
            message = f"unknown: {message}"
        _outcome(case, "skipped", message, "unknown")
        ET.SubElement(case, "system-out").text = xml_text(_check_body(check, with_message=False))
    elif check.status == "warn":
        message = check.message or f"{check.id} warns"
        if not message.startswith("warning"):
            message = f"warning: {message}"
        ET.SubElement(case, "system-out").text = xml_text(f"{message}\n{_check_body(check, with_message=False)}")
    elif check.status == "waived" and check.waiver:
        message = f"waived: {check.waiver.reason} (expires {check.waiver.expires})"
        ET.SubElement(case, "skipped", {"message": xml_text(message)})


def _host_suite(parent: ET.Element, name: str, host: HostResult, timestamp: str) -> ET.Element:
    suite = ET.SubElement(parent, "testsuite", {"name": xml_text(name), "hostname": xml_text(name)})
    if timestamp:
        suite.set("timestamp", xml_text(timestamp))
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", {"name": "status", "value": host.status})
    if host.gpu:
        ET.SubElement(properties, "property", {"name": "gpu_count", "value": str(host.gpu.count)})
        products = ", ".join(sorted(set(host.gpu.products)))
        ET.SubElement(properties, "property", {"name": "gpu_products", "value": xml_text(products)})
    if host.reached and not host.error:
        ET.SubElement(properties, "property", {"name": "unknown_checks", "value": str(len(host.unknown_checks))})
        ET.SubElement(properties, "property", {"name": "warnings", "value": str(len(host.warnings))})

    reachable = _case(suite, name, REACHABLE_CASE)
    if not host.reached:
        _outcome(reachable, "error", host.error or "host could not be reached", "unreachable")
    elif host.error:
        _outcome(_case(suite, name, CHECKED_CASE), "error", host.error, "check-error")
    for check in host.checks:
        _add_check(suite, name, check)
    for change in host.changes:
        case = _case(suite, name, f"CHANGE {change.label}")
        message = f"{change.action} would change {change.label}"
        _outcome(case, "failure", message, "change", change.diff or "(the module reported no diff)\n")

    cases = suite.findall("testcase")
    for attribute, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
        suite.set(attribute, str(sum(1 for case in cases if case.find(tag) is not None)))
    suite.set("tests", str(len(cases)))
    return suite


def build_junit(report: DriftReport) -> ET.ElementTree:
    root = ET.Element("testsuites", {"name": "rocm-fleet drift"})
    for name in sorted(report.hosts):
        _host_suite(root, name, report.hosts[name], report.run.started)
    suites = root.findall("testsuite")
    for attribute in ("tests", "failures", "errors"):
        root.set(attribute, str(sum(int(suite.get(attribute)) for suite in suites)))
    duration = _seconds_between(report.run.started, report.run.finished)
    if duration is not None:
        root.set("time", duration)
    ET.indent(root)
    return ET.ElementTree(root)


def render_junit(report: DriftReport) -> str:
    return ET.tostring(build_junit(report).getroot(), encoding="unicode", xml_declaration=True) + "\n"


def write_junit(report: DriftReport, path: str | Path) -> Path:
    return atomic_write_text(path, render_junit(report))
