# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""managed_check: which of a role's managed objects differ from the host, in one module call
(docs: plugins/modules/managed_check.py).

On the controller: each object the common role's apply tasks write becomes the node_compliance items that
prove it as its task would leave it (plugin_utils.roles.managed_state.converge_items), a file's content
rendered from its template as the template task renders it (plugin_utils.roles.templates). One
node_compliance call evaluates them on the host; an object whose every item passes is left out, so the apply
tasks loop over only what they would change. Anything not proven (a failed, unknown or unreadable item) is
applied: the task, not this check, has the last word on every object it is given.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleConnectionFailure, AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import (
    ManagedStateError,
    converge_items,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.templates import rendered_content

ARGUMENT_SPEC = {
    "objects": {"type": "list", "elements": "dict", "required": True},
    "timeout": {"type": "int", "default": 30},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        host = task_vars.get("inventory_hostname")
        objects = args["objects"]
        items, owners, applied = [], [], []
        try:
            for index, obj in enumerate(objects):
                proof = converge_items(obj)
                if proof is None:
                    continue
                applied.append(index)
                for item in proof:
                    if item["expect"].pop("template", None) is not None:
                        item["expect"]["content"] = rendered_content(self._loader, self._templar, task_vars, obj)
                    items.append(item)
                    owners.append(index)
        except (KeyError, ManagedStateError, AnsibleError) as error:
            result.update(failed=True, msg="host %s: managed objects: %s" % (
                host, to_text(getattr(error, "message", None) or error)))
            return result
        differ = set(applied) - set(owners)  # an applied object without a proof: its task decides
        if items:
            try:
                checked = self._execute_module(
                    module_name="rocm_fleet.core.node_compliance",
                    module_args={"items": items, "timeout": args["timeout"]},
                    task_vars=task_vars,
                )
            except AnsibleConnectionFailure:
                raise  # an unreachable host, which Ansible reports as such
            if checked.get("failed"):
                result.update(failed=True, msg="host %s: managed objects not checked: %s" % (host, checked.get("msg")))
                return result
            statuses = [entry.get("status") for entry in checked.get("results", [])]
            if len(statuses) != len(items):
                statuses = [None] * len(items)  # not one result per item: it proves nothing
            differ.update(owners[position] for position, status in enumerate(statuses) if status != "pass")
        result.update(
            changed=False,
            objects=[objects[index] for index in sorted(differ)],
            checked=len(applied),
            differ=[objects[index].get("label") for index in sorted(differ)],
            module_calls=1 if items else 0,
        )
        return result
