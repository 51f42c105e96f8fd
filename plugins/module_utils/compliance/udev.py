# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""No seat user reaches the GPUs: the uaccess rules skip AMD render nodes, and no GPU node carries an ACL.

``check_udev_uaccess`` derives the expected /etc/udev/rules.d/70-uaccess.rules from the
host's own distribution file (udev_uaccess.masked_uaccess_rules, as the access role
does), so a distribution update that changes that file is drift until site.yml derives
it again. ``check_device_acl`` finds ACL entries on the nodes: a grant the seat's user
got before the mask took effect stays until the node is created again (a reboot).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.access import device_nodes, has_acl
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import failed, passed
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.files import check_file
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.udev_uaccess import (
    UaccessRulesError,
    masked_uaccess_rules,
)


def distribution_rules(host, sources):
    """(path, text) of the first of ``sources`` on the host, or (None, None)."""
    for source in sources:
        text = host.read_text(source)
        if text is not None:
            return source, text
    return None, None


def check_udev_uaccess(expect, host):
    source, text = distribution_rules(host, expect["sources"])
    if source is None:
        return passed({"source": None}, "no %s on this host: nothing tags the GPU nodes uaccess, nothing to mask"
                      % " or ".join(expect["sources"]))
    try:
        content = masked_uaccess_rules(text, source, expect["vendor"])
    except UaccessRulesError as exc:
        return failed({"source": source}, str(exc), action="none")
    wanted = dict((key, expect[key]) for key in ("owner", "group", "mode") if expect.get(key) is not None)
    result = check_file(dict(wanted, path=expect["path"], content=content, state="present"), host)
    result["actual"] = dict(result.get("actual") or {}, source=source)
    return result


def check_device_acl(expect, host):
    nodes = device_nodes(host, expect["globs"], expect["vendor"])
    with_acl = [node for node in nodes if has_acl(host.path(node))]
    actual = {"nodes": nodes, "with_acl": with_acl}
    if with_acl:
        return failed(actual, "%s carry an ACL that may grant a user what the group and mode do not (a seat grant "
                      "from before the uaccess rules were masked)" % ", ".join(with_acl), action="update")
    return passed(actual, "no ACL on %d device node(s)" % len(nodes) if nodes else
                  "no device node matches %s" % ", ".join(expect["globs"]))


def remove_acl(full):
    """Remove the access ACL of one node (the owner, group and other bits stay); True if there was one."""
    if not has_acl(full):
        return False
    os.removexattr(full, "system.posix_acl_access", follow_symlinks=False)
    return True
