#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: package_locks
short_description: Read the package holds and version locks a host keeps
version_added: 0.1.0
description:
  - Reads apt's holds (dpkg's C(hold) selection, as C(apt-mark hold) sets it) from C(/var/lib/dpkg/status), or the
    entries of dnf's versionlock plugin (C(dnf versionlock add)) from the list its
    C(/etc/dnf/plugins/versionlock.conf) names, where the plugin is configured and enabled and C(dnf.conf) leaves
    plugins on, or zypper's package locks (C(zypper addlock)) from libzypp's C(/etc/zypp/locks) where C(zypp.conf)
    applies it.
  - The packages role reads them before any change and fails a host where one would block the run
    (C(plugins/plugin_utils/decision/package_locks.py) decides).
  - Changes nothing; runs no command.
author:
  - rocm-fleet maintainers (@rocm-fleet)
options:
  manager:
    description: The host's package manager.
    type: str
    required: true
    choices: [apt, dnf, zypper]
  root:
    description: The root the files are read under.
    type: path
    default: /
"""

EXAMPLES = r"""
- name: Read the package holds and version locks
  rocm_fleet.core.package_locks:
    manager: apt
  register: held
"""

RETURN = r"""
locks:
  description:
    - One entry per hold or versionlock entry. C(kind) is C(hold) (apt), C(lock) or C(exclude) (a versionlock entry
      with C(!)), or C(zypper). C(version) is the held package's installed version, the entry's
      C(EPOCH:VERSION-RELEASE), or a zypper lock's constraint as written (C(< 6.14)); null where a hold is on a
      package not installed or an entry names no version. C(name) may be a glob (dnf, zypper).
  returned: success
  type: list
  elements: dict
  sample: [{name: amdgpu-dkms, version: "1:6.16.13.30300300-2327507.22.04", installed: true, kind: hold}]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.package_locks import read_locks


def main():
    module = AnsibleModule(
        argument_spec=dict(
            manager=dict(type="str", required=True, choices=["apt", "dnf", "zypper"]),
            root=dict(type="path", default="/"),
        ),
        supports_check_mode=True,
    )
    try:
        locks = read_locks(module.params["manager"], module.params["root"])
    except Exception as error:  # a reader bug must name itself, never a traceback
        module.fail_json(msg="reading the package locks failed: %s: %s" % (type(error).__name__, error))
    module.exit_json(changed=False, locks=locks)


if __name__ == "__main__":
    main()
