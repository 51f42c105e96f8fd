#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: node_compliance
short_description: Evaluate a host's declared ROCm state in one call
version_added: 0.1.0
description:
  - Compares the host with a list of declared items (files, lines, groups, sysctls, the active kernel command line,
    kernel modules, device nodes, packages, apt sources and pins).
  - The items are the roles' managed objects (each role's C(__<role>_managed)), turned into items on the controller by
    M(rocm_fleet.core.host_compliance); the module itself knows no role. Each item carries the label that the role's
    task prints for the object, so a failing item names the change C(ansible-playbook --check) would report.
  - Reads files with open and stat calls only (one C(rpm -qa) call on RPM hosts), so a whole host costs a fraction
    of a second. Never changes anything.
  - The C(job_environment), C(device_visibility) and C(device_access) kinds also run commands on the host, each
    killed after the item's C(timeout) (10 seconds) and only where O(root) is C(/) and the module runs as root
    (C(become)). C(job_environment) and C(device_visibility) start each listed user's login shell
    (C(runuser -l USER -c 'printf MARKER; exec env -0'), C(su -) where runuser is missing, C(-s /bin/sh) for a
    nologin shell) and read C(systemctl show-environment), once per call whatever the number of items;
    C(device_access) with C(open=true) runs C(runuser -u USER -- /bin/sh -c 'test -r NODE -a -w NODE ...') once per
    user. Where a command cannot run, the files it would have read decide what they can and the rest is C(skipped)
    with a message starting C(unknown:), never C(pass).
  - C(runtime_libraries) runs C(ldconfig -p), the loader's cache; for a O(root) other than C(/) this machine's
    C(ldconfig -p -C <root>/etc/ld.so.cache), which only reads the file.
  - With O(facts=true) it also reads the GPU facts and the host's OS, kernel and CPU facts in the same call, so a
    caller that rendered the items from earlier facts can confirm that they still hold.
  - An invalid item or one whose state cannot be read becomes a result with status C(error) naming the item and
    the field; the module fails only on invalid options.
  - Item kinds and their C(expect) keys are documented in C(docs/compliance-checks.md).
author:
  - rocm-fleet maintainers (@rocm-fleet)
extends_documentation_fragment:
  - rocm_fleet.core.gpu_tools
options:
  items:
    description:
      - Declared items to check, each evaluated independently. Keys of each item follow.
        (checked by the module itself, so one bad item is one C(error) result, not a failed task)
      - C(id) (required), a stable check ID such as C(ROCM-ENV-001).
      - C(title), what the item asserts; defaults to its C(id).
      - C(kind) (required), one of C(apt_pin), C(apt_source), C(boot_entries), C(device_access), C(device_acl),
        C(device_node), C(device_visibility), C(directory), C(file), C(file_block), C(file_lines), C(group_exists),
        C(group_members), C(group_unlisted), C(job_environment), C(kernel_cmdline), C(link), C(modprobe_options),
        C(module_loaded), C(package), C(rpm_key), C(runtime_libraries), C(sysctl), C(udev_open_rules),
        C(udev_uaccess), C(user_exists).
      - C(role), the role that manages the item; C(label), the label its task prints for the object.
      - C(repair), what repairs the item where no task of a role does (a reboot, a person).
      - C(severity), passed through to the result.
      - C(expect) (required), the kind-specific expected state.
    type: list
    elements: dict
    default: []
  facts:
    description:
      - Also return, in C(ansible_facts), the C(gpu) fact read from O(gpu_sources) and the OS, kernel and CPU facts of
        M(rocm_fleet.core.gpu_facts)'s O(rocm_fleet.core.gpu_facts#module:host_facts).
    type: bool
    default: false
  gpu_sources:
    description:
      - Sources of the GPU facts when O(facts=true), as M(rocm_fleet.core.gpu_facts)'s
        O(rocm_fleet.core.gpu_facts#module:sources), with the same default.
    type: list
    elements: str
    choices: [sysfs, rocm_smi, amd_smi, rocminfo]
  host_facts_digest:
    description:
      - The C(host_facts_digest) fact of an earlier read of this host. Where it is still the host's digest, the
        distribution and processor facts are left out of C(ansible_facts) (they would be the same); the caller keeps
        its earlier ones. Importing setup's collectors for them is most of the cost of a nightly check.
      - Only with O(facts=true).
    type: str
  health:
    description:
      - The GPU health, kernel/DKMS and Secure Boot checks (ROCM-HEALTH-001 to 006, ROCM-KERN-001 to 003), read in
        this same call from sysfs, efivars, /boot, /var/lib/dkms and the module directories under O(root); no
        command runs. Null leaves them out.
      - Keys, as M(rocm_fleet.core.host_compliance) builds them from the class data, C(ce_threshold) (int),
        C(ras) (bool, the class has RAS counters), C(firmware) (the class's minimums by FW_ID, each with C(min) and
        C(source)), C(xgmi) (a mapping with C(peers), or null), C(dkms) (bool), C(kernel_max), C(module_version),
        C(skip) (check IDs) and C(before_install) (preflight, ROCM-KERN-003 judges whether a module DKMS would
        build now could load); see C(docs/compliance-checks.md).
    type: dict
  detail:
    description:
      - V(all) returns every result whole.
      - V(findings) folds each check's passing items into one result (its C(id), C(title), C(status) and the number
        of C(items)) and leaves the items out of the C(invocation) it returns; every other result is whole.
        M(rocm_fleet.core.host_compliance) asks for it where a fleet's report needs no more.
    type: str
    choices: [all, findings]
    default: all
  root:
    description:
      - Root of the tree to inspect, so tests and chroot inspections can point at another tree.
    type: path
    default: /
    aliases: [sysfs_root]
attributes:
  check_mode:
    support: full
    description: The module only reads.
  diff_mode:
    support: none
    description: File content differences are returned in RV(results[].diff) instead.
notes:
  - C(changed) is always false.
seealso:
  - module: rocm_fleet.core.gpu_facts
  - module: rocm_fleet.core.host_compliance
"""

EXAMPLES = r"""
- name: Evaluate the host
  rocm_fleet.core.node_compliance:
    items:
      - id: ROCM-SYSCTL-001
        title: the sysctls have their values in the running kernel
        kind: sysctl
        role: rocm_fleet.core.kernel
        label: "kernel: kernel.numa_balancing=0"
        expect: {name: kernel.numa_balancing, value: 0}
      - id: ROCM-ENV-005
        title: the login shells get no HSA override the GPUs do not need
        kind: job_environment
        repair: a person
        expect: {scope: login, users: [alice], hsa_overrides: {}, gfx_targets: [gfx942], release_dir: /opt/rocm-6.4.1}
      - id: ROCM-BOOT-002
        title: the boot parameters are active in /proc/cmdline
        kind: kernel_cmdline
        repair: a reboot
        expect:
          params: [iommu=pt]
          grub_file: /etc/default/grub.d/90-rocm-fleet.cfg
  register: compliance

- name: Show what failed
  ansible.builtin.debug:
    msg: "{{ compliance.results | rejectattr('status', 'eq', 'pass') | map(attribute='message') | list }}"
"""

RETURN = r"""
results:
  description: One entry per item; with O(detail=findings), one entry per check for its passing items.
  returned: always
  type: list
  elements: dict
  contains:
    id:
      description: The item's ID.
      type: str
    items:
      description: How many passing items the entry stands for.
      returned: for the folded passing entries of O(detail=findings)
      type: int
    title:
      description: The item's title.
      type: str
    kind:
      description: The item kind.
      type: str
    role:
      description: The role that manages the item, if given.
      type: str
    label:
      description: The label the role's task prints for the object, if given.
      type: str
    repair:
      description:
        - What repairs the item where no task does, if given; a check whose repair depends on its finding
          (C(job_environment) and C(runtime_libraries) where only the role's own file is pending, site.yml)
          says so here.
      type: str
    severity:
      description: As given in the item.
      type: str
    status:
      description:
        - C(pass), C(fail), or C(error) when the item is invalid or the state could not be read.
        - C(unknown) for a health check whose reading is not a value (N/A, EINVAL, a max-uint placeholder, an
          unreadable file); the message says why. Never a pass.
        - C(skipped) when the state is not measurable now (the message starts with C(unknown:) and says what could
          not be seen); C(warn) for a finding that does not fail the host (C(group_unlisted) without C(exclusive)).
        - C(unknown) when a health state should be measurable but is not (an N/A counter, EINVAL, a placeholder
          value, an unreadable file); the message gives the reason. It is never a pass.
      type: str
    expected:
      description: The validated expectation, defaults filled in.
      type: raw
    actual:
      description: What the host has, in the same terms.
      type: raw
    message:
      description: Why it failed, naming the path, key or user.
      type: str
    diff:
      description: Unified diff from the host's file to the expected content; empty otherwise.
      type: str
    action:
      description: What the enforcing task would do on a failed item (create, update, remove, add, set, ...).
      type: str
  sample:
    - id: ROCM-SYSCTL-001
      title: the sysctls have their values in the running kernel
      kind: sysctl
      role: rocm_fleet.core.kernel
      label: "kernel: kernel.numa_balancing=0"
      repair: null
      severity: null
      status: fail
      expected: {name: kernel.numa_balancing, value: "0"}
      actual: "1"
      message: "kernel.numa_balancing is 1, expected 0"
      diff: ""
      action: set
summary:
  description: Counts of the items by status, and C(total); the same whatever O(detail).
  returned: always
  type: dict
  sample: {pass: 41, fail: 2, error: 0, skipped: 0, unknown: 0, warn: 0, total: 43}
ansible_facts:
  description:
    - The C(gpu) fact and the host facts, under the names M(rocm_fleet.core.gpu_facts) gives them, less the
      distribution and processor facts where O(host_facts_digest) still matches.
  returned: when O(facts=true)
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rocm_fleet.core.plugins.module_utils.common import bytecode_cache
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import DEFAULT_SOURCES, SOURCES

# Module-level so tests can point the tool search away from a real /opt/rocm.
ROCM_BIN_DIRS = ["/opt/rocm/bin"]


def main():
    module = AnsibleModule(
        argument_spec=dict(
            # The evaluator validates each item, so one bad item is one error result, not a failed task.
            items=dict(type="list", elements="dict", default=[]),
            facts=dict(type="bool", default=False),
            gpu_sources=dict(type="list", elements="str", choices=list(SOURCES)),
            health=dict(type="dict"),
            host_facts_digest=dict(type="str"),
            detail=dict(type="str", choices=["all", "findings"], default="all"),
            root=dict(type="path", default="/", aliases=["sysfs_root"]),
            timeout=dict(type="int", default=30),
        ),
        supports_check_mode=True,
    )
    if __name__ == "__main__":  # on a host (AnsiballZ runs the module as __main__): before the imports below compile
        bytecode_cache.install()
    # Imported here, after the cache is in place: the evaluator is most of what this module ships.
    from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.evaluate import (
        evaluate,
        findings_only,
        summarize,
    )
    from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.health import evaluate_health
    from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.gather import gather
    from ansible_collections.rocm_fleet.core.plugins.module_utils.host.facts import gather_host_facts

    params = module.params
    if params["timeout"] <= 0:
        module.fail_json(msg="timeout must be a positive number of seconds, got %d" % params["timeout"])
    try:
        results, summary = evaluate(params["items"], params["root"])
        if params["health"] is not None:  # in this same call: a nightly drift stays one module call per host
            results = results + evaluate_health(params["health"], params["root"])
            summary = summarize(results)
    except Exception as exc:  # never end in a traceback
        module.fail_json(msg="node_compliance: evaluation failed: %s: %s" % (type(exc).__name__, exc))
    returned = dict(changed=False, results=results, summary=summary)
    if params["detail"] == "findings":
        # The caller has the items and the health expectations it sent: echoed back they would only be
        # scrubbed for secrets, serialized and parsed again, on every host of a fleet.
        returned.update(results=findings_only(results), invocation={"module_args": dict(
            params, items="%d item(s)" % len(params["items"]), health=None if params["health"] is None else "given")})
    if not params["facts"]:
        module.exit_json(**returned)
    warnings, gpu = [], None
    gather_params = {"sysfs_root": params["root"], "sources": params["gpu_sources"] or list(DEFAULT_SOURCES),
                     "timeout": params["timeout"]}
    try:
        gpu = gather(gather_params, module.get_bin_path, ROCM_BIN_DIRS)
    except Exception as exc:  # the item results are still worth returning
        warnings.append("GPU facts could not be gathered: %s: %s" % (type(exc).__name__, exc))
    # Never raises: what it could not read is a warning.
    host, host_warnings = gather_host_facts(module, known_digest=params["host_facts_digest"])
    for warning in warnings + host_warnings:
        module.warn(warning)
    module.exit_json(ansible_facts=dict(host, gpu=gpu), **returned)


if __name__ == "__main__":
    main()
