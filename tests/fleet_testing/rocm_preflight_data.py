"""Shared test data for the preflight decision tests: built-in catalog, matrix, driver lines; lab profiles as facts."""

from pathlib import Path

import yaml
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import normalize_rocm_version
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision import provisioning as decisions
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.drivers import choose_driver

from rocm_fleet.hardware.profile import load_profile

REPO = Path(__file__).resolve().parents[2]
VARS = REPO / "roles" / "preflight" / "vars"
GIB = 1024**3
CATALOG = yaml.safe_load((VARS / "gpu_catalog.yml").read_text())["preflight_gpu_catalog_builtin"]
MATRIX = yaml.safe_load((VARS / "support_matrix.yml").read_text())["preflight_support_matrix_builtin"]
DRIVERS = yaml.safe_load((VARS / "amdgpu_drivers.yml").read_text())["preflight_amdgpu_drivers_builtin"]

# Lab profile -> (class, devices, packages); the lab builds its simulated servers from these files.
LAB_PROFILES = {
    "mi300x-8": ("mi300x", 8, 8),
    "mi250x-8gcd": ("mi250x", 8, 4),
    "mi210-4-pcie": ("mi210", 4, 4),
    "w7900-2": ("w7900", 2, 2),
    "rx7900xtx-1": ("rx7900xtx", 1, 1),
    "rx6700xt-1": ("rx6700xt", 1, 1),
    "nogpu": (None, 0, 0),
}


def profile_facts(name):
    """The gpu fact the gpu_facts module reports for a lab profile's sysfs tree (sysfs fields only)."""
    profile = load_profile(name)
    devices = [
        {
            "index": index,
            "pci_bus": gpu.bus,
            "vendor_id": "0x%04x" % gpu.vendor_id,
            "device_id": "0x%04x" % gpu.device_id,
            "subsystem_device_id": "0x%04x" % gpu.subsystem_device_id,
            "product": None,
            "gfx_target": gpu.gfx_target,
            "vram_bytes": gpu.vram_bytes,
            "numa_node": gpu.numa_node,
            "kfd_node": profile.kfd_node_of_gpu(index),
            "render_node": "/dev/dri/renderD%d" % (128 + index),
        }
        for index, gpu in enumerate(profile.gpus)
    ]
    return {"count": len(devices), "devices": devices}


def device(index, device_id, gfx_target, vram_gib, subsystem=None, kfd_node=None):
    return {
        "index": index,
        "device_id": device_id,
        "subsystem_device_id": subsystem,
        "gfx_target": gfx_target,
        "vram_bytes": int(vram_gib * GIB),
        "kfd_node": index + 1 if kfd_node is None else kfd_node,
    }


def classify(*devices):
    return decisions.classify_gpus({"count": len(devices), "devices": list(devices)}, CATALOG)


def support(summary, rocm="6.4.1", os_family="Debian", os_version="12", kernel="6.1.0-28-amd64", **kwargs):
    """check_support as decide() calls it: with the driver table and the release's own driver line."""
    driver, _ = choose_driver(MATRIX, DRIVERS, normalize_rocm_version(rocm))
    kwargs.setdefault("driver", driver)
    return decisions.check_support(summary, MATRIX, rocm, os_family, os_version, kernel, drivers=DRIVERS, **kwargs)


def kinds(decision):
    return sorted(problem["what"] for problem in decision["problems"])
