# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""pull_archive: the pull role's archives of the wheels and the inventory copy (docs: plugins/modules/pull_archive.py).

Runs on the controller only, once for the play's batch (run_once); plugin_utils.pull.archive builds each
distinct archive once. They are written 0600 in a directory of this run's own local temporary directory
(ansible's local_tmp, 0700, removed when the run ends), so no copy of the inventory outlives the run or is
readable by another user. In check mode nothing is written: only the digests are computed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile

from ansible import constants as C
from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.pull import archive

ARGUMENT_SPEC = {
    "hosts": {
        "type": "list",
        "elements": "dict",
        "required": True,
        "options": {
            "host": {"type": "str", "required": True},
            "python": {"type": "str", "required": True},
            "wheels": {"type": "str", "required": True},
            "inventory": {"type": "str", "default": ""},
        },
    },
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    def _controller_path(self, path):
        """``path`` as the copy action found it: absolute, else in the role's or playbook's files, else as given."""
        path = os.path.expanduser(path)
        if not path or os.path.isabs(path):
            return path
        try:
            return self._find_needle("files", path)
        except AnsibleError:
            return path

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        hosts = [dict(entry, wheels=self._controller_path(entry["wheels"]),
                      inventory=self._controller_path(entry["inventory"])) for entry in args["hosts"]]
        directory = None
        if not self._task.check_mode:
            directory = tempfile.mkdtemp(prefix="rocm-fleet-pull-", dir=C.DEFAULT_LOCAL_TMP)
        try:
            archives = archive.build_for_hosts(hosts, directory)
        except archive.ArchiveError as error:
            return dict(result, failed=True, changed=False, msg=str(error))
        built = len({entry["digest"] for entry in archives.values()})
        # Nothing changes on the hosts; the archives are the run's temporary files.
        result.update(changed=False, archives=archives,
                      msg="%d archive%s for %d host%s%s" % (built, "" if built == 1 else "s", len(archives),
                                                            "" if len(archives) == 1 else "s",
                                                            " (check mode: digests only)" if directory is None else ""))
        return result
