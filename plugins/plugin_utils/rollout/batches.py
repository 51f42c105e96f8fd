# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A rollout in batches (the upgrade, the kernel update): when to stop, and the report.

Each host of a rollout has a plan (``{host, action, reason}``, action ``skip`` or a
change) and, once its batch ran, a result (``{host, outcome, step, reason, batch}``,
outcome ``done`` or ``failed``; ``running`` when the host stopped answering in the
middle of a step). Hosts of batches the rollout never reached have no result.

* stop_rollout(results, batch, max_fail_percentage): whether a batch failed more
  hosts than allowed, so that later batches are left untouched.
* rollout_report(kind, plans, results, context): the document written as JSON.
* rollout_table(report): the lines the run ends with.
* failure_reason(result, task): why a step failed, in the failed module's own
  words (a loop's failed items included), as the report gives it.

Stdlib only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

OUTCOMES = ("done", "failed", "skipped", "not_started")
# How a person reads each outcome in the table, failures first.
_LABELS = {"failed": "FAILED", "not_started": "not started", "skipped": "skipped", "done": "done"}
_ORDER = {"failed": 0, "not_started": 1, "done": 2, "skipped": 3}


def _percentage(value):
    try:
        number = float(value)
    except (TypeError, ValueError) as error:
        raise ValueError("max_fail_percentage must be a number from 0 to 100, got %r" % (value,)) from error
    if not 0 <= number <= 100:
        raise ValueError("max_fail_percentage must be a number from 0 to 100, got %r" % (value,))
    return number


def stop_rollout(results, batch, max_fail_percentage):
    """True when more than ``max_fail_percentage`` % of ``batch``'s hosts did not finish.

    ``results`` maps host to its result (None where the host has none); ``batch`` lists the
    batch's hosts. A host of the batch without a finished result (it stopped answering)
    counts as failed, as Ansible's own max_fail_percentage counts an unreachable host.
    """
    limit = _percentage(max_fail_percentage)
    batch = list(batch or [])
    if not batch:
        return False
    failed = [host for host in batch if ((results or {}).get(host) or {}).get("outcome") != "done"]
    return len(failed) * 100.0 / len(batch) > limit


def _outcome(plan, result):
    if plan.get("action") == "skip":
        return "skipped", None, plan.get("reason")
    if not result:
        return "not_started", None, "the rollout stopped before this host's batch"
    if result.get("outcome") == "done":
        return "done", None, None
    if result.get("outcome") == "failed":
        return "failed", result.get("step"), result.get("reason")
    return "failed", result.get("step"), "the host failed again or stopped answering during this step (see the output)"


def rollout_report(kind, plans, results, context=None):
    """The rollout's report: one entry per planned host, failures first, and a summary.

    ``plans`` maps host to its plan, ``results`` host to its result or None. ``context``
    (optional) is copied in: the target, the command that continues or rolls back.
    """
    if not isinstance(plans, dict):
        raise ValueError("rollout_report expects plans as a dict of host to plan, got %s" % type(plans).__name__)
    hosts = []
    for host in sorted(plans):
        plan = plans[host] or {}
        outcome, step, reason = _outcome(plan, (results or {}).get(host))
        entry = {"host": host, "outcome": outcome, "step": step, "reason": reason}
        # The stream of each end where the plan names them (a move off the legacy stream: legacy -> core_sdk_10).
        for key in ("from", "to", "action", "from_stream", "to_stream"):
            entry[key] = plan.get(key)
        hosts.append(entry)
    hosts.sort(key=lambda entry: (_ORDER[entry["outcome"]], entry["host"]))
    summary = dict((outcome, 0) for outcome in OUTCOMES)
    for entry in hosts:
        summary[entry["outcome"]] += 1
    summary["total"] = len(hosts)
    return {
        "kind": kind,
        "complete": summary["failed"] == 0 and summary["not_started"] == 0,
        "summary": summary,
        "hosts": hosts,
        "context": dict(context or {}),
    }


def _dpkg_errors(stdout):
    """dpkg's own error lines in apt's output ("dpkg: error processing archive X (--unpack):" and the indented
    lines that say why), which apt's message leaves out ("Sub-process /usr/bin/dpkg returned an error code")."""
    errors, inside = [], False
    for line in str(stdout or "").splitlines():
        if line.startswith("dpkg: error"):
            errors.append(line.strip())
            inside = True
        elif inside and line.startswith(" "):
            errors.append(line.strip())
        else:
            inside = False
    return " ".join(errors)


def _module_words(result):
    """The failure message of one module result, its stderr where the message does not contain it, and the
    package manager's own errors from its output."""
    if not isinstance(result, dict):
        return str(result or "")
    message = str(result.get("msg") or "").strip()
    for extra in (str(result.get("stderr") or "").strip(), _dpkg_errors(result.get("stdout"))):
        if extra and extra not in message:
            message = "%s: %s" % (message, extra) if message else extra
    return message


def failure_reason(result, task=None):
    """'task "NAME": MESSAGE', MESSAGE being the module's words; a loop's failed items replace its generic message."""
    result = result if isinstance(result, dict) else {"msg": str(result or "")}
    items = [item for item in result.get("results") or [] if isinstance(item, dict) and item.get("failed")]
    words = "; ".join(filter(None, (_module_words(item) for item in items))) or _module_words(result) or "failed"
    return ('task "%s": %s' % (task, words)) if task else words


def _one_line(text):
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def _end(entry, side):
    """'7.2.3', or '7.2.3 (legacy)' where the two ends' streams differ (a move between streams)."""
    release = entry.get(side) or "?"
    streams = (entry.get("from_stream"), entry.get("to_stream"))
    return "%s (%s)" % (release, entry.get(side + "_stream")) if all(streams) and streams[0] != streams[1] else release


def rollout_table(report):
    """One line per host (failures first, with the step and the reason), then a count and what to do next."""
    rows = []
    check = bool(report.get("check_mode"))
    if check:
        rows.append("--check: nothing was changed; the hosts below are what the run would do")
    for entry in report["hosts"]:
        change = ""
        if entry.get("from") or entry.get("to"):
            change = " %s -> %s" % (_end(entry, "from"), _end(entry, "to"))
        label = "would run" if check and entry["outcome"] == "done" else _LABELS[entry["outcome"]]
        line = "%-24s %-11s%s" % (entry["host"], label, change)
        if entry["outcome"] == "failed":
            line += ": step %s: %s" % (entry.get("step") or "?", _one_line(entry.get("reason") or "failed"))
        elif entry["outcome"] in ("skipped", "not_started") and entry.get("reason"):
            line += " (%s)" % _one_line(entry["reason"])
        rows.append(line)
    summary = report["summary"]
    rows.append(
        "%s: %d done, %d failed, %d not started, %d skipped of %d hosts"
        % (report["kind"], summary["done"], summary["failed"], summary["not_started"], summary["skipped"],
           summary["total"])
    )
    context = report.get("context") or {}
    if not report["complete"]:
        for key, label in (("continue_command", "after fixing the cause, continue with"),
                           ("rollback_command", "or return the failed hosts to their previous state with")):
            if context.get(key):
                rows.append("%s: %s" % (label, context[key]))
    return rows
