# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the onboarding report: one host's summary, and the run's table of hosts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

RESULT_KEYS = ("host", "onboarded", "gate", "reason")


def _check_result(result):
    if not isinstance(result, dict) or any(key not in result for key in RESULT_KEYS):
        raise AnsibleFilterError(
            "onboard filters expect onboard_result dicts with %s, got %r" % (", ".join(RESULT_KEYS), result)
        )


def _one_line(text):
    """A multi-line reason (preflight's report) as one table cell."""
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def _outcome(result):
    return "onboarded" if result["onboarded"] else "NOT onboarded"


def onboard_summary(result, compliance=None):
    """Lines a person reads for one host: outcome, gates, burn-in, compliance counts and failures."""
    _check_result(result)
    lines = ["%s: %s" % (result["host"], _outcome(result))]
    if not result["onboarded"]:
        lines.append("stopped at gate %s: %s" % (result["gate"], result["reason"]))
    lines.append("gates passed: %s" % (", ".join(result.get("passed_gates") or []) or "none"))
    burnin = result.get("burnin")
    if burnin:
        lines.append("burn-in: %s" % burnin.get("message", burnin.get("status")))
    if compliance and compliance.get("summary"):
        summary = compliance["summary"]
        lines.append(
            "compliance: %d passed, %d failed, %d errors, %d unknown, %d warnings, %d skipped of %d checks"
            % (summary.get("pass", 0), summary.get("fail", 0), summary.get("error", 0), summary.get("unknown", 0),
               summary.get("warn", 0), summary.get("skipped", 0), summary.get("total", 0))
        )
        for check in compliance.get("results") or []:
            if check.get("status") != "pass":
                lines.append("  %s %s: %s" % (check.get("id"), check.get("status"), check.get("message") or ""))
    lines.append("started %s, finished %s" % (result.get("started_at"), result.get("finished_at")))
    return lines


def onboard_table(results):
    """The run's table: one row per host, onboarded first, then the others with their gate and reason."""
    if not isinstance(results, list):
        raise AnsibleFilterError("onboard_table expects a list of onboard_result dicts, got %r" % type(results))
    for result in results:
        _check_result(result)
    rows = sorted(results, key=lambda result: (not result["onboarded"], result["host"]))
    width = max([len("host")] + [len(result["host"]) for result in rows])
    lines = ["%-*s  %-13s  %s" % (width, "host", "outcome", "gate: reason")]
    for result in rows:
        detail = "" if result["onboarded"] else "%s: %s" % (result["gate"], _one_line(result["reason"]))
        lines.append("%-*s  %-13s  %s" % (width, result["host"], _outcome(result), detail))
    onboarded = sum(1 for result in rows if result["onboarded"])
    lines.append("%d of %d hosts onboarded" % (onboarded, len(rows)))
    return lines


class FilterModule(object):
    def filters(self):
        return {"onboard_summary": onboard_summary, "onboard_table": onboard_table}
