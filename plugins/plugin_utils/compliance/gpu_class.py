# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check the ``gpu`` fact against what the host's GPU class expects (``gpu_expect``).

Each key of ``gpu_expect`` is one check with a stable ID (``GPU_CHECKS``).
Topology values are either one value for every GPU pair (an 8x MI300X hive:
``{link_type: XGMI, hops: 1, weight: 15}``) or a full matrix; a failure names
each GPU pair that differs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import version_matches
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.drivers import loaded_driver
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.partitions import describe_gpu, physical_gpus

# What repairs a failed GPU check: nothing site.yml changes can fix the hardware.
BY_A_PERSON = "a person: the hardware differs from what the inventory declares; site.yml cannot change it"
# key of gpu_expect -> (check id, title)
GPU_CHECKS = {
    "count": ("ROCM-GPU-001", "GPU count as the class expects"),
    "products": ("ROCM-GPU-002", "GPU products as the class expects"),
    "gfx_targets": ("ROCM-GPU-003", "gfx targets as the class expects"),
    "vram_bytes_min": ("ROCM-GPU-004", "VRAM per GPU"),
    "topology": ("ROCM-TOPO-001", "GPU links as the class declares them"),
    "numa_affinity": ("ROCM-TOPO-002", "NUMA affinity per GPU"),
    "driver": ("ROCM-DRV-001", "amdgpu loaded, at the expected version"),
    "rocm_version": ("ROCM-PKG-001", "the pinned ROCm version is the default release"),
}
REPAIRS = {
    "ROCM-DRV-001": "site.yml installs amdgpu-dkms of the release; loading it needs a reboot, or a person where the"
                    " module does not load (see its modprobe error)",
    "ROCM-PKG-001": "site.yml (packages_rocm_default_version points /opt/rocm at the release)",
    # An expectation or GPU fact that cannot be checked (the message says which).
    "ROCM-GPU-000": "the inventory's GPU class data (preflight_gpu_catalog_extra) or the GPU fact sources",
}
INVALID_EXPECT_ID = ("ROCM-GPU-000", "gpu_expect is valid")
# What the host can only tell with amdgpu loaded (marketing names, VRAM and the KFD link
# table): while it is not, these checks are skipped and ROCM-DRV-001 fails instead, so
# one cause is reported once.
NEEDS_DRIVER = ("products", "vram_bytes_min", "topology")
TOPOLOGY_FIELDS = ("link_type", "hops", "weight")


class GpuExpectInvalid(ValueError):
    pass


def _pairs(actual, expected):
    """Pairs up to the shorter list; callers report a length difference themselves."""
    return [(actual[index], expected[index]) for index in range(min(len(actual), len(expected)))]


def _devices(gpu):
    return gpu.get("devices") or []


def check_count(expected, gpu):
    if isinstance(expected, bool) or not isinstance(expected, int):
        raise GpuExpectInvalid("count must be an integer")
    count = gpu.get("count") or 0
    if count != expected:
        return "fail", count, "expected %d GPUs, found %d" % (expected, count)
    return "pass", count, "%d GPUs" % count


def check_products(expected, gpu):
    products = [device.get("product") for device in _devices(gpu)]
    if isinstance(expected, str):
        expected = [expected] * len(products)
    if not isinstance(expected, list) or not all(isinstance(name, str) for name in expected):
        raise GpuExpectInvalid("products must be a product name or a list with one name per GPU")
    wrong = [
        "GPU %d: %s, expected %s" % (index, product, want)
        for index, (product, want) in enumerate(_pairs(products, expected))
        if not version_matches(product, want)  # 'AMD Instinct MI300X*' also matches its OAM name
    ]
    if len(products) != len(expected):
        wrong.insert(0, "%d GPUs, expected %d" % (len(products), len(expected)))
    return ("fail" if wrong else "pass"), products, "; ".join(wrong) or "every GPU is the expected product"


def check_gfx_targets(expected, gpu):
    if not isinstance(expected, list) or not expected or not all(isinstance(name, str) for name in expected):
        raise GpuExpectInvalid("gfx_targets must be a non-empty list of gfx targets allowed for every GPU")
    targets = [device.get("gfx_target") for device in _devices(gpu)]
    wrong = ["GPU %d: %s" % (index, target) for index, target in enumerate(targets) if target not in expected]
    if wrong:
        return "fail", targets, "not in %s: %s" % (", ".join(expected), "; ".join(wrong))
    return "pass", targets, "every GPU is %s" % " or ".join(expected)


def check_vram(expected, gpu):
    if isinstance(expected, bool) or not isinstance(expected, int) or expected < 0:
        raise GpuExpectInvalid("vram_bytes_min must be a non-negative integer")
    sizes = [device.get("vram_bytes") for device in _devices(gpu)]
    wrong = [
        "GPU %d: %s" % (index, "unknown" if size is None else "%d bytes" % size)
        for index, size in enumerate(sizes)
        if size is None or size < expected
    ]
    if wrong:
        return "fail", sizes, "less than %d bytes of VRAM: %s" % (expected, "; ".join(wrong))
    return "pass", sizes, "every GPU has at least %d bytes of VRAM" % expected


def _expected_matrix(value, field, count):
    if isinstance(value, list):
        if len(value) != count or any(not isinstance(row, list) or len(row) != count for row in value):
            return None
        return value
    if isinstance(value, (dict, bool)) or value is None:
        raise GpuExpectInvalid("topology.%s must be one value for every pair or a matrix" % field)
    return [[value] * count for _index in range(count)]


def check_topology(expected, gpu):
    if not isinstance(expected, dict) or not expected or set(expected) - set(TOPOLOGY_FIELDS):
        raise GpuExpectInvalid("topology must be a mapping with some of %s" % ", ".join(TOPOLOGY_FIELDS))
    count = gpu.get("count") or 0
    topology = gpu.get("topology")
    if count < 2:
        return "pass", None, "fewer than 2 GPUs: no links to check"
    if not topology:
        return "error", None, "no source reported the topology (sources: %s)" % gpu.get("sources")
    actual = dict((field, topology.get(field)) for field in expected)
    pairs, problems = {}, []
    for field, value in sorted(expected.items()):
        want = _expected_matrix(value, field, count)
        have = topology.get(field)
        if want is None:
            problems.append("%s: expected a %dx%d matrix for %d GPUs" % (field, count, count, count))
            continue
        if have is None:
            problems.append("%s: not reported" % field)
            continue
        for i in range(count):
            for j in range(i + 1, count):
                seen = have[i][j] if have[i][j] == have[j][i] else "%s/%s" % (have[i][j], have[j][i])
                if have[i][j] != want[i][j] or have[j][i] != want[j][i]:
                    pairs.setdefault((i, j), []).append("%s %s, expected %s" % (field, seen, want[i][j]))
    for (i, j), wrong in sorted(pairs.items()):
        problems.append("GPU %d-%d: %s" % (i, j, ", ".join(wrong)))
    if problems:
        return "fail", actual, "; ".join(problems)
    return "pass", actual, "every GPU pair is as declared"


def check_numa_affinity(expected, gpu):
    if not isinstance(expected, list) or not all(
        isinstance(node, int) and not isinstance(node, bool) for node in expected
    ):
        raise GpuExpectInvalid("numa_affinity must be a list of NUMA node numbers, one per GPU")
    actual = [device.get("numa_node") for device in _devices(gpu)]
    wrong = [
        "GPU %d: node %s, expected %s" % (index, have, want)
        for index, (have, want) in enumerate(_pairs(actual, expected))
        if have != want
    ]
    if len(actual) != len(expected):
        wrong.insert(0, "%d GPUs, expected %d" % (len(actual), len(expected)))
    return ("fail" if wrong else "pass"), actual, "; ".join(wrong) or "every GPU is on its expected NUMA node"


def check_driver(expected, gpu):
    """``version`` alone is a pattern; with ``line`` it is that driver line's kernel-module version (None: unknown)."""
    if not isinstance(expected, dict) or set(expected) - {"loaded", "version", "line", "kernel"}:
        raise GpuExpectInvalid("driver must be a mapping with loaded, version, line and/or kernel")
    driver = gpu.get("driver") or {}
    actual = {"loaded": driver.get("loaded"), "version": driver.get("version")}
    want_loaded = expected.get("loaded", True)
    if bool(actual["loaded"]) != bool(want_loaded):
        return "fail", actual, "amdgpu is %s" % ("loaded and should not be" if actual["loaded"] else "not loaded")
    version = expected.get("version")
    if want_loaded and "line" in expected:
        return _check_driver_line(expected, actual)
    if want_loaded and version and not version_matches(actual["version"], str(version)):
        return "fail", actual, "amdgpu %s is loaded, expected %s" % (actual["version"] or "of unknown version", version)
    return "pass", actual, "amdgpu is %s" % ("loaded (%s)" % actual["version"] if want_loaded else "not loaded")


def _check_driver_line(expected, actual):
    line, wanted = expected.get("line"), expected.get("version")
    if not line or not wanted:
        return "error", actual, (
            "the kernel-module version of amdgpu driver line %s is unknown (not sourced): whether the loaded amdgpu "
            "(%s) is that driver cannot be told; add kernel_module to the line in preflight_amdgpu_drivers_extra"
            % (line or "(none decided)", actual["version"] or "no version"))
    loaded = loaded_driver(actual["version"], expected.get("kernel"))
    actual["kind"] = loaded["kind"]
    dkms = "amdgpu-dkms %s of driver line %s" % (wanted, line)
    if loaded["kind"] == "in-tree":
        kernel = " of kernel %s" % loaded["kernel"] if loaded["kernel"] else ""
        return "fail", actual, "the in-tree amdgpu%s is loaded, not %s" % (kernel, dkms)
    if loaded["kind"] == "unknown":
        return "fail", actual, "amdgpu is loaded but reports no driver version (%s; the in-tree driver has none), " \
            "expected %s" % (actual["version"] or "none", dkms)
    if loaded["version"] != str(wanted):
        return "fail", actual, "amdgpu %s is loaded, expected %s" % (loaded["version"], dkms)
    return "pass", actual, "amdgpu %s (driver line %s) is loaded" % (loaded["version"], line)


def check_rocm_version(expected, gpu):
    if not isinstance(expected, str) or not expected:
        raise GpuExpectInvalid("rocm_version must be a version or pattern such as '6.4.1*'")
    rocm = gpu.get("rocm") or {}
    if not rocm.get("path"):
        return "fail", rocm, "no default ROCm release is installed, expected %s" % expected
    # gather.read_rocm_install: the legacy /opt/rocm link or the Core SDK's /opt/rocm/core alternative.
    where = "the default ROCm release (%s)" % rocm["path"]
    if not rocm.get("version"):
        return "fail", rocm, "%s has no .info/version, expected %s" % (where, expected)
    if not version_matches(rocm["version"], expected):
        return "fail", rocm, "%s is %s, expected %s" % (where, rocm["version"], expected)
    return "pass", rocm, "%s is %s" % (where, rocm["version"])


CHECKERS = {
    "count": check_count,
    "products": check_products,
    "gfx_targets": check_gfx_targets,
    "vram_bytes_min": check_vram,
    "topology": check_topology,
    "numa_affinity": check_numa_affinity,
    "driver": check_driver,
    "rocm_version": check_rocm_version,
}


def evaluate_gpu(gpu_expect, gpu):
    """Results (the evaluator's result shape, role and task null) for each key of ``gpu_expect``."""
    results = []
    unknown = sorted(set(gpu_expect) - set(CHECKERS))
    if unknown:
        message = "unknown keys %s (allowed: %s)" % (", ".join(unknown), ", ".join(sorted(CHECKERS)))
        results.append(_result(INVALID_EXPECT_ID, "gpu_expect", "error", None, None, message))
    for key in sorted(set(gpu_expect) & set(CHECKERS), key=lambda name: GPU_CHECKS[name][0]):
        expected = gpu_expect[key]
        if key in NEEDS_DRIVER and gpu_expect.get("driver") and not (gpu.get("driver") or {}).get("loaded"):
            message = "not measurable while amdgpu is not loaded (see %s)" % GPU_CHECKS["driver"][0]
            results.append(_result(GPU_CHECKS[key], "gpu", "skipped", expected, None, message))
            continue
        try:
            status, actual, message = CHECKERS[key](expected, gpu)
        except GpuExpectInvalid as exc:
            status, actual, message = "error", None, "%s: gpu_expect.%s: %s" % (GPU_CHECKS[key][0], key, exc)
        except Exception as exc:  # a malformed fact must cost one check, never the module
            status, actual, message = "error", None, "%s: %s" % (type(exc).__name__, exc)
        results.append(_result(GPU_CHECKS[key], "gpu", status, expected, actual, message))
    return results


def check_partition(expected, gpu):
    """One declared partition mode ({set: compute|memory, mode}) against every physical GPU of the fact."""
    kind, mode = expected.get("set"), expected.get("mode")
    if kind not in ("compute", "memory") or not isinstance(mode, str) or not mode:
        raise GpuExpectInvalid("a partition item needs set (compute or memory) and a mode")
    gpus = physical_gpus(gpu)
    actual = [entry[kind] for entry in gpus]
    if not gpus:
        return "fail", actual, "no GPU found, expected %s partition %s" % (kind, mode)
    wrong = ["%s: %s" % (describe_gpu(entry), entry[kind] or "unknown") for entry in gpus if entry[kind] != mode]
    if wrong:
        return "fail", actual, "%s partition %s expected, %d of %d physical GPUs differ: %s" % (
            kind, mode, len(wrong), len(gpus), "; ".join(wrong))
    return "pass", actual, "every physical GPU (%d) is in %s partition %s" % (len(gpus), kind, mode)


GPU_ITEM_CHECKERS = {"gpu_partition": check_partition}
# What follows from the partition modes: while they are not as declared, these fail as their consequence.
PARTITION_CONSEQUENCES = ("ROCM-GPU-001", "ROCM-GPU-004", "ROCM-TOPO-001")
PARTITION_REPAIR = ("site.yml: the logical GPUs' count, VRAM and links follow from the partition modes, which "
                    "ROCM-GPU-005 finds not as declared")


def with_partition_repairs(results):
    """``results`` with the count, VRAM and link checks that a wrong partition mode explains repaired by site.yml."""
    if not any(result["id"] == "ROCM-GPU-005" and result["status"] == "fail" for result in results):
        return results
    for result in results:
        if result["id"] in PARTITION_CONSEQUENCES and result["status"] == "fail":
            result["repair"] = PARTITION_REPAIR
    return results


def evaluate_gpu_items(items, gpu):
    """Results for the roles' items that are checked against the gpu fact (managed_state.GPU_ITEM_KINDS).

    Each keeps its item's ID, title, role and label: a failed one is the change site.yml --check
    prints under that label. While amdgpu is not loaded the modes cannot be read: skipped, as
    ROCM-DRV-001 reports the cause.
    """
    results = []
    loaded = (gpu.get("driver") or {}).get("loaded")
    for item in items or []:
        expected = item.get("expect")
        if not loaded:
            status, actual, message = "skipped", None, "not measurable while amdgpu is not loaded (see %s)" % (
                GPU_CHECKS["driver"][0])
        else:
            try:
                status, actual, message = GPU_ITEM_CHECKERS[item["kind"]](expected or {}, gpu)
            except GpuExpectInvalid as exc:
                status, actual, message = "error", None, "%s: %s" % (item["id"], exc)
            except Exception as exc:  # a malformed fact must cost one check, never the module
                status, actual, message = "error", None, "%s: %s" % (type(exc).__name__, exc)
        result = _result((item["id"], item["title"]), item["kind"], status, expected, actual, message)
        result.update(role=item.get("role"), label=item.get("label"))
        if status == "fail":
            result["repair"] = item.get("repair") or "site.yml (%s)" % item.get("label")
            result["action"] = "change"
        results.append(result)
    return results


def _result(check, kind, status, expected, actual, message):
    check_id, title = check
    return {
        "id": check_id,
        "title": title,
        "kind": kind,
        "role": None,
        "label": None,
        "repair": REPAIRS["ROCM-GPU-000"] if status == "error" else REPAIRS.get(check_id, BY_A_PERSON),
        "severity": None,
        "status": status,
        "expected": expected,
        "actual": actual,
        "message": message,
        "diff": "",
        "action": "",
    }
