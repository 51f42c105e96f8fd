"""``rocm-fleet drift`` arguments and the steps around the engine, with a stand-in engine."""

from __future__ import annotations

import argparse
import datetime
import io
import json

import pytest
from fleet_testing.drift_samples import status_mix_report, three_host_report
from fleet_testing.fleet_samples import fleet_report

from rocm_fleet.drift import EXIT_CANNOT_RUN, EXIT_DRIFT, EXIT_OK, EXIT_UNREACHABLE, CheckResult, HostResult
from rocm_fleet.drift.cli import register, run_drift
from rocm_fleet.drift.summary import format_summary


def _parser(collect):
    parser = argparse.ArgumentParser(prog="rocm-fleet")
    register(parser.add_subparsers(dest="command"), collect)
    return parser


def _run(argv, collect, today=datetime.date(2025, 6, 1)):
    args = _parser(collect).parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    return run_drift(args, collect, out, err, today), out.getvalue(), err.getvalue()


def test_parses_the_documented_options():
    args = _parser(None).parse_args(
        ["drift", "-i", "inv", "--limit", "gpu*", "--output-dir", "o", "--textfile-dir", "t", "--format", "json,html"]
    )
    assert (args.inventory, args.limit, args.output_dir, args.textfile_dir) == ("inv", "gpu*", "o", "t")
    assert args.formats == ["json", "html"]
    with pytest.raises(SystemExit):
        _parser(None).parse_args(["drift", "-i", "inv", "--format", "pdf"])


def test_full_run_applies_waivers_writes_reports_and_returns_the_exit_status(tmp_path):
    waivers = tmp_path / "waivers.yml"
    waivers.write_text("- {check: ROCM-TOPO-001, hosts: 'gpu-mi300x-*', reason: bridge swap, expires: 2025-06-30}\n")
    seen = []

    def collect(inventory, limit, progress):
        seen.append((inventory, limit))
        progress("gpu-mi300x-01: checks done")
        return three_host_report(), {}

    argv = ["drift", "-i", "inv", "--output-dir", str(tmp_path / "out"), "--waivers", str(waivers)]
    status, out, err = _run(argv, collect)
    assert status == EXIT_UNREACHABLE
    assert seen == [("inv", None)]
    assert "gpu-mi300x-01: checks done" in err
    report = json.loads((tmp_path / "out" / "drift.json").read_text())
    assert report["schema"] == 3
    drifted = report["hosts"]["gpu-mi300x-02"]
    assert drifted["passed"] == ["ROCM-DRV-001", "ROCM-KERN-002", "ROCM-GPU-001"]
    assert report["by_check"]["ROCM-TOPO-001"]["hosts"] == {"waived": ["gpu-mi300x-02"]}
    checks = {check["id"]: check["status"] for check in drifted["checks"]}
    assert checks["ROCM-TOPO-001"] == "waived"
    assert checks["ROCM-VER-001"] == "fail"
    # A waived check still says what would repair it; the changes are named by their objects' labels.
    topology = next(check for check in drifted["checks"] if check["id"] == "ROCM-TOPO-001")
    assert topology["repair"].startswith("a person: ") and topology["waiver"]["reason"] == "bridge swap"
    assert [change["label"] for change in drifted["changes"]] == [
        "repo: /etc/apt/preferences.d/rocm-pin-600", "packages: ROCm 6.3.1"]
    assert "gpu-mi300x-02  drift        failed: ROCM-VER-001; changes: 2; waived: 1" in out
    assert (tmp_path / "out" / "drift.html").is_file()


def test_a_bad_waiver_file_stops_before_any_host_is_contacted(tmp_path):
    waivers = tmp_path / "waivers.yml"
    waivers.write_text("- {check: ROCM-TOPO-001, hosts: x, expires: 2025-06-30}\n")

    def collect(*_args):
        raise AssertionError("must not run")

    status, _, err = _run(["drift", "-i", "inv", "--waivers", str(waivers)], collect)
    assert status == EXIT_CANNOT_RUN
    assert "entry 1: field 'reason': required" in err


def test_an_engine_failure_exits_1(tmp_path):
    def collect(*_args):
        raise RuntimeError("inventory not found")

    status, _, err = _run(["drift", "-i", "inv", "--output-dir", str(tmp_path)], collect)
    assert status == EXIT_CANNOT_RUN
    assert "could not run: inventory not found" in err


def test_summary_lists_each_host_and_the_totals():
    report = three_host_report()
    report.hosts["gpu-mi300x-04"] = HostResult(
        checks=[CheckResult(f"ROCM-X-{n:03d}", "x", "fail") for n in range(8)], error=None
    )
    text = format_summary(report)
    assert "gpu-mi210-03   unreachable  Failed to connect to the host via ssh" in text
    assert "gpu-mi300x-01  compliant    failed: -; changes: 0; waived: 1" in text
    assert "ROCM-X-005, +2 more; changes: 0" in text
    assert ("4 hosts: 1 compliant, 0 unverified, 2 drift, 1 unreachable, 0 error; "
            "10 failed checks, 0 unknown checks, 0 warnings, 2 changes") in text
    assert text.endswith(f"exit status {EXIT_UNREACHABLE}")
    del report.hosts["gpu-mi210-03"]
    assert format_summary(report).endswith(f"exit status {EXIT_DRIFT}")


def test_summary_names_unknown_and_warning_checks_and_an_unverified_run_exits_0(tmp_path):
    text = format_summary(status_mix_report())
    assert "gpu-mi300x-05  unverified   failed: -; changes: 0; unknown: ROCM-RAS-001" in text
    assert "gpu-mi300x-06  compliant    failed: -; changes: 0; warnings: ROCM-ACCESS-006" in text
    assert "failed: ROCM-TOPO-001; changes: 0; unknown: ROCM-RAS-001; warnings: ROCM-ACCESS-006" in text
    assert ("3 hosts: 1 compliant, 1 unverified, 1 drift, 0 unreachable, 0 error; "
            "1 failed checks, 2 unknown checks, 2 warnings, 0 changes") in text

    def collect(inventory, limit, progress):
        report = status_mix_report()
        del report.hosts["gpu-mi300x-07"]
        return report, {}

    status, out, _ = _run(["drift", "-i", "inv", "--output-dir", str(tmp_path)], collect)
    assert status == EXIT_OK
    assert "1 compliant, 1 unverified, 0 drift" in out and "\nexit status 0\n" in out


def test_summary_lists_what_is_wrong_first_and_folds_many_compliant_hosts():
    report = fleet_report(200)
    lines = format_summary(report).splitlines()
    listed = [line.split()[0] for line in lines[1:] if line.startswith("  gpu-") or line.startswith("  login-")]
    assert listed == [name for name in report.host_order() if not report.hosts[name].clean]
    assert report.hosts[listed[0]].status == "unreachable"
    [folded] = [line for line in lines if "compliant hosts, every check passed" in line]
    clean = sum(1 for host in report.hosts.values() if host.clean)
    assert folded.startswith(f"  {clean} compliant hosts") and folded.endswith(f"+{clean - 8} more")
