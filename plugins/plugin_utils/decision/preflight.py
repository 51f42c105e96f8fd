# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight's whole decision for one host, as one pure function of its facts and inputs.

* decide(facts, inputs, catalog, matrix): what the preflight role fixes as
  preflight_decision, and what host_compliance decides on the controller.
* gpu_expectations(decision, ...): what the decided GPU classes expect of the
  live host (node_compliance's gpu_expect).
* closest_name(name, candidates): the "did you mean" of the messages.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision import provisioning as rocm_decisions
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.drivers import (
    choose_driver,
    driver_table_problems,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.expectations import gpu_class_expectations
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.partitions import partition_decision
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import normalize_rocm_version
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.specs import closest_name

# The keys of ``inputs``: the preflight_* variables (and the host's name), templated.
INPUT_KEYS = ("host", "rocm_version", "accept_unsupported", "expected_class", "expected_gpu_count",
              "expected_package_count", "workload", "min_vram_gib_per_gpu", "reboot_allowed",
              "gpu_catalog_extra", "support_matrix_extra", "amdgpu_driver", "amdgpu_drivers_extra")
# Keys ``inputs`` may leave out (null): the wanted partition modes, null keeping the GPUs' own.
OPTIONAL_INPUT_KEYS = ("compute_partition", "memory_partition")
_TRUE = ("yes", "on", "true", "1")  # what Jinja's bool filter reads as true


def expected_classes(value):
    """preflight_expected_class as a list: null or '' is [], 'a, b' splits as the argument spec's list type does."""
    if value in (None, ""):
        return []
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, (list, tuple)) else [value]
    return [name for name in (str(item).strip() for item in items) if name]


def accepted_classes(acceptances):
    """The GPU classes that preflight_accept_unsupported items of what: gpu name in their value."""
    return [str(item["value"]) for item in acceptances or []
            if isinstance(item, dict) and item.get("what") == "gpu" and item.get("value") is not None]


def _unknown_class(variable, verb, name, catalog):
    nearest = closest_name(name, catalog)
    return "%s %s GPU class %s, which is not in the GPU catalog%s; known classes: %s" % (
        variable, verb, name, " (did you mean %s?)" % nearest if nearest else "", ", ".join(sorted(catalog)))


def input_problems(inputs, catalog, matrix, drivers):
    """What is wrong with the inventory or the data, found before anything is decided."""
    problems = []
    version = inputs["rocm_version"]
    if not isinstance(version, str):
        # YAML reads 6.10 as the number 6.1: only a quoted version survives intact.
        problems.append('preflight_rocm_version must be quoted ("6.4.1"), got %s %s'
                        % ("the number" if isinstance(version, (int, float)) else "the value", version))
    data = rocm_decisions.data_problems(catalog, matrix)
    if data:
        problems.append("the GPU catalog or support matrix (built-in, combined with preflight_gpu_catalog_extra and "
                        "preflight_support_matrix_extra) is not usable: %s" % "; ".join(data))
    table = driver_table_problems(drivers, matrix)
    if table:
        problems.append("the amdgpu driver lines (built-in, combined with preflight_amdgpu_drivers_extra) are not "
                        "usable: %s" % "; ".join(table))
    driver = inputs["amdgpu_driver"]
    if driver not in (None, "") and not isinstance(driver, str):
        problems.append('preflight_amdgpu_driver must be quoted ("30.30.3"), got %s' % (driver,))
    for name in dict.fromkeys(expected_classes(inputs["expected_class"])):
        if name not in catalog:
            problems.append(_unknown_class("preflight_expected_class", "names", name, catalog))
    acceptances = inputs["accept_unsupported"]
    if not isinstance(acceptances, (list, tuple)):
        problems.append("preflight_accept_unsupported must be a list of {what, reason} items")
        acceptances = []
    for name in dict.fromkeys(accepted_classes(acceptances)):
        if name not in catalog:
            problems.append(_unknown_class("preflight_accept_unsupported", "accepts", name, catalog))
    needs = inputs["min_vram_gib_per_gpu"] if isinstance(inputs["min_vram_gib_per_gpu"], dict) else {}
    if inputs["workload"] not in needs:
        problems.append("preflight_workload is %s, not a key of preflight_min_vram_gib_per_gpu (%s)"
                        % (inputs["workload"], ", ".join(sorted(str(key) for key in needs))))
    return problems


def decide(facts, inputs, catalog, matrix, drivers):
    """{problems, proceed, report, conflicts, gpus, decision} for one host.

    ``facts`` is the host's ansible_facts (gpu, distribution, distribution_version,
    kernel, processor); ``inputs`` has INPUT_KEYS (and may have OPTIONAL_INPUT_KEYS); ``catalog``, ``matrix`` and
    ``drivers`` (the amdgpu driver lines) are the built-in data combined with the extras.
    The driver line (``amdgpu_driver``: the release's own or the one the inventory
    names, if AMD's user/kernel compatibility allows it) is decided here too. With ``problems`` (bad inventory or
    data) nothing is decided: ``decision`` is None and ``report`` lists them.
    ``decision`` is also made for a host that may not proceed, so the drift check
    can hold it to what it would get; overrides its verdict reports as impossible are {}.
    Wanted partition modes that a GPU cannot take (decision.partitions.partition_decision) are
    ``problems`` too, each naming the host, the GPUs and the allowed pairs; ``decision`` is kept.
    """
    missing = [key for key in INPUT_KEYS if key not in inputs]
    if missing:
        raise ValueError("the decision inputs lack %s" % ", ".join(missing))
    host = inputs["host"]
    problems = input_problems(inputs, catalog, matrix, drivers)
    driver = None
    requested_version = normalize_rocm_version(inputs["rocm_version"])
    if not problems and requested_version in matrix:
        driver, problems = choose_driver(matrix, drivers, requested_version, inputs["amdgpu_driver"])
    if problems:
        return {"problems": problems, "proceed": False, "conflicts": [], "gpus": None, "decision": None,
                "report": "host %s: %s" % (host, "; ".join(problems))}
    expected = expected_classes(inputs["expected_class"])
    summary = rocm_decisions.classify_gpus(facts.get("gpu") or {}, catalog)
    support = rocm_decisions.check_support(
        summary, matrix, inputs["rocm_version"], facts.get("distribution"), facts.get("distribution_version"),
        facts.get("kernel"), acceptances=inputs["accept_unsupported"], workload=inputs["workload"],
        min_vram_gib=inputs["min_vram_gib_per_gpu"], expected_class=expected,
        expected_gpu_count=inputs["expected_gpu_count"], expected_package_count=inputs["expected_package_count"],
        drivers=drivers, driver=driver)
    # boot_params_by_cpu picks intel_iommu=on on Intel hosts from the CPU's vendor string.
    cpu = " ".join(str(part) for part in facts.get("processor") or [])
    tuning = rocm_decisions.gpu_tuning(summary, catalog, cpu)
    version = support["rocm_version"]
    try:
        overrides = rocm_decisions.hsa_override_environment(summary, version, matrix)
    except rocm_decisions.DecisionError:
        if support["proceed"]:
            raise
        overrides = {}
    gpu_classes = dict((device["index"], device["class"]) for device in summary["devices"])
    partitions = partition_decision(host, facts.get("gpu") or {}, gpu_classes, catalog,
                                    inputs.get("compute_partition"), inputs.get("memory_partition"))
    decision = {
        "rocm_version": version,
        "amdgpu_driver": driver,
        "classes": summary["classes"],
        "gpu_classes_by_index": gpu_classes,
        "gpu_count": summary["count"],
        "gfx_targets": summary["gfx_targets"],
        "tuning": dict((key, tuning[key]) for key in ("boot_params", "sysctls", "modprobe_options")),
        "hsa_overrides": overrides,
        # A version the matrix lacks (the host is refused) has no overrides to apply.
        "pytorch_rocm_arch": rocm_decisions.pytorch_rocm_arch(summary, version if version in matrix else None, matrix),
        # The targets the runtime reports (HSA overrides applied): what the Core SDK's per-target packages build for.
        "runtime_gfx_targets": rocm_decisions.runtime_gfx_targets(summary, version if version in matrix else None,
                                                                  matrix),
        "reboot_allowed": str(inputs["reboot_allowed"]).lower() in _TRUE,
        "supported": support["supported"],
        "accepted": support["accepted"],
        "warnings": support["warnings"],
        "os": support["os"],
        "kernel": support["kernel"],
        "workload": inputs["workload"],
        "summary": summary,
        "expected_classes": expected,
        "min_vram_gib": inputs["min_vram_gib_per_gpu"][inputs["workload"]],
        # The wanted modes and the logical GPU count they give (null: nothing wanted or not known).
        "partitions": dict((key, partitions[key]) for key in
                           ("compute", "memory", "physical_gpu_count", "expected_gpu_count")),
    }
    if partitions["problems"]:
        # An invalid pair or a mode a GPU does not offer: refused here, before any role changes anything.
        return {"problems": partitions["problems"], "proceed": False, "conflicts": tuning["conflicts"],
                "gpus": support["gpus"], "decision": decision, "report": "; ".join(partitions["problems"])}
    return {"problems": [], "proceed": support["proceed"], "conflicts": tuning["conflicts"],
            "gpus": support["gpus"], "decision": decision, "report": rocm_decisions.preflight_report(support, host)}


def gpu_expectations(decision, catalog, matrix, rocm_version, numa_affinity=None, amdgpu_from_amd=True,
                     rocm_from_amd=True, expected_gpu_count=None):
    """node_compliance's gpu_expect for a host decided as ``decision`` (the ``decision`` of decide()).

    The classes the inventory declares win over the detected ones (checking a host
    against what it turned out to be would always pass); so does its GPU count.
    Declared partition modes give the logical count instead of the detected one (physical
    GPUs x partitions of the mode, ROCM-GPU-001) and each partition's share of the VRAM.
    ``rocm_version`` is the version the packages role installs (None: the decided one).
    """
    classes = decision.get("expected_classes") or [name for name in decision.get("classes") or [] if name]
    partitions = decision.get("partitions") or {}
    detected = decision.get("gpu_count") or 0
    if partitions.get("expected_gpu_count") is not None:
        detected = partitions["expected_gpu_count"]
    count = detected if expected_gpu_count in (None, "") else expected_gpu_count
    return gpu_class_expectations(
        list(classes), catalog, matrix, int(count), rocm_version=rocm_version or decision.get("rocm_version"),
        min_vram_gib=decision.get("min_vram_gib") or 0, numa_affinity=numa_affinity,
        amdgpu_from_amd=amdgpu_from_amd, rocm_from_amd=rocm_from_amd,
        driver=decision.get("amdgpu_driver"), kernel=decision.get("kernel"),
        partitions_per_gpu=partitions_per_gpu(decision))


def partitions_per_gpu(decision):
    """Logical GPUs per physical GPU in the declared modes (1: none declared or not partitioned)."""
    partitions = (decision or {}).get("partitions") or {}
    count, physical = partitions.get("expected_gpu_count"), partitions.get("physical_gpu_count")
    if not count or not physical:
        return 1
    return max(1, int(count) // int(physical))
