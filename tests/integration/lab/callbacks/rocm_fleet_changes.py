"""Test-only callback: writes {"changed": {host: [task]}, "objects": {host: [label]}, "failed": {host: [failure]}}
to $ROCM_FLEET_CHANGES_LOG.

``changed`` names each changed task as Ansible prints it (``role : task [item]``);
``objects`` what the run prints for each change: the loop label (a managed
object's label, which is what drift names a change by), else the task. Handlers are left out: what they do
(regenerate grub.cfg, leave a reboot marker) follows from a change and is no
managed object of its own; so is the common role's task that notifies them.
"""

from __future__ import annotations

import json
import os

from ansible.playbook.handler import Handler
from ansible.plugins.callback import CallbackBase

# roles/common/tasks/objects.yml: notifies the handlers of the objects that changed, one item per handler.
NOTIFY_TASK = "Notify the handlers of the changed managed objects"

DOCUMENTATION = """
name: rocm_fleet_changes
type: aggregate
short_description: Record which tasks reported a change on which host
description: Test helper of rocm-fleet's lab tests.
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "rocm_fleet_changes"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.changed: dict[str, list[str]] = {}
        self.objects: dict[str, list[str]] = {}
        self.failed: dict[str, list[dict]] = {}

    def _record(self, result):
        if isinstance(result._task, Handler) or result._task.name == NOTIFY_TASK:
            return
        if result._result.get("changed"):
            name = result._task.get_name()
            item = result._result.get("_ansible_item_label", result._result.get("item"))
            label = f"{name} [{item}]" if item is not None and not isinstance(item, dict) else name
            self.changed.setdefault(result._host.get_name(), []).append(label)
            # What the run prints for the change: the loop label, else the task.
            printed = result._result.get("_ansible_item_label")
            self.objects.setdefault(result._host.get_name(), []).append(printed if isinstance(printed, str) else name)

    def v2_runner_on_ok(self, result):
        # A loop's summary: its items were recorded one by one. Not a task's own "results" (dnf returns one).
        if not (result._task.loop or result._task.loop_with):
            self._record(result)

    def v2_runner_item_on_ok(self, result):
        self._record(result)

    def _record_failure(self, result):
        if result._result.get("ignore_errors") or result._task.ignore_errors:
            return
        details = result._result
        text = "\n".join(str(details.get(key) or "") for key in ("msg", "stderr", "stdout") if details.get(key))
        self.failed.setdefault(result._host.get_name(), []).append({"task": result._task.get_name(), "message": text})

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if not ignore_errors and not (result._task.loop or result._task.loop_with):
            self._record_failure(result)

    def v2_runner_item_on_failed(self, result):
        self._record_failure(result)

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get("ROCM_FLEET_CHANGES_LOG")
        if path:
            with open(path, "w") as handle:
                recorded = {"changed": self.changed, "objects": self.objects, "failed": self.failed}
                json.dump(recorded, handle, indent=1, sort_keys=True)
