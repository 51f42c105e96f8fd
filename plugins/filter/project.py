# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a run of one of the collection's playbooks belongs, checked out or installed.

* project_dir: the directory results and reports go under: the checkout's top (the parent of playbooks/), or,
  for a playbook of an installed collection (rocm_fleet.core.onboard), the directory the command ran from, never
  the collections path.
* runnable_name: how to name the playbook again in a command the run prints (playbooks/upgrade.yml, or
  rocm_fleet.core.upgrade when installed).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text

COLLECTION = "rocm_fleet.core"


def installed(playbook_dir):
    """Whether ``playbook_dir`` lies in a collections path (an installed collection, run by FQCN)."""
    return "ansible_collections" in os.path.normpath(playbook_dir).split(os.sep)


def project_dir_of(playbook_dir, cwd):
    if installed(playbook_dir):
        return cwd
    playbook_dir = os.path.normpath(playbook_dir)
    return os.path.dirname(playbook_dir) if os.path.basename(playbook_dir) == "playbooks" else playbook_dir


def runnable_name_of(playbook_dir, name, cwd):
    if installed(playbook_dir):
        return "%s.%s" % (COLLECTION, name)
    path = os.path.join(os.path.normpath(playbook_dir), name + ".yml")
    relative = os.path.relpath(path, cwd)
    return path if relative.startswith(os.pardir) else relative


def _text(value, what):
    if not isinstance(value, str) or not value:
        raise AnsibleFilterError("%s must be a non-empty path or name, got %r" % (what, value))
    return to_text(value)


def project_dir(playbook_dir):
    return project_dir_of(_text(playbook_dir, "playbook_dir"), os.getcwd())


def runnable_name(playbook_dir, name):
    return runnable_name_of(_text(playbook_dir, "playbook_dir"), _text(name, "the playbook name"), os.getcwd())


class FilterModule(object):
    def filters(self):
        return {"project_dir": project_dir, "runnable_name": runnable_name}
