"""The host-side GPU tables agree with roles/preflight/vars/gpu_catalog.yml, the one source of GPU model facts.

gpu_facts runs on the host and cannot read the role's YAML, so pci_ids.py (device ID -> product, LLVM target)
and gpu/partitions.py (partitions per compute mode, XCDs per device ID) keep their own copies; these tests hold
every fact they share with the catalog to it, both ways, and name the device ID and field that disagree. The
lab's hardware model (src/rocm_fleet/hardware, which cannot import the collection) is held to them too.
"""

from __future__ import annotations

import re

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import COMPUTE_PARTITIONS
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.partitions import MODE_PARTITIONS, XCDS_BY_DEVICE_ID
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.pci_ids import AMD_GPU_IDS
from fleet_testing.roles import load_yaml

from rocm_fleet.hardware import model as hardware_model
from rocm_fleet.hardware.profile import available_profiles, load_profile

CATALOG = load_yaml("preflight/vars/gpu_catalog.yml")["preflight_gpu_catalog_builtin"]
# The device IDs a host-side table names that no catalog class matches, each with the reason.
NOT_IN_CATALOG = {
    "AMD_GPU_IDS": {
        "0x6860": "Radeon Instinct MI25 (gfx900): gpu_facts names it; no ROCm the catalog covers supports gfx900",
    },
    "XCDS_BY_DEVICE_ID": {
        "0x74b9": "MI325X VF: partitions.py counts its XCDs; neither pci_ids.py nor the catalog lists it yet",
    },
}
# Words of a product name that say whose it is, not which product.
VENDOR_WORDS = {"amd", "radeon", "instinct", "pro"}


def classes_by_device_id(catalog):
    """{device ID: [class names]} of the catalog's match.device_ids."""
    found = {}
    for name, entry in catalog.items():
        for device_id in entry["match"]["device_ids"]:
            found.setdefault(device_id, []).append(name)
    return found


def model_words(product):
    """'AMD Radeon RX 6800 / 6800 XT' -> {'rx', '6800', 'xt'}: the words that name the product."""
    return set(re.split(r"[\s/]+", product.lower())) - VENDOR_WORDS - {""}


def pci_id_problems(catalog, table):
    """Each disagreement between pci_ids.AMD_GPU_IDS and the catalog, as a sentence naming the ID and field."""
    by_id, problems = classes_by_device_id(catalog), []
    exceptions = NOT_IN_CATALOG["AMD_GPU_IDS"]
    for device_id, (product, gfx_target) in sorted(table.items()):
        if device_id not in by_id:
            if device_id not in exceptions:
                problems.append("%s (%s): in pci_ids.AMD_GPU_IDS, no gpu_catalog.yml class matches it"
                                % (device_id, product))
            continue
        for name in by_id[device_id]:
            entry = catalog[name]
            if entry["gfx_target"] != gfx_target:
                problems.append("%s gfx_target: pci_ids.AMD_GPU_IDS says %s, gpu_catalog.yml class %s says %s"
                                % (device_id, gfx_target, name, entry["gfx_target"]))
            # A shared ID names its family ('RX 7900 XT/7900 XTX/7900 GRE'): the class's product is one of them.
            missing = model_words(entry["product"]) - model_words(product)
            if missing:
                problems.append("%s product: pci_ids.AMD_GPU_IDS names %r, which does not name gpu_catalog.yml class "
                                "%s's %r (lacks %s)" % (device_id, product, name, entry["product"],
                                                        ", ".join(sorted(missing))))
    for device_id in sorted(set(by_id) - set(table)):
        problems.append("%s: gpu_catalog.yml class %s matches it, pci_ids.AMD_GPU_IDS does not name it"
                        % (device_id, ", ".join(by_id[device_id])))
    for device_id in sorted(set(exceptions) - (set(table) - set(by_id))):
        problems.append("%s: NOT_IN_CATALOG lists it for AMD_GPU_IDS, but it is not an AMD_GPU_IDS ID the catalog "
                        "lacks" % device_id)
    return problems


def partition_problems(catalog, mode_partitions, xcds):
    """Each disagreement between gpu/partitions.py's tables and the catalog's partitions.compute counts."""
    by_id, problems = classes_by_device_id(catalog), []
    exceptions = NOT_IN_CATALOG["XCDS_BY_DEVICE_ID"]
    for name, entry in sorted(catalog.items()):
        compute = (entry.get("partitions") or {}).get("compute") or {}
        for mode, count in compute.items():
            if mode != "CPX" and mode_partitions.get(mode) != count:
                problems.append("%s: gpu_catalog.yml class %s gives %s partitions, partitions.MODE_PARTITIONS %s"
                                % (mode, name, count, mode_partitions.get(mode)))
        for device_id in entry["match"]["device_ids"] if compute else ():
            # CPX is one partition per XCD: the catalog's CPX count is the XCD count where it sources one.
            if device_id not in xcds:
                problems.append("%s: gpu_catalog.yml class %s has partitions, partitions.XCDS_BY_DEVICE_ID lacks it"
                                % (device_id, name))
            elif "CPX" in compute and xcds[device_id] != compute["CPX"]:
                problems.append("%s CPX: gpu_catalog.yml class %s gives %s partitions, partitions.XCDS_BY_DEVICE_ID "
                                "%s XCDs" % (device_id, name, compute["CPX"], xcds[device_id]))
    for device_id, count in sorted(xcds.items()):
        if device_id not in by_id:
            if device_id not in exceptions:
                problems.append("%s: in partitions.XCDS_BY_DEVICE_ID (%s XCDs), no gpu_catalog.yml class matches it"
                                % (device_id, count))
            continue
        for name in by_id[device_id]:
            if not (catalog[name].get("partitions") or {}).get("compute"):
                problems.append("%s: partitions.XCDS_BY_DEVICE_ID counts %s XCDs, gpu_catalog.yml class %s has no "
                                "partitions" % (device_id, count, name))
    for device_id in sorted(set(exceptions) - (set(xcds) - set(by_id))):
        problems.append("%s: NOT_IN_CATALOG lists it for XCDS_BY_DEVICE_ID, but it is not an XCDS_BY_DEVICE_ID ID "
                        "the catalog lacks" % device_id)
    return problems


def test_pci_ids_agree_with_the_catalog():
    assert pci_id_problems(CATALOG, AMD_GPU_IDS) == []


def test_partition_tables_agree_with_the_catalog():
    assert partition_problems(CATALOG, MODE_PARTITIONS, XCDS_BY_DEVICE_ID) == []


def test_the_mode_tables_name_every_compute_mode():
    # CPX has no fixed count: one partition per XCD.
    assert (*MODE_PARTITIONS, "CPX") == COMPUTE_PARTITIONS
    assert hardware_model.PARTITIONS_OF_MODE == MODE_PARTITIONS


@pytest.mark.parametrize("profile", [name for name in available_profiles() if load_profile(name).gpus])
def test_the_lab_hardware_is_what_the_tables_say(profile):
    for gpu in load_profile(profile).gpus:
        device_id = "0x%04x" % gpu.device_id
        assert device_id in AMD_GPU_IDS, "%s: device %s is not in pci_ids.AMD_GPU_IDS" % (profile, device_id)
        assert gpu.gfx_target == AMD_GPU_IDS[device_id][1], "%s: %s gfx_target" % (profile, device_id)
        if gpu.xcc_count > 1:
            assert gpu.xcc_count == XCDS_BY_DEVICE_ID[device_id], "%s: %s XCDs" % (profile, device_id)


@pytest.mark.parametrize("change, problem", [
    (lambda catalog, table: table.update({"0x74a1": ("AMD Instinct MI300X", "gfx90a")}),
     "0x74a1 gfx_target: pci_ids.AMD_GPU_IDS says gfx90a, gpu_catalog.yml class mi300x says gfx942"),
    (lambda catalog, table: table.update({"0x74a0": ("AMD Instinct MI300X", "gfx942")}),
     "0x74a0 product: pci_ids.AMD_GPU_IDS names 'AMD Instinct MI300X', which does not name gpu_catalog.yml class "
     "mi300a's 'AMD Instinct MI300A' (lacks mi300a)"),
    (lambda catalog, table: table.pop("0x7551"),
     "0x7551: gpu_catalog.yml class r9700 matches it, pci_ids.AMD_GPU_IDS does not name it"),
    (lambda catalog, table: catalog["mi50"]["match"]["device_ids"].remove("0x66a1"),
     "0x66a1 (AMD Radeon Pro VII/Radeon Instinct MI50): in pci_ids.AMD_GPU_IDS, no gpu_catalog.yml class matches it"),
])
def test_a_pci_id_disagreement_names_the_device_and_field(change, problem):
    catalog, table = load_yaml("preflight/vars/gpu_catalog.yml")["preflight_gpu_catalog_builtin"], dict(AMD_GPU_IDS)
    change(catalog, table)
    assert pci_id_problems(catalog, table) == [problem]


@pytest.mark.parametrize("change, problem", [
    (lambda catalog, modes, xcds: modes.update({"QPX": 3}),
     "QPX: gpu_catalog.yml class mi300x gives 4 partitions, partitions.MODE_PARTITIONS 3"),
    (lambda catalog, modes, xcds: xcds.update({"0x74a0": 8}),
     "0x74a0 CPX: gpu_catalog.yml class mi300a gives 6 partitions, partitions.XCDS_BY_DEVICE_ID 8 XCDs"),
    (lambda catalog, modes, xcds: xcds.pop("0x75a3"),
     "0x75a3: gpu_catalog.yml class mi355x has partitions, partitions.XCDS_BY_DEVICE_ID lacks it"),
    (lambda catalog, modes, xcds: xcds.update({"0x740f": 2}),
     "0x740f: partitions.XCDS_BY_DEVICE_ID counts 2 XCDs, gpu_catalog.yml class mi210 has no partitions"),
])
def test_a_partition_disagreement_names_the_device_and_field(change, problem):
    catalog = load_yaml("preflight/vars/gpu_catalog.yml")["preflight_gpu_catalog_builtin"]
    modes, xcds = dict(MODE_PARTITIONS), dict(XCDS_BY_DEVICE_ID)
    change(catalog, modes, xcds)
    assert problem in partition_problems(catalog, modes, xcds)
