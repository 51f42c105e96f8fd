# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""role_variables: a host's role variables against the roles' argument specs (docs: plugins/modules/role_variables.py).

Runs on the controller only; the check itself is plugin_utils.roles.variables'
role_variable_problems, so every role's preflight and the preflight role judge
variables by one definition.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles import variables as role_variables

ARGUMENT_SPEC = {"roles": {"type": "list", "elements": "str"}, "values": {"type": "bool", "default": True}}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        host = task_vars.get("inventory_hostname")
        try:
            result = super(ActionModule, self).run(tmp, task_vars)
            del tmp
            _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
            specs = role_variables.read_specs()
            roles = role_variables.checked_roles(specs, args["roles"])
            # Only the values that are checked are templated: the rest count by name. Without values, those
            # that cannot be templated yet (they read preflight_decision) wait for their role's own check.
            variables, problems = role_variables.templated_options(self._templar, task_vars, specs, roles,
                                                                   skip_untemplatable=not args["values"])
            known = role_variables.role_results()
            problems.extend(role_variables.role_variable_problems(variables, specs, roles=roles, known=known,
                                                                  values=args["values"]))
        except Exception as error:  # an operator's run shows a message, never a traceback
            message = role_variables.error_message(error)
            return {"failed": True, "changed": False, "msg": "host %s: %s" % (host, message)}
        result["changed"] = False
        if problems:
            result.update(failed=True, msg="host %s: %s" % (host, "; ".join(problems)))
        else:
            result["msg"] = "the variables of roles %s fit their argument specs" % ", ".join(roles)
        return result
