# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_compliance: one host's whole compliance in one task (docs: plugins/modules/host_compliance.py).

The play gives this task every role's variables as a provisioning play gives
them (roles/compliance/tasks/main.yml imports each role's vars entry point), so
Ansible, not this file, decides their precedence. Here, on the controller:
preflight's decision (plugin_utils.decision.preflight, the function provisioning's
filter calls), each role's managed objects (the ``__<role>_objects`` its tasks
loop over) turned into node_compliance items, and the GPU class checks against
the gpu fact. One node_compliance call evaluates the items on the host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleConnectionFailure, AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.evaluate import (
    findings_only,
    gpu_brief,
    summarize,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.compliance.gpu_class import (
    GPU_CHECKS,
    evaluate_gpu,
    evaluate_gpu_items,
    with_partition_repairs,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.health import one_cause_once
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import SOURCES
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.facts import DIGEST_FACT, DIGEST_FACTS, HOST_FACTS
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import (
    GPU_ITEM_KINDS,
    ManagedStateError,
    compliance_items,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.preflight import decide, gpu_expectations
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.health_expectations import health_expectations
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.compliance import declared_state_cache
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed import os_vars_files
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.templates import rendered_content
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.data import firmware_minimums, preflight_data
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.variables import (
    read_specs,
    role_results,
    role_variable_problems,
    templated_options,
)

ROLES = ["repo", "packages", "kernel", "partitions", "access", "environment"]
# Everything a role's objects may read from ansible_facts: what gpu_facts and node_compliance gather.
DECISION_FACTS = ("gpu",) + HOST_FACTS
GPU_INPUTS = "__compliance_gpu_inputs"
HEALTH_INPUTS = "__compliance_health_inputs"
ARGUMENT_SPEC = {
    "roles": {"type": "list", "elements": "str", "default": ROLES},
    "gpu_sources": {"type": "list", "elements": "str", "choices": list(SOURCES)},
    "facts_fresh": {"type": "bool", "default": False},
    "skip_checks": {"type": "list", "elements": "str", "default": []},
    "timeout": {"type": "int", "default": 30},
    "state_cache": {"type": "path"},
    "state_key": {"type": "str", "default": ""},
    "state_cache_max_age": {"type": "int", "default": 7 * 24 * 3600},
    "detail": {"type": "str", "choices": ["all", "findings"], "default": "all"},
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
            state = self._cached_state(args, task_vars, facts)
            digest = _fact(task_vars.get("ansible_facts"), DIGEST_FACT)
            checked = self._evaluate(args, task_vars, state, confirm=not args["facts_fresh"], digest=digest)
            # The facts the confirming call read: the fact cache keeps them for the next run.
            read_again = checked.get("ansible_facts") if not args["facts_fresh"] else None
            fresh = _decision_inputs(read_again) if read_again else facts
            if read_again and digest and _fact(read_again, DIGEST_FACT) == digest:
                # Their sources unchanged, the call left out the facts read from them: the cached ones hold.
                fresh = dict(dict((name, facts[name]) for name in DIGEST_FACTS if name in facts), **fresh)
            calls = 1
            facts_changed = bool(read_again) and fresh != facts
            if facts_changed and fresh.get("gpu"):
                # The host changed since the cached facts (a GPU, a kernel, its OS reinstalled): decide again
                # from what it reports now, the new OS's role data included.
                state = self._declared_state(args, task_vars, fresh, injected=facts)
                checked = self._evaluate(args, task_vars, state, confirm=False)
                calls = 2
        except AnsibleConnectionFailure:
            raise  # an unreachable host, which Ansible reports as such
        except (HostComplianceError, ManagedStateError, AnsibleError) as error:
            result.update(failed=True, msg="host %s: %s" % (host, to_text(getattr(error, "message", None) or error)))
            return result
        if checked.get("failed"):
            result.update(checked)
            result.pop("invocation", None)  # the items echoed back, file contents included: weight for nothing
            return result
        gpu_results = evaluate_gpu(state.gpu_expect, fresh.get("gpu") or {}) if state.gpu_expect else []
        # The roles' items checked against the same gpu fact (partition modes, ROCM-GPU-005), with their labels.
        gpu_results = with_partition_repairs(gpu_results + evaluate_gpu_items(state.gpu_items, fresh.get("gpu") or {}))
        results = one_cause_once(checked["results"] + gpu_results)
        result.update(changed=False, results=results, summary=summarize(results), gpu=fresh.get("gpu"),
                      module_calls=calls)
        if args["detail"] == "findings":  # what a fleet's drift report keeps (the option's documentation)
            result.update(results=findings_only(results), gpu=gpu_brief(result["gpu"]))
        else:
            result["decision"] = state.decision
        if facts_changed:
            # The fact cache keeps what the host reports now. Facts that still hold are not sent again: each
            # would be copied, cleaned and written once more by Ansible's single main process.
            result["ansible_facts"] = read_again
        return result

    def _evaluate(self, args, task_vars, state, confirm, digest=None):
        """One node_compliance call; ``confirm`` also reads the facts again, to compare with those decided from."""
        module_args = {"items": state.items, "timeout": args["timeout"]}
        if state.health is not None:  # the health checks, read in this same call
            module_args["health"] = state.health
        if confirm:
            module_args["facts"] = True
            if digest:  # the distribution and processor facts are read again only where their sources changed
                module_args["host_facts_digest"] = digest
            if args["gpu_sources"] is not None:  # else gpu_facts' default
                module_args["gpu_sources"] = args["gpu_sources"]
        if args["detail"] == "findings":  # folded on the host: less to serialize, send and parse
            module_args["detail"] = "findings"
        return self._execute_module(
            module_name="rocm_fleet.core.node_compliance", module_args=module_args, task_vars=task_vars
        )

    def _cached_state(self, args, task_vars, facts):
        """The declared state from the cache (plugin_utils.compliance.declared_state_cache), inputs unchanged."""
        if not args["state_cache"]:
            return self._declared_state(args, task_vars, facts)
        host = task_vars.get("inventory_hostname")
        options = dict((name, args[name]) for name in ("roles", "skip_checks"))
        key = declared_state_cache.state_key(args["state_key"], host, task_vars, options)
        stored = declared_state_cache.load(args["state_cache"], host, key, args["state_cache_max_age"])
        if stored is not None:
            return DeclaredState(**stored)
        state = self._declared_state(args, task_vars, facts)
        try:
            declared_state_cache.store(args["state_cache"], host, key, state.as_data())
        except (OSError, TypeError, ValueError) as error:  # not written (or not JSON): the check stands, rendered
            self._display.warning("host %s: cannot keep its declared state in %s: %s"
                                  % (host, args["state_cache"], to_text(error)))
        return state

    def _declared_state(self, args, task_vars, facts, injected=None):
        """The decision, every role's items and the GPU class expectations, without the skipped checks."""
        variables = _with_facts(task_vars, facts, injected)
        # Each role's OS data (vars/<family>.yml, <distribution>.yml; internals only), as its tasks/os_vars.yml
        # includes them: from the files the same function names, above the inventory and the roles' vars.
        for role in args["roles"]:
            for path in os_vars_files(role, variables["ansible_facts"]):
                variables.update(self._loader.load_from_file(path, cache="all", trusted_as_template=True) or {})
        templar = self._templar.copy_with_new_env(available_variables=variables)
        inputs = self._variable(templar, variables, "preflight_decision_inputs")
        catalog, matrix, drivers = preflight_data(inputs.get("gpu_catalog_extra"), inputs.get("support_matrix_extra"),
                                                  inputs.get("amdgpu_drivers_extra"))
        outcome = decide(variables["ansible_facts"], inputs, catalog, matrix, drivers)
        decision = outcome["decision"]
        # As preflight's set_fact would: the roles' defaults read the decision.
        variables["preflight_decision"] = decision
        templar = self._templar.copy_with_new_env(available_variables=variables)
        # The roles' own validation, on the values a provisioning run would give them.
        specs = read_specs()
        roles = ["preflight", "compliance"] + args["roles"]
        templated, problems = templated_options(templar, variables, specs, roles)
        problems += role_variable_problems(templated, specs, roles=roles, known=role_results())
        if problems or outcome["problems"]:
            raise HostComplianceError("; ".join(problems + outcome["problems"]))
        skipped = set(args["skip_checks"])
        items = []
        for role in args["roles"]:
            for obj in self._variable(templar, variables, "__%s_objects" % role):
                items.extend(self._with_content(templar, variables, item, obj)
                             for item in self._items_of(obj) if item["id"] not in skipped)
        # The compliance role's inputs of the GPU class checks, templated with the decision as the roles see it.
        gpu_inputs = self._variable(templar, variables, GPU_INPUTS) if GPU_INPUTS in variables else {}
        gpu_expect = gpu_expectations(decision, catalog, matrix, **gpu_inputs)
        gpu_expect = dict((key, value) for key, value in gpu_expect.items()
                          if key not in GPU_CHECKS or GPU_CHECKS[key][0] not in skipped)
        gpu_items = [item for item in items if item["kind"] in GPU_ITEM_KINDS]
        items = [item for item in items if item["kind"] not in GPU_ITEM_KINDS]
        # The health checks' expectations, from the same decision and data; evaluated in the same module call.
        health_inputs = self._variable(templar, variables, HEALTH_INPUTS) if HEALTH_INPUTS in variables else {}
        health = health_expectations(decision, catalog, firmware_minimums(),
                                     health_inputs.get("ce_threshold", 0),
                                     amdgpu_from_amd=gpu_inputs.get("amdgpu_from_amd", True),
                                     expected_gpu_count=gpu_inputs.get("expected_gpu_count"), skip=skipped)
        state = DeclaredState(decision, items, gpu_expect, health, gpu_items)
        state.extras = self._extras(templar, variables, args)
        return state

    @staticmethod
    def _items_of(obj):
        """The node_compliance items of one managed object: what drift evaluates."""
        return compliance_items([obj])

    def _extras(self, templar, variables, args):
        """What a subclass reads besides the declared state, with the same variables (none here)."""
        return None

    @staticmethod
    def _variable(templar, variables, name):
        if name not in variables:
            raise HostComplianceError("%s is not defined: the compliance role reads it from the role that defines it"
                                      % name)
        return templar.template(variables[name])

    def _with_content(self, templar, variables, item, obj):
        """A file item's expected content, rendered from its template (plugin_utils.roles.templates)."""
        if item["expect"].pop("template", None) is None:
            return item
        item["expect"]["content"] = rendered_content(self._loader, templar, variables, obj)
        return item


class DeclaredState:
    """What a host should be: preflight's decision, the roles' items and the GPU class expectations."""

    def __init__(self, decision, items, gpu_expect, health=None, gpu_items=()):
        self.decision, self.items, self.gpu_expect, self.health = decision, items, gpu_expect, health
        self.gpu_items = list(gpu_items)
        self.extras = None  # what a subclass read with the same variables; never cached

    def as_data(self):
        """The keyword arguments that make it again (JSON data: the declared-state cache keeps them)."""
        return {"decision": self.decision, "items": self.items, "gpu_expect": self.gpu_expect,
                "health": self.health, "gpu_items": self.gpu_items}


def _key(facts, name):
    """The key ``name`` has in ansible_facts: as playbooks read it, or as modules return it (``ansible_``
    prefixed); None where it has neither."""
    for key in (name, "ansible_" + name):
        if key in facts:
            return key
    return None


def _fact(facts, name):
    facts = facts or {}
    key = _key(facts, name)
    return facts[key] if key else None


def _with_facts(task_vars, facts, injected=None):
    """``task_vars`` with ``facts`` in ansible_facts. ``injected``: the facts the play's variables were made
    from, where ``facts`` are newer; their ``ansible_<name>`` variables (INJECT_FACTS_AS_VARS) take the newer
    values too, so a role reading either name sees the host as it is now."""
    variables = dict(task_vars, ansible_facts=dict(task_vars.get("ansible_facts") or {}, **facts))
    for name in injected or ():
        if "ansible_" + name in variables:
            variables["ansible_" + name] = facts.get(name)
    return variables


def _decision_inputs(facts):
    """The facts the declared state is rendered from, by their names under ansible_facts."""
    facts = facts or {}
    return dict((name, facts[key]) for name, key in ((name, _key(facts, name)) for name in DECISION_FACTS) if key)
