#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: device_acl
short_description: Remove the access ACL of GPU device nodes
version_added: 0.1.0
description:
  - Removes the POSIX access ACL (the C(system.posix_acl_access) attribute) of every device node matching O(globs),
    so that only the node's owner, group and mode decide who opens it.
  - systemd-logind gives the seat's user an ACL entry on every node udev tagged C(uaccess). Once the access role
    masks the uaccess rules for AMD render nodes, a grant made before stays on the node until it is created again
    (a reboot or the driver reloading); this removes it now.
  - Needs no C(setfacl) (the C(acl) package is optional on most distributions). Render nodes whose PCI vendor is not
    O(vendor) are left alone.
author:
  - rocm-fleet maintainers (@rocm-fleet)
options:
  globs:
    description: Device node paths or shell patterns.
    type: list
    elements: str
    default: [/dev/kfd, /dev/dri/renderD*]
  vendor:
    description: The PCI vendor id of the render nodes to clear; an empty string clears every match.
    type: str
    default: "0x1002"
attributes:
  check_mode:
    support: full
    description: Reports the nodes that carry an ACL and removes nothing.
  diff_mode:
    support: none
    description: No diff; RV(cleared) names the nodes.
  platform:
    support: full
    platforms: posix
    description: Linux; the nodes' file system must keep POSIX ACLs (devtmpfs does).
seealso:
  - module: rocm_fleet.core.node_compliance
"""

EXAMPLES = r"""
- name: Remove the seat user's ACL from /dev/kfd and the AMD render nodes
  rocm_fleet.core.device_acl:
"""

RETURN = r"""
cleared:
  description: The nodes whose ACL was (or, in check mode, would be) removed.
  returned: always
  type: list
  elements: str
  sample: [/dev/dri/renderD128]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.access import device_nodes, has_acl
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import HostView
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.udev import remove_acl


def main():
    module = AnsibleModule(
        argument_spec=dict(
            globs=dict(type="list", elements="str", default=["/dev/kfd", "/dev/dri/renderD*"]),
            vendor=dict(type="str", default="0x1002"),
        ),
        supports_check_mode=True,
    )
    host = HostView("/")
    cleared = []
    for node in device_nodes(host, module.params["globs"], module.params["vendor"]):
        try:
            if module.check_mode:
                if has_acl(node):
                    cleared.append(node)
            elif remove_acl(node):
                cleared.append(node)
        except OSError as exc:
            module.fail_json(msg="%s: cannot remove its ACL: %s" % (node, exc.strerror or exc), cleared=cleared)
    module.exit_json(changed=bool(cleared), cleared=cleared)


if __name__ == "__main__":
    main()
