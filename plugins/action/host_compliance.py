# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_compliance: one host's whole compliance in one task (docs: plugins/modules/host_compliance.py).

The play gives this task every role's variables as a provisioning play gives
them (roles/compliance/tasks/main.yml imports each role's vars entry point), so
Ansible, not this file, decides their precedence. Here, on the controller:
preflight's decision (module_utils.rocm_decision, the function provisioning's
filter calls), each role's managed objects (the ``__<role>_objects`` its tasks
loop over) turned into node_compliance items, and the GPU class checks against
the gpu fact. One node_compliance call evaluates the items on the host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleConnectionFailure, AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase
from ansible.plugins.loader import lookup_loader

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance_evaluate import summarize
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance_gpu import GPU_CHECKS, evaluate_gpu
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_model import SOURCES
from ansible_collections.rocm_fleet.core.plugins.module_utils.host_facts import HOST_FACTS
from ansible_collections.rocm_fleet.core.plugins.module_utils.managed_state import ManagedStateError, compliance_items
from ansible_collections.rocm_fleet.core.plugins.module_utils.rocm_decision import decide, gpu_expectations
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.rocm_data import preflight_data
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.role_variables import (
    read_specs,
    role_results,
    role_variable_problems,
    templated_options,
)

ROLES = ["repo", "packages", "kernel", "access", "environment"]
# Everything a role's objects may read from ansible_facts: what gpu_facts and node_compliance gather.
DECISION_FACTS = ("gpu",) + HOST_FACTS
# The OS data each role loaded (tasks/vars.yml) was chosen by these.
OS_FACTS = ("os_family", "distribution")
GPU_INPUTS = "__compliance_gpu_inputs"
ARGUMENT_SPEC = {
    "roles": {"type": "list", "elements": "str", "default": ROLES},
    "gpu_sources": {"type": "list", "elements": "str", "choices": list(SOURCES)},
    "facts_fresh": {"type": "bool", "default": False},
    "skip_checks": {"type": "list", "elements": "str", "default": []},
    "timeout": {"type": "int", "default": 30},
}


class HostComplianceError(Exception):
    """What stops one host's evaluation, said so the operator knows what to fix."""


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        host = task_vars.get("inventory_hostname")
        try:
            facts = _decision_inputs(task_vars.get("ansible_facts"))
            if "os_family" not in facts or "gpu" not in facts:
                raise HostComplianceError("no GPU and OS facts: run rocm_fleet.core.gpu_facts host_facts=true first")
            state = self._declared_state(args, task_vars, facts)
            checked = self._evaluate(args, task_vars, state, confirm=not args["facts_fresh"])
            # The facts the confirming call read: the fact cache keeps them for the next run.
            read_again = checked.get("ansible_facts") if not args["facts_fresh"] else None
            fresh = _decision_inputs(read_again) if read_again else facts
            calls = 1
            if read_again and fresh.get("gpu") and fresh != facts:
                # The host changed since the cached facts: decide again from what it reports now.
                if any(fresh.get(name) != facts.get(name) for name in OS_FACTS):
                    now = ", ".join(str(fresh.get(name)) for name in OS_FACTS)
                    raise HostComplianceError("its OS changed since the cached facts (now %s); run drift again, "
                                              "which reads the new OS's role data" % now)
                state = self._declared_state(args, task_vars, fresh)
                checked = self._evaluate(args, task_vars, state, confirm=False)
                calls = 2
        except AnsibleConnectionFailure:
            raise  # an unreachable host, which Ansible reports as such
        except (HostComplianceError, ManagedStateError, AnsibleError) as error:
            result.update(failed=True, msg="host %s: %s" % (host, to_text(getattr(error, "message", None) or error)))
            return result
        if checked.get("failed"):
            result.update(checked)
            return result
        gpu_results = evaluate_gpu(state.gpu_expect, fresh.get("gpu") or {}) if state.gpu_expect else []
        results = checked["results"] + gpu_results
        result.update(changed=False, results=results, summary=summarize(results), gpu=fresh.get("gpu"),
                      decision=state.decision, module_calls=calls)
        if read_again:
            result["ansible_facts"] = read_again
        return result

    def _evaluate(self, args, task_vars, state, confirm):
        """One node_compliance call; ``confirm`` also reads the facts again, to compare with those decided from."""
        module_args = {"items": state.items, "timeout": args["timeout"]}
        if confirm:
            module_args["facts"] = True
            if args["gpu_sources"] is not None:  # else gpu_facts' default
                module_args["gpu_sources"] = args["gpu_sources"]
        return self._execute_module(
            module_name="rocm_fleet.core.node_compliance", module_args=module_args, task_vars=task_vars
        )

    def _declared_state(self, args, task_vars, facts):
        """The decision, every role's items and the GPU class expectations, without the skipped checks."""
        variables = dict(task_vars, ansible_facts=dict(task_vars.get("ansible_facts") or {}, **facts))
        templar = self._templar.copy_with_new_env(available_variables=variables)
        inputs = self._variable(templar, variables, "preflight_decision_inputs")
        catalog, matrix = preflight_data(inputs.get("gpu_catalog_extra"), inputs.get("support_matrix_extra"))
        outcome = decide(variables["ansible_facts"], inputs, catalog, matrix)
        decision = outcome["decision"]
        # As preflight's set_fact would: the roles' defaults read the decision.
        variables["preflight_decision"] = decision
        templar = self._templar.copy_with_new_env(available_variables=variables)
        # The roles' own validation, on the values a provisioning run would give them.
        specs = read_specs()
        roles = ["preflight"] + args["roles"]
        templated, problems = templated_options(templar, variables, specs, roles)
        problems += role_variable_problems(templated, specs, roles=roles, known=role_results())
        if problems or outcome["problems"]:
            raise HostComplianceError("; ".join(problems + outcome["problems"]))
        skipped = set(args["skip_checks"])
        items = []
        for role in args["roles"]:
            for obj in self._variable(templar, variables, "__%s_objects" % role):
                items.extend(self._with_content(templar, variables, item, obj)
                             for item in compliance_items([obj]) if item["id"] not in skipped)
        # The compliance role's inputs of the GPU class checks, templated with the decision as the roles see it.
        gpu_inputs = self._variable(templar, variables, GPU_INPUTS) if GPU_INPUTS in variables else {}
        gpu_expect = gpu_expectations(decision, catalog, matrix, **gpu_inputs)
        gpu_expect = dict((key, value) for key, value in gpu_expect.items()
                          if key not in GPU_CHECKS or GPU_CHECKS[key][0] not in skipped)
        return DeclaredState(decision, items, gpu_expect)

    @staticmethod
    def _variable(templar, variables, name):
        if name not in variables:
            raise HostComplianceError("%s is not defined: the compliance role reads it from the role that defines it"
                                      % name)
        return templar.template(variables[name])

    def _with_content(self, templar, variables, item, obj):
        """A file item's expected content, rendered from its template as ansible.builtin.template writes it."""
        if item["expect"].pop("template", None) is None:
            return item
        lookup = lookup_loader.get("ansible.builtin.template", loader=self._loader, templar=templar)
        # The template action's variables, with the object as the loop item its task gives it.
        template_vars = dict(variables, item=obj)
        template_vars.pop("vars", None)  # the play's whole variable set again: costly to copy, read by no template
        item["expect"]["content"] = to_text(lookup.run([obj["template_path"]], variables=template_vars)[0])
        return item


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
