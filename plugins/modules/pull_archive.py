#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: pull_archive
short_description: Build the pull role's archives of the wheelhouse and the inventory copy on the controller
version_added: 0.1.0
description:
  - An action that runs on the controller only; it calls no module and needs no connection to the host. The
    C(rocm_fleet.core.pull) role runs it once for the play's batch (C(run_once)), so each host's install receives
    its wheels and its inventory copy in one M(ansible.builtin.unarchive).
  - Builds one tar.gz per distinct pair of wheelhouse directory and inventory, whichever hosts share it, holding
    C(wheels/) (every C(*.whl) file of the host's Python's directory, mode 0644) and, where given, C(inventory), the
    site's inventory file or directory (files 0600, directories 0700, links followed, since it may hold secrets).
  - The same inputs give the same bytes (members sorted, mtime 0, owner root, gzip without a name or time), so the
    archive's sha256 names it and the host's stamp, and a host whose stamp names it receives nothing.
  - Writes each archive 0600 in a new directory of the run's own local temporary directory (C(local_tmp), 0700),
    which Ansible removes when the run ends. In check mode nothing is written; the digests are computed all the same.
  - Fails, naming the hosts, their Python and what to do, when a host's wheelhouse directory is missing or holds no
    pip wheel, or its inventory is neither a file nor a directory.
  - Changes nothing on the hosts.
author:
  - rocm-fleet maintainers (@rocm-fleet)
options:
  hosts:
    description:
      - What each host's archive holds. Relative paths are looked for as M(ansible.builtin.copy) looks for its
        source (the role's and the playbook's C(files/)), then taken as given.
    type: list
    elements: dict
    required: true
    suboptions:
      host:
        description: The host's inventory name.
        type: str
        required: true
      python:
        description: The host's Python version (C(3.11)), named in messages.
        type: str
        required: true
      wheels:
        description: The controller directory with the wheels of that Python (C(pull_wheelhouse/3.11)).
        type: str
        required: true
      inventory:
        description: The site's inventory on the controller, a file or a directory; empty for none (git mode).
        type: str
        default: ""
notes:
  - Used by the C(rocm_fleet.core.pull) role; the archives live only as long as the run.
seealso:
  - module: ansible.builtin.unarchive
"""

EXAMPLES = r"""
- name: Build the archives of the wheels and the inventory copy
  rocm_fleet.core.pull_archive:
    hosts: "{{ ansible_play_batch | map('extract', hostvars) | selectattr('__pull_archive_input', 'defined')
      | map(attribute='__pull_archive_input') }}"
  delegate_to: localhost
  run_once: true
  register: __pull_archives

- name: Unpack this host's archive
  ansible.builtin.unarchive:
    src: "{{ __pull_archives.archives[inventory_hostname].path }}"
    dest: /opt/rocm-fleet/pull/staging
"""

RETURN = r"""
archives:
  description:
    - Each host's archive by the host's name; hosts with the same inputs share one.
  returned: success
  type: dict
  contains:
    name:
      description: The archive's file name, from its digest.
      type: str
      sample: rocm-fleet-pull-4f3c1e0b9a7d2c6e5f8a1b3d4c6e8f0a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d1e.tar.gz
    digest:
      description: The sha256 of the archive's bytes.
      type: str
      sample: 4f3c1e0b9a7d2c6e5f8a1b3d4c6e8f0a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d1e
    path:
      description: Where the archive is on the controller; null in check mode, where nothing is written.
      type: str
    python:
      description: The host's Python version, as given.
      type: str
      sample: "3.11"
    wheels:
      description: The names of the wheels in the archive, in name order.
      type: list
      elements: str
    inventory:
      description: C(file) or C(directory), what the inventory copy is; empty where the archive has none.
      type: str
      sample: directory
msg:
  description: How many archives were built for how many hosts, or why they could not be.
  returned: always
  type: str
  sample: 2 archives for 128 hosts
"""
