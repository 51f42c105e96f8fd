# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host's own 70-uaccess.rules with AMD render nodes left out: no seat user gets an ACL on them.

systemd's ``70-uaccess.rules`` tags every render node ``uaccess``; ``73-seat-late.rules``
then runs the ``uaccess`` builtin, which gives the seat's user an ACL on the node, and
logind grants it again at each session switch by that tag. A later rule cannot undo
it: ``TAG-=`` clears CURRENT_TAGS only, TAGS stays (tags are sticky) and the seat rules
match on it. So the tag must never be added: ``/etc/udev/rules.d/70-uaccess.rules``
masks the distribution's file of the same name with a copy that jumps to its end for
AMD render nodes before its first rule. The copy is derived from the host's own file,
so a distribution update that changes it shows as drift and the access role derives
it again. The access role (provisioning) and node_compliance (drift) both call
``masked_uaccess_rules``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# The distribution's file: systemd packages put it under /usr/lib (merged-/usr) or /lib.
SOURCES = ("/usr/lib/udev/rules.d/70-uaccess.rules", "/lib/udev/rules.d/70-uaccess.rules")
# The same name in /etc hides the distribution's file from udev.
MASK_PATH = "/etc/udev/rules.d/70-uaccess.rules"
END_LABEL = 'LABEL="uaccess_end"'
GUARD = (
    "# rocm-fleet (access role): this file masks %(source)s and is derived from it.\n"
    "# AMD render nodes skip every uaccess rule: /dev/kfd and the render nodes are for the\n"
    "# render group (access_users), never for the seat's user. The group and mode come from\n"
    "# 70-rocm-fleet-gpu.rules. A later rule cannot take the tag back (tags are sticky).\n"
    'SUBSYSTEM=="drm", KERNEL=="renderD*", ATTRS{vendor}=="%(vendor)s", GOTO="uaccess_end"\n'
    "\n"
)
AMD_VENDOR = "0x1002"


class UaccessRulesError(ValueError):
    """The distribution's file cannot be masked safely; the message says what to do."""


def masked_uaccess_rules(text, source=SOURCES[0], vendor=AMD_VENDOR):
    """``text`` (the distribution's 70-uaccess.rules) with the guard inserted before its first rule.

    The guard goes after the leading comments and blank lines, so it runs before any
    rule of the file. Raises UaccessRulesError when the file has no ``LABEL="uaccess_end"``
    (the guard's target): a file of another shape needs a person to look at it.
    """
    if not isinstance(text, str):
        raise UaccessRulesError("%s: expected the file's text, got %s" % (source, type(text).__name__))
    lines = text.splitlines(True)
    if not any(line.strip() == END_LABEL for line in lines):
        raise UaccessRulesError(
            "%s has no line %s, so AMD render nodes cannot be made to skip its uaccess rules; "
            "check what the distribution's file does now and adapt the access role "
            "(or set access_udev_rules: false and keep seat users off the GPUs another way)" % (source, END_LABEL))
    first_rule = next((index for index, line in enumerate(lines)
                       if line.strip() and not line.lstrip().startswith("#")), len(lines))
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    guard = GUARD % {"source": source, "vendor": vendor}
    return "".join(lines[:first_rule]) + guard + "".join(lines[first_rule:])
