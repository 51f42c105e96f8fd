# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which prerequisite repositories a RHEL-family host lacks, from ``dnf repolist --enabled``.

AMD's RHEL and Oracle Linux instructions need EPEL and the CodeReady Linux
Builder repository; each distribution names them differently, so the role's
OS data gives a pattern per repository and this reads the repository ids.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re


def enabled_repo_ids(repolist):
    """Repository ids of ``dnf repolist --enabled`` (dnf 4 and dnf 5): the first word of each row, no header."""
    ids = []
    for line in str(repolist or "").splitlines():
        words = line.split()
        if not words or (words[0].lower() == "repo" and len(words) > 1 and words[1].lower() == "id"):
            continue
        ids.append(words[0].lstrip("*!"))
    return ids


def enable_command(item):
    """How an operator enables the repository ``item`` by hand: its release package, RHSM id or dnf id."""
    if "package" in item:
        return "dnf install %s" % item["package"]
    if "rhsm" in item:
        return "subscription-manager repos --enable %s" % item["rhsm"]
    return "dnf config-manager --set-enabled %s" % item["config_manager"]


def missing_repositories(repolist, wanted):
    """The items of ``wanted`` ({name, match: regex of the repository id, ...}) no enabled repository matches,
    each with ``how``: its name and the command that enables it by hand."""
    ids = enabled_repo_ids(repolist)
    missing = []
    for item in wanted or []:
        pattern = re.compile(str(item["match"]))
        if not any(pattern.search(repo_id) for repo_id in ids):
            missing.append(dict(item, how="%s: %s" % (item["name"], enable_command(item))))
    return missing
