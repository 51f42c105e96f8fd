"""The four report forms: JSON, JUnit XML, Prometheus textfile, HTML."""

from __future__ import annotations

import json
import os
import re
import stat
import xml.etree.ElementTree as ET

import pytest
from fleet_testing.drift_samples import status_mix_report, three_host_report, xgmi_matrix

from rocm_fleet.drift import Change, CheckResult, DriftReport, GpuSummary, HostResult
from rocm_fleet.drift.writers import write_all
from rocm_fleet.drift.writers.html import render_html
from rocm_fleet.drift.writers.json import read_json
from rocm_fleet.drift.writers.junit import render_junit
from rocm_fleet.drift.writers.prometheus import escape_label_value, render_prometheus, write_prometheus

# Attributes and children the Jenkins xunit JUnit schema (junit-10.xsd) allows.
JUNIT_SCHEMA = {
    "testsuites": ({"name", "time", "tests", "failures", "errors"}, set(), {"testsuite"}),
    "testsuite": (
        {
            "name",
            "tests",
            "failures",
            "errors",
            "group",
            "time",
            "skipped",
            "timestamp",
            "hostname",
            "id",
            "package",
            "file",
            "log",
            "url",
        },
        {"name", "tests", "failures", "errors"},
        {"testsuite", "properties", "testcase", "system-out", "system-err"},
    ),
    "properties": (set(), set(), {"property"}),
    "property": ({"name", "value"}, {"name", "value"}, set()),
    "testcase": (
        {"name", "time", "classname", "group"},
        {"name"},
        {"skipped", "error", "failure", "system-out", "system-err"},
    ),
    "failure": ({"type", "message"}, set(), set()),
    "error": ({"type", "message"}, set(), set()),
    "skipped": ({"type", "message"}, set(), set()),
    "system-out": (set(), set(), set()),
}
SAMPLE = re.compile(r'^([a-z_]+)(?:\{([a-z_]+)="((?:[^"\\]|\\.)*)"\})? (\S+)$')


def _malicious_report() -> DriftReport:
    report = three_host_report()
    evil = '<script>alert("host")</script>&"\n'
    report.hosts[evil] = HostResult(
        checks=[CheckResult("ROCM-TOPO-001", "<b>links</b>", "fail", "<i>x</i>", {"k": "</pre><script>"}, "<img>")],
        changes=[Change(label="<script>t</script>", action="<b>copy</b>", role="<i>r</i>",
                        diff="+<script>alert(1)</script>\x1b[0m\n")],
        gpu=GpuSummary(2, ["<svg onload=alert(1)>"] * 2, xgmi_matrix(2), [0, None]),
    )
    return report


def test_json_round_trip(tmp_path):
    report = three_host_report()
    paths = write_all(report, tmp_path, formats=["json"])
    assert paths == {"json": tmp_path / "drift.json"}
    assert json.loads(paths["json"].read_text())["summary"]["unreachable"] == 1
    assert read_json(paths["json"]).to_dict() == report.to_dict()


def _check_against_schema(element: ET.Element) -> None:
    allowed, required, children = JUNIT_SCHEMA[element.tag]
    assert set(element.attrib) <= allowed, (element.tag, set(element.attrib) - allowed)
    assert required <= set(element.attrib), (element.tag, required - set(element.attrib))
    for child in element:
        assert child.tag in children, (element.tag, child.tag)
        _check_against_schema(child)


def test_junit_has_a_suite_per_host_and_a_case_per_check():
    report = three_host_report()
    root = ET.fromstring(render_junit(report).encode())
    _check_against_schema(root)
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert set(suites) == set(report.hosts)
    for name, host in report.hosts.items():
        cases = suites[name].findall("testcase")
        assert {case.get("classname") for case in cases} == {name}
        names = [case.get("name") for case in cases]
        assert names[0] == "HOST-REACHABLE"
        assert [n for n in names if n.startswith("ROCM-")] == [f"{c.id} {c.title}" for c in host.checks]
        assert suites[name].get("tests") == str(len(cases))
    unreachable = suites["gpu-mi210-03"].find("testcase/error")
    assert unreachable.get("type") == "unreachable"
    assert "Connection timed out" in unreachable.get("message")
    drifted = {case.get("name"): case for case in suites["gpu-mi300x-02"].findall("testcase")}
    failure = drifted["ROCM-TOPO-001 Every GPU pair is linked by xGMI"].find("failure")
    assert "xGMI link is down" in failure.get("message")
    assert '"PCIE"' in failure.text
    # A change is named by its object's label, as the role's task prints it under --check.
    change = drifted["CHANGE repo: /etc/apt/preferences.d/rocm-pin-600"].find("failure")
    assert change.get("message") == "update would change repo: /etc/apt/preferences.d/rocm-pin-600"
    assert "+Pin: release o=repo.radeon.com,n=6.3.1" in change.text
    no_diff = drifted["CHANGE packages: ROCm 6.3.1"].find("failure")
    assert no_diff.get("message") == "install would change packages: ROCm 6.3.1"
    assert no_diff.text == "(the module reported no diff)\n"
    skipped = suites["gpu-mi300x-01"].find("testcase/skipped")
    assert skipped.get("message") == "waived: vendor RMA pending for this node (TICKET-4711) (expires 2099-12-31)"
    assert root.get("failures") == "4" and root.get("errors") == "1" and root.get("tests") == "16"


def test_junit_survives_control_characters_and_markup():
    root = ET.fromstring(render_junit(_malicious_report()).encode())
    _check_against_schema(root)
    assert any("<script>" in (suite.get("name") or "") for suite in root.findall("testsuite"))


def _parse_prometheus(text: str) -> dict[tuple[str, str | None], float]:
    values, typed = {}, set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            assert kind == "gauge"
            typed.add(name)
            continue
        if line.startswith("# HELP ") or line.startswith("rocm_fleet_host_check_failed{"):
            continue  # the one two-label family: test_prometheus_names_each_failed_check_of_a_reached_host
        match = SAMPLE.match(line)
        assert match, line
        name, _label, value, number = match.groups()
        assert name in typed, f"{name} has no TYPE line before its samples"
        values[(name, value)] = float(number)
    return values


def test_prometheus_values():
    values = _parse_prometheus(render_prometheus(three_host_report()))
    assert values[("rocm_fleet_host_compliant", "gpu-mi300x-01")] == 1
    assert values[("rocm_fleet_host_compliant", "gpu-mi300x-02")] == 0
    assert values[("rocm_fleet_host_compliant", "gpu-mi210-03")] == 0
    assert values[("rocm_fleet_host_unreachable", "gpu-mi210-03")] == 1
    assert values[("rocm_fleet_host_unreachable", "gpu-mi300x-02")] == 0
    assert values[("rocm_fleet_host_drift_items", "gpu-mi300x-02")] == 4
    assert values[("rocm_fleet_host_failed_checks", "gpu-mi300x-02")] == 2
    assert ("rocm_fleet_host_drift_items", "gpu-mi210-03") not in values
    assert values[("rocm_fleet_drift_hosts", "unreachable")] == 1
    assert values[("rocm_fleet_drift_last_run_timestamp_seconds", None)] == 1748744499
    assert values[("rocm_fleet_drift_last_run_duration_seconds", None)] == 275


def test_prometheus_escapes_label_values():
    assert escape_label_value('a"b\\c\nd') == 'a\\"b\\\\c\\nd'
    values = _parse_prometheus(render_prometheus(_malicious_report()))
    assert values[("rocm_fleet_host_compliant", '<script>alert(\\"host\\")</script>&\\"\\n')] == 0


def test_prometheus_write_is_atomic_and_replaces(tmp_path):
    target = tmp_path / "rocm_fleet_drift.prom"
    target.write_text("old\n")
    os.chmod(target, 0o600)
    write_prometheus(three_host_report(), target)
    assert target.read_text().startswith("# HELP rocm_fleet_host_compliant")
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rocm_fleet_drift.prom"]


def test_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "rocm_fleet_drift.prom"
    target.write_text("old\n")

    def broken_replace(*_args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_prometheus(three_host_report(), target)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["rocm_fleet_drift.prom"]


def test_write_all_writes_every_form_and_the_textfile(tmp_path):
    paths = write_all(three_host_report(), tmp_path / "out", textfile_dir=tmp_path / "textfile")
    assert set(paths) == {"json", "junit", "html", "prometheus", "textfile"}
    assert paths["textfile"] == tmp_path / "textfile" / "rocm_fleet_drift.prom"
    assert all(path.is_file() for path in paths.values())
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        write_all(three_host_report(), tmp_path, formats=["pdf"])


def test_html_leads_with_what_is_wrong_and_folds_the_compliant_host_into_one_line():
    report = three_host_report()
    page = render_html(report)
    order = ["Unreachable hosts (1)", "Checks with findings (3)", "Hosts with findings (2)",
             '<section class="panel host" id="host-0"><h2>gpu-mi210-03',
             '<section class="panel host" id="host-1"><h2>gpu-mi300x-02', "Compliant hosts (1)"]
    assert [page.index(part) for part in order] == sorted(page.index(part) for part in order)
    # The by-check view: failures first, each naming its hosts.
    assert page.index('<td class="id">ROCM-TOPO-001</td>') < page.index('<td class="id">ROCM-FW-001</td>')
    assert '<td class="id">ROCM-DRV-001</td>' not in page  # passes everywhere: no row, no grid column
    assert '<a href="#host-1">gpu-mi300x-02</a>' in page.split("Checks with findings")[1].split("</section>")[0]
    assert page.count('<section class="panel host"') == 2  # the compliant host has no section of its own
    assert ('<li id="host-2"><a href="#host-2">gpu-mi300x-01</a> <span class="muted">waived: ROCM-FW-001 \u00b7 '
            "5 of 6 checks pass \u00b7 8 \u00d7 AMD Instinct MI300X</span></li>") in page
    assert page.count('<svg class="links"') == 1  # the drifted host's; the unreachable host has no GPU facts
    assert "<title>GPU2 to GPU5: PCIe</title>" in page
    assert '<span class="add">+Pin: release o=repo.radeon.com,n=6.3.1</span>' in page
    assert '<span class="id">update</span> repo: /etc/apt/preferences.d/rocm-pin-600</summary>' in page
    assert '<span class="id">install</span> packages: ROCm 6.3.1</summary>' in page
    assert "<script" not in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")


def test_html_draws_a_link_matrix_only_where_a_link_check_has_a_finding():
    report = three_host_report()
    drifted = report.hosts["gpu-mi300x-02"]
    drifted.checks = [check for check in drifted.checks if check.id != "ROCM-TOPO-001"]  # ROCM-VER-001 still fails
    page = render_html(report)
    assert '<svg class="links"' not in page
    assert "Links as declared (no link check has a finding); drift.json has the matrix." in page
    assert "8 &times; AMD Instinct MI300X" in page


def test_html_escapes_everything_from_the_report():
    page = render_html(_malicious_report())
    assert "<script" not in page
    assert "<img>" not in page and "<b>links</b>" not in page and "<svg onload" not in page
    assert "&lt;script&gt;alert(&quot;host&quot;)&lt;/script&gt;" in page
    assert '<span class="add">+&lt;script&gt;alert(1)&lt;/script&gt;' in page
    assert '<span class="id">&lt;b&gt;copy&lt;/b&gt;</span> &lt;script&gt;t&lt;/script&gt;</summary>' in page


def test_what_repairs_a_check_that_no_task_repairs_is_in_the_junit_and_html_forms():
    report = DriftReport.from_dict(three_host_report().to_dict())
    host, check = next((name, check) for name, host in report.hosts.items() for check in host.checks if check.repair)
    body = next(case.find("failure").text for case in ET.fromstring(render_junit(report)).iter("testcase")
                if case.get("classname") == host and case.get("name", "").startswith(check.id))
    assert f"repaired by: {check.repair}" in body
    assert "repaired by</dt><dd>a person: the hardware differs" in render_html(report)


def test_json_keeps_unknown_and_warn(tmp_path):
    report = status_mix_report()
    path = write_all(report, tmp_path, formats=["json"])["json"]
    data = json.loads(path.read_text())
    assert data["hosts"]["gpu-mi300x-05"]["status"] == "unverified"
    assert {c["id"]: c["status"] for c in data["hosts"]["gpu-mi300x-06"]["checks"]}["ROCM-ACCESS-006"] == "warn"
    assert (data["summary"]["unknown_checks"], data["summary"]["warnings"]) == (2, 2)
    assert read_json(path).to_dict() == report.to_dict()


def test_junit_marks_unknown_skipped_and_warn_as_output_never_a_pass_of_nothing():
    root = ET.fromstring(render_junit(status_mix_report()).encode())
    _check_against_schema(root)
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    unverified = {case.get("name"): case for case in suites["gpu-mi300x-05"].findall("testcase")}
    skipped = unverified["ROCM-RAS-001 No uncorrectable ECC errors"].find("skipped")
    assert (skipped.get("type"), skipped.get("message")) == (
        "unknown", "unknown: GPU 3: ecc_count uncorrectable is N/A (amd-smi metric --ecc)")
    body = unverified["ROCM-RAS-001 No uncorrectable ECC errors"].find("system-out").text
    assert body == "expected: 0\nactual: null\n"
    properties = {p.get("name"): p.get("value") for p in suites["gpu-mi300x-05"].iter("property")}
    assert properties == {"status": "unverified", "unknown_checks": "1", "warnings": "0"}
    assert suites["gpu-mi300x-05"].get("skipped") == "1" and suites["gpu-mi300x-05"].get("failures") == "0"
    warned = {case.get("name"): case for case in suites["gpu-mi300x-06"].findall("testcase")}
    case = warned["ROCM-ACCESS-006 Only listed users are in the GPU groups"]
    assert [child.tag for child in case] == ["system-out"]
    assert case.find("system-out").text.startswith("warning: mallory in group render but not listed")
    assert {p.get("name"): p.get("value") for p in suites["gpu-mi300x-06"].iter("property")}["warnings"] == "1"
    assert root.get("failures") == "1" and root.get("errors") == "0"


def test_prometheus_has_unverified_unknown_and_warning_series():
    text = render_prometheus(status_mix_report())
    values = _parse_prometheus(text)
    assert values[("rocm_fleet_host_compliant", "gpu-mi300x-05")] == 0  # not measured is not green
    assert values[("rocm_fleet_host_unverified", "gpu-mi300x-05")] == 1
    assert values[("rocm_fleet_host_unknown_checks", "gpu-mi300x-05")] == 1
    assert values[("rocm_fleet_host_failed_checks", "gpu-mi300x-05")] == 0
    assert values[("rocm_fleet_host_compliant", "gpu-mi300x-06")] == 1  # a warning does not fail
    assert values[("rocm_fleet_host_warnings", "gpu-mi300x-06")] == 1
    assert values[("rocm_fleet_host_unverified", "gpu-mi300x-07")] == 0  # drift wins, the unknown still counts
    assert values[("rocm_fleet_host_unknown_checks", "gpu-mi300x-07")] == 1
    assert values[("rocm_fleet_drift_hosts", "unverified")] == 1
    assert values[("rocm_fleet_drift_checks", "unknown")] == 2
    assert values[("rocm_fleet_drift_checks", "warn")] == 2
    assert values[("rocm_fleet_drift_checks", "fail")] == 1
    assert values[("rocm_fleet_drift_checks", "pass")] == 14
    assert text.count("# TYPE rocm_fleet_drift_checks gauge") == 1


def test_prometheus_leaves_the_unknown_and_warning_counts_out_where_the_checks_did_not_run():
    values = _parse_prometheus(render_prometheus(three_host_report()))
    assert values[("rocm_fleet_host_unknown_checks", "gpu-mi300x-01")] == 0
    assert ("rocm_fleet_host_unknown_checks", "gpu-mi210-03") not in values
    assert ("rocm_fleet_host_warnings", "gpu-mi210-03") not in values
    assert values[("rocm_fleet_host_unverified", "gpu-mi210-03")] == 0
    assert values[("rocm_fleet_drift_checks", "waived")] == 1


def test_html_never_shows_an_unverified_host_green_and_shows_every_warning():
    page = render_html(status_mix_report())
    assert "<title>rocm-fleet drift: 1 drifted of 3 hosts, 1 unverified</title>" in page
    assert page.count('<span class="badge unverified">unverified</span>') == 2  # grid row and section
    assert page.count('<span class="badge compliant">compliant</span>') == 2  # only gpu-mi300x-06
    assert page.count('<span class="badge warnings">1 warning</span>') == 4  # gpu-mi300x-06 and -07, twice each
    by_check = page.split("Checks with findings")[1].split("</section>")[0]
    assert by_check.index("ROCM-TOPO-001") < by_check.index("ROCM-RAS-001") < by_check.index("ROCM-ACCESS-006")
    unknown_row = by_check.split('<td class="id">ROCM-RAS-001</td>')[1].split("</tr>")[0]
    assert '<a href="#host-1">gpu-mi300x-05</a>' in unknown_row and "gpu-mi300x-07" in unknown_row
    assert "Compliant hosts" not in page  # a host with a warning is not folded away
    assert page.count("warning: mallory in group render but not listed in the inventory") >= 4
    assert '<td class="cell-unknown" title="ROCM-RAS-001 unknown: could not be measured: unknown: GPU 3' in page
    assert '<td class="cell-warn" title="ROCM-ACCESS-006 warning: warning: mallory' in page
    assert "<h3>Checks: 5 of 6 pass, 1 unknown</h3>" in page
    assert "<h3>Checks: 4 of 7 pass, 1 fail, 1 unknown, 1 warn</h3>" in page
    assert '<div class="card unverified"><b>1</b>' in page and '<div class="card warnings"><b>2</b>' in page
    assert ".cell-unknown {" in page and ".badge.unverified {" in page


def test_prometheus_names_each_failed_check_of_a_reached_host():
    text = render_prometheus(three_host_report())
    failed = sorted(line for line in text.splitlines() if line.startswith("rocm_fleet_host_check_failed{"))
    assert failed == [
        'rocm_fleet_host_check_failed{host="gpu-mi300x-02",check="ROCM-TOPO-001"} 1',
        'rocm_fleet_host_check_failed{host="gpu-mi300x-02",check="ROCM-VER-001"} 1',
    ]  # the waived check of gpu-mi300x-01 and the unreachable host have none
    assert text.count("# TYPE rocm_fleet_host_check_failed gauge") == 1
