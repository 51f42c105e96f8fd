"""Preflight inputs for the partition decision tests: an 8x MI300X in any mode on Debian 12."""

import yaml
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.preflight import INPUT_KEYS

from fleet_testing.rocm_preflight_data import REPO, profile_facts

DEFAULTS = yaml.safe_load((REPO / "roles" / "preflight" / "defaults" / "main.yml").read_text())
DEBIAN_12 = {"os_family": "Debian", "distribution": "Debian", "distribution_version": "12.7",
             "kernel": "6.1.0-28-amd64", "processor": ["0", "AuthenticAMD", "AMD EPYC 9654"]}
MI300X_PAIRS = "NPS1 with SPX, DPX, QPX, CPX; NPS2 with DPX; NPS4 with QPX, CPX"


def mi300x(compute="SPX", memory="NPS1", parts=1, available_compute=("SPX", "DPX", "QPX", "CPX"),
           available_memory=("NPS1", "NPS2", "NPS4")):
    """The lab's 8x MI300X as gpu facts of schema 2, each physical GPU split into ``parts`` partitions."""
    base = profile_facts("mi300x-8")["devices"]
    devices = []
    for number, gpu in enumerate(base):
        for part in range(parts):
            device = dict(gpu, index=len(devices), partition_id=part, physical_gpu=number,
                          compute_partition=compute, memory_partition=memory,
                          available_compute_partitions=list(available_compute) if available_compute else None,
                          available_memory_partitions=list(available_memory) if available_memory else None)
            devices.append(device)
    return {"count": len(devices), "devices": devices}


def classes(gpu, name="mi300x"):
    return dict((device["index"], name) for device in gpu["devices"])


def inputs(**overrides):
    values = dict((key, DEFAULTS.get("preflight_" + key)) for key in INPUT_KEYS if key != "host")
    values.update(host="h1", workload="llm", **overrides)
    return values
