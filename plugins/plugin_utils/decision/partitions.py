# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU partition modes: the catalog's data, the wanted modes checked before any change, and the plan.

* catalog_partition_problems(name, partitions): what is wrong with a class's ``partitions`` data.
* physical_gpus(gpu): the gpu fact (schema 2) as physical GPUs, with their partitions' modes.
* partition_decision(host, gpu, classes_by_index, catalog, compute, memory): the wanted modes of a
  host, its problems (an invalid pair, a mode the GPU does not offer) and the logical GPU count the
  modes give (physical GPUs x partitions of the mode).
* plan_partitions(gpus, compute, memory, catalog, classes, rocm_version): the ordered steps.

AMD's order (ROCm/rocm-systems projects/amdsmi/docs/conceptual/partition.md, "From concept to
action"): set the memory (NPS) mode, reload amdgpu (it applies the memory mode to every GPU of the
hive; before ROCm 7.0 amd-smi reloads it itself), read the GPUs again (the reload may reset the
compute mode and renumbers the logical GPUs), then set the compute mode, which needs no reload.
So a plan with a memory step ends there: the caller reloads, gathers the facts again and plans
again, which then gives the compute steps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import COMPUTE_PARTITIONS, MEMORY_PARTITIONS
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import version_key

MEMORY_CHANGES = ("driver_reload", None)
# amd-smi set reloads amdgpu itself after a memory mode change before this release (partition.md).
TOOL_RELOADS_BELOW = (7, 0, 0)


def catalog_partition_problems(where, partitions):
    """Sentences for what is wrong with one class's ``partitions`` (null or absent: not sourced)."""
    if partitions is None:
        return []
    if not isinstance(partitions, dict):
        return ["%s: partitions must be a mapping or null" % where]
    problems = []
    compute = partitions.get("compute")
    if not isinstance(compute, dict) or not compute:
        problems.append("%s: partitions.compute must map compute modes to partition counts" % where)
        compute = {}
    for mode, count in compute.items():
        if mode not in COMPUTE_PARTITIONS:
            problems.append("%s: partitions.compute names %s, not one of %s"
                            % (where, mode, ", ".join(COMPUTE_PARTITIONS)))
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            problems.append("%s: partitions.compute.%s must be a positive partition count" % (where, mode))
    memory = partitions.get("memory")
    if not isinstance(memory, list) or not memory:
        problems.append("%s: partitions.memory must list memory modes" % where)
        memory = []
    for mode in memory:
        if mode not in MEMORY_PARTITIONS:
            problems.append("%s: partitions.memory names %s, not one of %s"
                            % (where, mode, ", ".join(MEMORY_PARTITIONS)))
    pairs = partitions.get("pairs")
    if not isinstance(pairs, dict) or not pairs:
        problems.append("%s: partitions.pairs must map memory modes to the compute modes valid with them" % where)
        pairs = {}
    for mode, modes in pairs.items():
        if mode not in memory:
            problems.append("%s: partitions.pairs names memory mode %s, which partitions.memory lacks" % (where, mode))
        unknown = [item for item in (modes if isinstance(modes, list) else [modes]) if item not in compute]
        if not isinstance(modes, list) or unknown:
            problems.append("%s: partitions.pairs.%s must list compute modes of partitions.compute" % (where, mode))
    if partitions.get("memory_change", None) not in MEMORY_CHANGES:
        problems.append("%s: partitions.memory_change must be driver_reload or null" % where)
    if not str(partitions.get("source") or "").strip():
        problems.append("%s: partitions has no source" % where)
    return problems


def allowed_pairs_text(partitions):
    """'NPS1 with SPX, DPX, QPX, CPX; NPS4 with QPX, CPX' in the catalog's order."""
    pairs = (partitions.get("pairs") or {}).items()
    return "; ".join("%s with %s" % (memory, ", ".join(modes)) for memory, modes in pairs)


def physical_gpus(gpu):
    """The physical GPUs of a gpu fact: [{physical_gpu, indices, primary, pci_bus, device_id, product,
    compute, memory, available_compute, available_memory}], in the order of their first logical device.

    A device without physical_gpu (schema 1, or a source that could not tell) is a physical GPU of its own.
    ``primary`` is the logical index of partition 0 (amd-smi's GPU ID for a set command).
    """
    groups, order = {}, []
    for device in (gpu or {}).get("devices") or []:
        key = device.get("physical_gpu")
        key = ("physical", key) if key is not None else ("index", device.get("index"))
        if key not in groups:
            order.append(key)
            groups[key] = []
        groups[key].append(device)
    result = []
    for number, key in enumerate(order):
        parts = groups[key]
        primary = next((part for part in parts if part.get("partition_id") == 0), parts[0])
        result.append({
            "physical_gpu": key[1] if key[0] == "physical" else number,
            "indices": [part.get("index") for part in parts],
            "primary": primary.get("index"),
            "pci_bus": primary.get("pci_bus"),
            "device_id": primary.get("device_id"),
            "product": primary.get("product"),
            "compute": _shared(parts, "compute_partition"),
            "memory": _shared(parts, "memory_partition"),
            "available_compute": _shared(parts, "available_compute_partitions"),
            "available_memory": _shared(parts, "available_memory_partitions"),
        })
    return result


def _shared(parts, key):
    values = [part.get(key) for part in parts if part.get(key) is not None]
    return values[0] if values else None


def describe_gpu(entry):
    """'GPU 0 (PCI 0000:11:00.0)' with the logical index of its primary partition."""
    text = "GPU %s" % entry["primary"]
    if entry.get("pci_bus"):
        text += " (PCI %s)" % entry["pci_bus"]
    return text


def _mode(value, modes):
    if value in (None, ""):
        return None
    text = str(value).strip().upper()
    return text if text in modes else False


def wanted_modes(compute, memory):
    """(compute, memory, problems): the declared modes upper-cased; a name that is no mode is a problem."""
    problems = []
    wanted = []
    for variable, value, modes in (("preflight_compute_partition", compute, COMPUTE_PARTITIONS),
                                   ("preflight_memory_partition", memory, MEMORY_PARTITIONS)):
        mode = _mode(value, modes)
        if mode is False:
            problems.append("%s is %s, not one of %s" % (variable, value, ", ".join(modes)))
            mode = None
        wanted.append(mode)
    return wanted[0], wanted[1], problems


def partition_decision(host, gpu, classes_by_index, catalog, compute=None, memory=None):
    """{compute, memory, physical_gpu_count, expected_gpu_count, problems} for one host.

    ``classes_by_index`` maps a logical GPU index to its catalog class. Nothing wanted (both
    null): no problems, and the expected count is None (the modes are left as they are).
    A mode left null keeps each GPU's current mode, which then has to form a valid pair with
    the declared one. The compute modes a GPU lists as available hold only under its current
    memory mode (amdgpu offers the modes valid for it), so they are checked only when the
    memory mode stays.
    """
    compute, memory, problems = wanted_modes(compute, memory)
    gpus = physical_gpus(gpu)
    result = {"compute": compute, "memory": memory, "physical_gpu_count": len(gpus),
              "expected_gpu_count": None, "problems": problems}
    if problems or (compute is None and memory is None):
        return result
    reasons, total = {}, 0
    for entry in gpus:
        name = classes_by_index.get(entry["primary"])
        partitions = (catalog.get(name) or {}).get("partitions") if name else None
        reason, count = _gpu_problem(entry, name, partitions, compute, memory)
        if reason:
            reasons.setdefault(reason, []).append(entry)
        total = None if total is None or count is None else total + count
    for reason, entries in reasons.items():
        problems.append("host %s: %s: %s" % (host, ", ".join(describe_gpu(entry) for entry in entries), reason))
    result["expected_gpu_count"] = None if problems else total
    return result


def _gpu_problem(entry, name, partitions, compute, memory):
    """(reason or None, logical GPUs this GPU gives in the wanted modes or None)."""
    if not name:
        return "its GPU class is unknown, so no partition mode can be checked", None
    if not partitions:
        return ("GPU class %s has no sourced partition modes in the GPU catalog (add partitions with its source "
                "through preflight_gpu_catalog_extra)" % name), None
    want_compute = compute or entry["compute"]
    want_memory = memory or entry["memory"]
    pairs = "allowed (memory, compute) pairs for %s: %s" % (name, allowed_pairs_text(partitions))
    if want_compute is not None and want_compute not in partitions["compute"]:
        return "compute mode %s is not one %s offers; %s" % (want_compute, name, pairs), None
    if want_memory is not None and want_memory not in partitions["memory"]:
        return "memory mode %s is not one %s offers; %s" % (want_memory, name, pairs), None
    if want_compute is None or want_memory is None:
        missing = "compute" if want_compute is None else "memory"
        return ("its current %s mode is unknown, so %s %s cannot be checked as a pair; declare both "
                "preflight_compute_partition and preflight_memory_partition"
                % (missing, "compute" if compute else "memory", compute or memory)), None
    if want_compute not in (partitions["pairs"].get(want_memory) or []):
        return "compute %s with memory %s is not a valid pair; %s" % (want_compute, want_memory, pairs), None
    available = entry["available_memory"]
    if available is not None and want_memory not in available:
        return ("the GPU lists memory modes %s as available, not %s"
                % (", ".join(available), want_memory)), None
    available = entry["available_compute"]
    if available is not None and want_memory == entry["memory"] and want_compute not in available:
        return ("the GPU lists compute modes %s as available in %s, not %s"
                % (", ".join(available), want_memory, want_compute)), None
    return None, partitions["compute"][want_compute]


def expected_text(decision):
    """'8 physical GPUs x 8 (CPX) = 64 logical GPUs' for a report; None when nothing is wanted."""
    if not decision or decision.get("expected_gpu_count") is None:
        return None
    return "%d physical GPUs in %s/%s = %d logical GPUs" % (
        decision["physical_gpu_count"], decision["compute"] or "current compute",
        decision["memory"] or "current memory", decision["expected_gpu_count"])


def plan_partitions(gpus, compute=None, memory=None, rocm_version=None):
    """The next steps towards the wanted modes, from ``gpus`` (physical_gpus() of the current facts).

    {steps: [{gpu, primary, pci_bus, set, from, to}], phase: memory|compute|None, driver_reload,
    reload_by_tool, replan, commands}. A memory step comes first and alone: its mode takes effect on
    an amdgpu reload, for every GPU of the hive at once (``driver_reload``; ``reload_by_tool`` when
    amd-smi before ROCm 7.0 reloads it itself), and ``replan`` asks for fresh facts and another plan,
    since the reload renumbers the logical GPUs and may reset the compute mode. Compute steps follow
    when the memory modes are all as wanted. A GPU whose current mode is unknown gets a step (the
    mode cannot be shown to be right). The commands are amd-smi's, with --gpu taking the logical
    index of each GPU's primary partition.
    """
    steps = []
    for kind, wanted, key in (("memory", memory, "memory"), ("compute", compute, "compute")):
        if wanted is None:
            continue
        steps = [{"gpu": entry["physical_gpu"], "primary": entry["primary"], "pci_bus": entry["pci_bus"],
                  "set": kind, "from": entry[key], "to": wanted} for entry in gpus if entry[key] != wanted]
        if steps:
            break
    phase = steps[0]["set"] if steps else None
    reload_by_tool = False
    if phase == "memory":
        version = version_key(rocm_version) if rocm_version else None
        reload_by_tool = bool(version) and tuple(version) < TOOL_RELOADS_BELOW
    return {"steps": steps, "phase": phase, "driver_reload": phase == "memory", "reload_by_tool": reload_by_tool,
            "replan": phase == "memory", "commands": _commands(steps, gpus)}


def _commands(steps, gpus):
    if not steps:
        return []
    kind, mode = steps[0]["set"], steps[0]["to"]
    if kind == "memory":
        # amd-smi sets the memory mode of the hive; AMD's guides give it without --gpu.
        return [["amd-smi", "set", "--memory-partition", mode]]
    targets = [step["primary"] for step in steps]
    if len(targets) == len(gpus):
        return [["amd-smi", "set", "--gpu", "all", "--compute-partition", mode]]
    return [["amd-smi", "set", "--gpu", str(target), "--compute-partition", mode] for target in targets]


def plan_text(plan):
    """One line per step for a report: 'GPU 0 (PCI ...): memory NPS1 -> NPS4'."""
    lines = ["physical GPU %s (%s): %s %s -> %s" % (
        step["gpu"], "logical GPU %s" % step["primary"] + (", PCI %s" % step["pci_bus"] if step["pci_bus"] else ""),
        step["set"], step["from"] or "unknown", step["to"]) for step in plan["steps"]]
    if plan["driver_reload"]:
        lines.append("then amdgpu reloads%s, and the facts are read again before the compute mode"
                     % (" (amd-smi does it itself before ROCm 7.0)" if plan["reload_by_tool"] else ""))
    return lines
