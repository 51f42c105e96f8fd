"""A managed host for action plugin tests: the real node_compliance evaluator over a temporary root.

Stands in for ``ActionBase._execute_module`` in the tests of the actions that prove managed objects in one
node_compliance call (managed_check, converge_plan): every check is the one a host runs, only the transport is gone.
"""

from __future__ import annotations

import copy

from ansible.errors import AnsibleConnectionFailure
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.evaluate import evaluate


class Host:
    """node_compliance on a root of its own: the real checks, the arguments of each call kept.

    ``failed``: the module's failure message instead; ``unreachable``: the connection fails; ``truncate``: one
    result too few (a module that does not answer item for item).
    """

    def __init__(self, root, failed=None, unreachable=False, truncate=False):
        self.root, self.failed, self.unreachable, self.truncate, self.calls = root, failed, unreachable, truncate, []

    def __call__(self, module_name, module_args, task_vars):
        self.calls.append((module_name, copy.deepcopy(module_args)))
        if self.unreachable:
            raise AnsibleConnectionFailure("ssh: connect to host 127.0.0.1 port 2207: Connection refused")
        if self.failed:
            return {"failed": True, "msg": self.failed}
        results, summary = evaluate(module_args["items"], str(self.root))
        return {"changed": False, "results": results[:-1] if self.truncate else results, "summary": summary}
