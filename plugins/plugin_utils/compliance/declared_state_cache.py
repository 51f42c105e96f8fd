# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The declared-state cache: what host_compliance rendered for a host, kept for the next drift run.

Rendering a host's declared state (preflight's decision, every role's items with their files'
contents, the GPU class and health expectations) is most of the controller's work per host: about
280 Jinja templates, each compiled again on every use, against one small module call. A nightly
drift of an unchanged fleet renders the same state as the night before, so host_compliance keeps it
per host, keyed by everything it is rendered from: the host's variables as Ansible hands them to the
task (inventory, group_vars, the roles' defaults and vars, -e; unrendered), its facts (the fact
cache), the collection's roles and plugins, ansible-core's version and the caller's key (rocm-fleet
drift passes a digest of its environment, which lookups of env read). Any change to one of them is
another key, so the state is rendered again. What a lookup reads from elsewhere (a file outside the
inventory, a secret store) is not in the key: entries expire after ``max_age`` seconds, and the
cache is off unless the caller names a directory.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import re
import tempfile
import time

from ansible.release import __version__ as ANSIBLE_VERSION

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.specs import COLLECTION_ROOT

# What the state is rendered by: the roles' data and templates, the decisions and the actions.
COLLECTION_PARTS = ("roles", "plugins")
# Variables that differ between runs of the same fleet without saying anything about a host: the
# run's omit placeholder and role IDs, the play's host and role lists (in no fixed order), the command
# line's settings; and ``vars``, every variable again.
RUN_VARIABLES = frozenset((
    "omit", "hostvars", "vars", "play_hosts", "ansible_play_batch", "ansible_play_hosts", "ansible_play_hosts_all",
    "role_uuid", "role_names", "ansible_role_names", "ansible_play_role_names", "ansible_dependent_role_names",
    "ansible_limit", "ansible_forks", "ansible_verbosity", "ansible_run_tags", "ansible_skip_tags",
    "ansible_check_mode", "ansible_diff_mode", "ansible_version", "ansible_config_file",
))
FORMAT = 1
_collection_digest = []  # once per process


def collection_digest(root=COLLECTION_ROOT):
    """sha256 over the paths, sizes and modification times of the collection's roles and plugins.

    Their stat, not their contents: every host's worker process asks, and reading 2 MB costs it more
    than the rest of a cached host (an install or a checkout writes the files it changes).
    """
    if _collection_digest and root == COLLECTION_ROOT:
        return _collection_digest[0]
    digest = hashlib.sha256()
    for part in COLLECTION_PARTS:
        for directory, subdirectories, files in os.walk(os.path.join(root, part)):
            subdirectories[:] = sorted(name for name in subdirectories if name != "__pycache__")
            for name in sorted(files):
                path = os.path.join(directory, name)
                status = os.stat(path)
                digest.update(("%s\0%d\0%d\n" % (os.path.relpath(path, root), status.st_size,
                                                 status.st_mtime_ns)).encode("utf-8", "surrogateescape"))
    if root == COLLECTION_ROOT:
        _collection_digest.append(digest.hexdigest())
    return digest.hexdigest()


def state_key(caller_key, host, variables, options, collection=None):
    """The key of ``host``'s declared state: a hex sha256 of everything it is rendered from.

    ``variables``: the task's variables, unrendered; ``options``: the task's own (roles, skipped checks).
    Objects JSON cannot write go in by type name only, so such a value never makes two runs share a key
    that should not: at worst they miss.
    """
    # By name first: reading a deprecated variable's value (play_hosts, the facts injected as ansible_* variables,
    # which ansible_facts holds anyway) makes newer ansible-core warn.
    facts = variables.get("ansible_facts") or {}
    injected = set("ansible_" + name for name in facts) | set(name for name in facts if name.startswith("ansible_"))
    picked = dict((name, variables[name]) for name in variables if name not in RUN_VARIABLES and name not in injected)
    document = {
        "format": FORMAT, "caller": caller_key, "host": host, "ansible": ANSIBLE_VERSION,
        "collection": collection or collection_digest(), "options": options, "variables": picked,
    }
    text = json.dumps(document, sort_keys=True, default=lambda value: "<%s>" % type(value).__name__)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _path(directory, host):
    # Inventory names may hold any character; the file's name keeps a readable part and the whole name's digest.
    readable = re.sub(r"[^A-Za-z0-9._-]", "_", host)[:64]
    return os.path.join(directory, "%s-%s.json" % (readable, hashlib.sha256(host.encode("utf-8")).hexdigest()[:12]))


def load(directory, host, key, max_age, now=None):
    """The state stored under ``key`` for ``host``, or None (none stored, another key, too old, unreadable)."""
    try:
        with open(_path(directory, host)) as handle:
            entry = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("state"), dict):
        return None
    stored = entry.get("stored")
    if not isinstance(stored, (int, float)) or (now if now is not None else time.time()) - stored > max_age:
        return None
    return entry["state"]


def store(directory, host, key, state, now=None):
    """Keep ``state`` (JSON data) for ``host`` under ``key``; root-only files, replaced atomically."""
    os.makedirs(directory, mode=0o700, exist_ok=True)
    entry = {"key": key, "stored": now if now is not None else time.time(), "state": state}
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=".state-")
    try:
        with os.fdopen(descriptor, "w") as handle:
            json.dump(entry, handle, sort_keys=True)
        os.replace(temporary, _path(directory, host))
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
