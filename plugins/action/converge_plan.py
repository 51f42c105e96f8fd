# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""converge_plan: which provisioning roles a converge must run on a host, in one module call
(docs: plugins/modules/converge_plan.py).

The declared state as host_compliance renders it (the same decision, the same role variables and templates), each
object turned into the items that prove it as its tasks would leave it (managed_state.converge_items, as
managed_check proves them), plus the paths each role's ``__<role>_converge.absent`` names. One node_compliance call
evaluates them; plugin_utils.roles.converge_plan decides which roles run.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleConnectionFailure, AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase

from ansible_collections.rocm_fleet.core.plugins.action.host_compliance import (
    ROLES,
    ActionModule as HostComplianceAction,
    HostComplianceError,
    _decision_inputs,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.compliance.gpu_class import evaluate_gpu_items
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.converge_plan import plan
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import (
    ManagedStateError,
    compliance_items,
    converge_items,
)

ARGUMENT_SPEC = {
    "roles": {"type": "list", "elements": "str", "default": ROLES},
    "timeout": {"type": "int", "default": 30},
}


class ActionModule(HostComplianceAction):
    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = ActionBase.run(self, tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        args.update(skip_checks=[])
        host = task_vars.get("inventory_hostname")
        try:
            facts = _decision_inputs(task_vars.get("ansible_facts"))
            if "os_family" not in facts or "gpu" not in facts:
                raise HostComplianceError("no GPU and OS facts: run rocm_fleet.core.gpu_facts host_facts=true first")
            state = self._declared_state(args, task_vars, facts)
            items = state.items + [_absent_item(role, path) for role, converge in state.extras.items()
                                   for path in converge["absent"]]
            checked = self._execute_module(module_name="rocm_fleet.core.node_compliance",
                                           module_args={"items": items, "timeout": args["timeout"]},
                                           task_vars=task_vars)
        except AnsibleConnectionFailure:
            raise  # an unreachable host, which Ansible reports as such
        except (HostComplianceError, ManagedStateError, AnsibleError) as error:
            result.update(failed=True, msg="host %s: %s" % (host, to_text(getattr(error, "message", None) or error)))
            return result
        if checked.get("failed"):
            result.update(failed=True, msg="host %s: the managed objects could not be checked: %s"
                          % (host, checked.get("msg")))
            return result
        results = checked.get("results") or []
        if len(results) != len(items):  # not one result per item: it proves nothing, so every role runs
            results = [dict(item, status="unknown", message="no result") for item in items]
        results = results + evaluate_gpu_items(state.gpu_items, facts.get("gpu") or {})
        unproven = dict((role, converge["unproven"]) for role, converge in state.extras.items())
        decided = plan(args["roles"], results, unproven)
        result.update(changed=False, roles=decided["run"], proven=decided["proven"], reasons=decided["reasons"],
                      module_calls=1)
        return result

    @staticmethod
    def _items_of(obj):
        """What proves the object as its tasks would leave it; a kind no apply task writes, as drift checks it."""
        return converge_items(obj) or compliance_items([obj])

    def _extras(self, templar, variables, args):
        """Each role's ``__<role>_converge``: {absent: [paths], unproven: [reasons]}."""
        extras = {}
        for role in args["roles"]:
            converge = self._variable(templar, variables, "__%s_converge" % role)
            if not isinstance(converge, dict):
                raise HostComplianceError("__%s_converge must be a mapping with absent and unproven, got %r"
                                          % (role, converge))
            extras[role] = {"absent": list(converge.get("absent") or []),
                            "unproven": [to_text(reason) for reason in converge.get("unproven") or [] if reason]}
        return extras


def _absent_item(role, path):
    """An item that passes while ``path`` does not exist (a marker the role's tasks read)."""
    return {"id": "converge:%s" % role, "title": "nothing at %s for the role's tasks to read" % path,
            "kind": "file", "role": "rocm_fleet.core.%s" % role, "label": path, "repair": None,
            "expect": {"path": path, "state": "absent"}}
