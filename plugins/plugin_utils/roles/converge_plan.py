# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which provisioning roles a converge runs on a host: the one decision behind the converge_plan action.

A role is proven when every item of its managed objects passed on the host (as its tasks would leave them) and its
data names nothing its objects cannot prove (``__<role>_converge.unproven``). The first role not proven runs, and so
does every role after it: each later role reads what the earlier ones install and write (the default release's
libraries, the groups, the driver), so a role after a change is never judged from the state before it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

PREFIX = "rocm_fleet.core."


def role_name(role):
    """``access`` for rocm_fleet.core.access or access; None stays None."""
    if role and role.startswith(PREFIX):
        return role[len(PREFIX):]
    return role


def _label(result):
    return result.get("label") or result.get("title") or result.get("id") or "?"


def plan(order, results, unproven):
    """{run, proven, reasons} for the roles of ``order`` (provisioning order).

    ``results``: the results of the roles' items, each with its ``role``; results of no role (the GPU class and
    health checks) are not the roles' to repair and are ignored. ``unproven``: {role: [reasons its tasks must run
    whatever its objects show]}. ``run`` keeps ``order``; ``proven`` maps each role not run to the labels of its
    objects; ``reasons`` says why each role in ``run`` runs.
    """
    labels = dict((role, []) for role in order)
    differ = dict((role, []) for role in order)
    for result in results:
        role = role_name(result.get("role"))
        if role not in labels:
            continue
        if result.get("status") == "pass":
            labels[role].append(_label(result))
        else:
            differ[role].append("%s %s: %s" % (_label(result), result.get("status"), result.get("message") or ""))
    run, reasons, first = [], {}, None
    for role in order:
        why = differ[role] + ["not proven by its objects: %s" % reason for reason in unproven.get(role) or []]
        if first is None and why:
            first = role
        if first is not None:
            run.append(role)
            reasons[role] = why or ["runs after %s, whose changes it reads" % first]
    proven = dict((role, sorted(set(labels[role]))) for role in order if role not in run)
    return {"run": run, "proven": proven, "reasons": reasons}
