# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_compliance: one host's whole compliance in one task (docs: plugins/modules/host_compliance.py).

Two module calls over one connection: gpu_facts (with the OS facts the decisions
read), then node_compliance. Between them, on the controller, the roles' own
definitions are evaluated in plugin_utils.role_context: preflight's
``__preflight_decision``, each role's templates/desired_state.json.j2 and the
compliance role's ``__compliance_gpu_expect``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance_gpu import GPU_CHECKS
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_model import SOURCES
from ansible_collections.rocm_fleet.core.plugins.module_utils.host_facts import HOST_FACTS

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.role_context import (
    ROLES_DIR,
    RoleContext,
    RoleContextError,
    describing_roles,
    desired_state_template,
)

DECISION_ROLE = "preflight"
COMPLIANCE_ROLE = "compliance"
# preflight's definitions that the decision reads several times: each is evaluated
# once, in this order, as set_fact would fix it, so the GPUs are classified once.
DECISION_STEPS = (
    "__preflight_gpu_catalog", "__preflight_support_matrix", "__preflight_gpus", "__preflight_support",
    "__preflight_tuning",
)
# Everything the declared state may read from ansible_facts: what gpu_facts and node_compliance gather.
DECISION_FACTS = ("gpu",) + HOST_FACTS
ARGUMENT_SPEC = {
    "roles": {"type": "list", "elements": "str", "default": ["repo", "packages", "kernel", "access", "environment"]},
    "gpu_sources": {"type": "list", "elements": "str", "default": ["sysfs"], "choices": list(SOURCES)},
    "skip_checks": {"type": "list", "elements": "str", "default": []},
    "timeout": {"type": "int", "default": 30},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        try:
            self._check_args(args)
            known = _known_facts(task_vars, args["gpu_sources"])
            if known is not None:
                # Facts from an earlier run (the fact cache): decide from them, and let the one
                # node_compliance call read the facts again; while they still hold, that call's
                # results are exactly what deciding from fresh facts would give.
                state = self._declared_state(args, task_vars, known)
                checked = self._evaluate(args, task_vars, state, gpu=None)
                facts = checked.get("ansible_facts") or {}
                if checked.get("failed") or not facts.get("gpu") or _decision_inputs(facts) == known:
                    return self._result(result, checked, state, calls=1)
            else:
                facts = self._gather(args, task_vars)
            # A first look, or the host changed since: decide from what it reports now.
            state = self._declared_state(args, task_vars, facts)
            checked = self._evaluate(args, task_vars, state, gpu=facts["gpu"] if args["gpu_sources"] else None)
            checked["ansible_facts"] = facts
        except RoleContextError as error:
            result.update(failed=True, msg="host %s: %s" % (task_vars.get("inventory_hostname"), error))
            return result
        return self._result(result, checked, state, calls=2)

    def _evaluate(self, args, task_vars, state, gpu):
        """One node_compliance call; without ``gpu`` it reads the GPU and host facts itself."""
        module_args = {"items": state.items, "gpu_expect": state.gpu_expect, "timeout": args["timeout"]}
        if gpu is None and args["gpu_sources"]:
            module_args.update(gpu_sources=args["gpu_sources"], host_facts=True)
        else:
            module_args["gpu_sources"] = []
            if gpu is not None:
                module_args["gpu"] = gpu
        return self._execute_module(
            module_name="rocm_fleet.core.node_compliance", module_args=module_args, task_vars=task_vars
        )

    @staticmethod
    def _result(result, checked, state, calls):
        result.update(checked)
        # The echoed items (file contents included) would only weigh on every callback and report.
        result.pop("invocation", None)
        if not checked.get("failed"):
            result.update(decision=state.decision, module_calls=calls)
        return result

    def _check_args(self, args):
        unknown_roles = [role for role in args["roles"] if not _describes_its_state(role)]
        if unknown_roles:
            raise RoleContextError(
                "roles %s have no templates/desired_state.json.j2 under %s; the roles that describe their state: %s"
                % (", ".join(unknown_roles), ROLES_DIR, ", ".join(describing_roles()))
            )

    def _gather(self, args, task_vars):
        """The gpu fact and the OS facts the decisions read, in one module call."""
        gathered = self._execute_module(
            module_name="rocm_fleet.core.gpu_facts",
            module_args={"sources": args["gpu_sources"] or ["sysfs"], "host_facts": True, "timeout": args["timeout"]},
            task_vars=task_vars,
        )
        if gathered.get("failed") or "ansible_facts" not in gathered:
            raise RoleContextError("cannot read the GPU and OS facts: %s" % to_text(gathered.get("msg") or gathered))
        return gathered["ansible_facts"]

    def _declared_state(self, args, task_vars, facts):
        """The decision, the roles' items and the GPU class expectations, without the skipped checks."""
        context = RoleContext(
            self._loader, self._templar, task_vars, facts, [DECISION_ROLE] + args["roles"] + [COMPLIANCE_ROLE]
        )
        problems = context.unknown_variables(known_from=(DECISION_ROLE, "__preflight_role_vars"))
        if problems:
            raise RoleContextError("; ".join(problems))
        context.fix(DECISION_ROLE, DECISION_STEPS, "decide as preflight does")
        decision = context.evaluate(DECISION_ROLE, "__preflight_decision", "decide as preflight does")
        context.set("preflight_decision", decision)
        gpu_expect = context.evaluate(COMPLIANCE_ROLE, "__compliance_gpu_expect", "work out what the GPU class expects")
        # The catalog and matrix are large and no desired-state template reads them.
        context.drop_data(DECISION_STEPS)
        skipped = set(args["skip_checks"])
        items = [item for role in args["roles"] for item in context.render_items(role) if item.get("id") not in skipped]
        return DeclaredState(decision, items, without_skipped_gpu_checks(gpu_expect, skipped))


def without_skipped_gpu_checks(gpu_expect, skipped):
    """gpu_expect less the keys whose check ID (node_compliance's GPU_CHECKS) is skipped."""
    return dict((key, value) for key, value in gpu_expect.items()
                if key not in GPU_CHECKS or GPU_CHECKS[key][0] not in skipped)


class DeclaredState:
    """What a host should be: preflight's decision, the roles' items and the GPU class expectations."""

    def __init__(self, decision, items, gpu_expect):
        self.decision, self.items, self.gpu_expect = decision, items, gpu_expect


def _decision_inputs(facts):
    """The facts the declared state is rendered from, by their names under ansible_facts."""
    facts = facts or {}
    picked = {}
    for name in DECISION_FACTS:
        for key in (name, "ansible_" + name):  # as playbooks read them, or as modules return them
            if key in facts:
                picked[name] = facts[key]
                break
    return picked


def _known_facts(task_vars, gpu_sources):
    """The GPU and host facts the host reported before (fact cache, earlier task), or None.

    Only facts read from the same GPU sources compare with what this run reads.
    """
    known = _decision_inputs(task_vars.get("ansible_facts"))
    gpu = known.get("gpu") or {}
    read_from = set(name for name, status in (gpu.get("sources") or {}).items() if status != "skipped")
    return known if gpu and "os_family" in known and read_from == set(gpu_sources) else None


def _describes_its_state(role):
    return os.path.isfile(desired_state_template(role))
