"""plugin_utils/compliance/declared_state_cache.py: the key covers every input, entries expire, nothing half-written."""

from __future__ import annotations

import json
import os

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.compliance import declared_state_cache as cache

VARIABLES = {"inventory_hostname": "gpu-01", "packages_rocm_version": "7.1.1", "ansible_facts": {"kernel": "6.8.0"},
             "omit": "__omit_place_holder__1", "ansible_play_hosts_all": ["gpu-01"],
             "ansible_role_names": ["rocm_fleet.core.repo", "rocm_fleet.core.kernel"], "role_uuid": "02fc-a057"}
OPTIONS = {"roles": ["repo"], "skip_checks": []}


def key(**changes):
    arguments = {"caller_key": "env", "host": "gpu-01", "variables": VARIABLES, "options": OPTIONS,
                 "collection": "c1"}
    arguments.update(changes)
    return cache.state_key(**arguments)


def test_the_key_changes_with_every_input_and_not_with_the_run_s_own_variables():
    base = key()
    assert base == key()
    changed = [
        key(caller_key="env2"), key(host="gpu-02"), key(collection="c2"),
        key(options=dict(OPTIONS, skip_checks=["ROCM-ENV-001"])),
        key(variables=dict(VARIABLES, packages_rocm_version="7.2.0")),
        key(variables=dict(VARIABLES, ansible_facts={"kernel": "6.8.1"})),
        key(variables=dict(VARIABLES, site_extra={"nested": [1, 2]})),
    ]
    assert base not in changed and len(set(changed)) == len(changed)
    # The omit placeholder, the play's host and role lists and role IDs differ between runs of the same fleet.
    same = key(variables=dict(VARIABLES, omit="__omit_place_holder__2", ansible_play_hosts_all=["gpu-01", "gpu-02"],
                              ansible_role_names=["rocm_fleet.core.kernel", "rocm_fleet.core.repo"],
                              role_uuid="02fc-1685"))
    assert same == base


def test_a_value_json_cannot_write_goes_in_by_its_type():
    assert key(variables=dict(VARIABLES, odd=object())) == key(variables=dict(VARIABLES, odd=object()))


def test_an_entry_serves_its_own_key_until_it_is_too_old(tmp_path):
    state = {"decision": {"rocm_version": "7.1.1"}, "items": [{"id": "ROCM-ENV-001"}], "gpu_expect": {},
             "health": None, "gpu_items": []}
    cache.store(str(tmp_path), "gpu-01", "k1", state, now=1000)
    assert cache.load(str(tmp_path), "gpu-01", "k1", max_age=60, now=1030) == state
    assert cache.load(str(tmp_path), "gpu-01", "k2", max_age=60, now=1030) is None
    assert cache.load(str(tmp_path), "gpu-01", "k1", max_age=60, now=1061) is None
    assert cache.load(str(tmp_path), "gpu-02", "k1", max_age=60, now=1030) is None


def test_entries_are_root_only_replaced_whole_and_named_safely(tmp_path):
    directory = tmp_path / "state"
    cache.store(str(directory), "../odd/host name", "k1", {"items": []})
    [entry] = os.listdir(directory)
    assert entry.startswith(".._odd_host_name-") and entry.endswith(".json")
    assert oct(directory.stat().st_mode & 0o777) == "0o700"
    assert oct((directory / entry).stat().st_mode & 0o777) == "0o600"
    (directory / entry).write_text('{"key": "k1", "stored": ')  # a torn write by something else
    assert cache.load(str(directory), "../odd/host name", "k1", max_age=60) is None


def test_the_collection_digest_follows_the_roles_and_plugins(tmp_path):
    for part in ("roles/repo/templates", "plugins/action", "docs"):
        (tmp_path / part).mkdir(parents=True)
    (tmp_path / "roles/repo/templates/rocm.sources.j2").write_text("Types: deb\n")
    (tmp_path / "plugins/action/host_compliance.py").write_text("x = 1\n")
    before = cache.collection_digest(str(tmp_path))
    (tmp_path / "docs/drift.md").write_text("not an input\n")
    assert cache.collection_digest(str(tmp_path)) == before
    template = tmp_path / "roles/repo/templates/rocm.sources.j2"
    template.write_text("Types: deb-src\n")  # the same size, written later
    os.utime(template, ns=(template.stat().st_atime_ns, template.stat().st_mtime_ns + 1))
    assert cache.collection_digest(str(tmp_path)) != before
    assert json.dumps(cache.collection_digest())  # the installed collection's own, once per process


def test_facts_count_once_through_ansible_facts_never_through_their_injected_variables():
    injected = dict(VARIABLES, ansible_kernel="6.8.0")
    assert key(variables=injected) == key(variables=dict(injected, ansible_kernel="read through a deprecated name"))
    assert key(variables=injected) != key(variables=dict(injected, ansible_facts={"kernel": "6.8.1"}))
