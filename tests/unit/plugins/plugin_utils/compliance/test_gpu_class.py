"""GPU class checks against gpu facts as gpu_facts returns them (built here as plain dicts)."""

from pathlib import Path

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.compliance.gpu_class import (
    BY_A_PERSON,
    GPU_CHECKS,
    INVALID_EXPECT_ID,
    REPAIRS,
    evaluate_gpu,
)

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"


def fact(count=2, loaded=True, version="6.12.12", rocm="6.4.1-83"):
    devices = [
        {
            "index": index,
            "product": "AMD Radeon PRO W7900",
            "gfx_target": "gfx1100",
            "vram_bytes": 48 * 1024**3,
            "numa_node": 0,
        }
        for index in range(count)
    ]
    return {
        "count": count,
        "devices": devices,
        "topology": None,
        "driver": {"loaded": loaded, "version": version if loaded else None},
        "rocm": {"version": rocm, "path": "/opt/rocm-6.4.1"},
        "sources": {"sysfs": "ok"},
    }


def results(gpu_expect, gpu):
    return {entry["id"]: entry for entry in evaluate_gpu(gpu_expect, gpu)}


def test_driver_loaded_with_version_pattern():
    assert results({"driver": {"loaded": True, "version": "6.12.*"}}, fact())["ROCM-DRV-001"]["status"] == "pass"
    wrong = results({"driver": {"version": "6.10.5"}}, fact())["ROCM-DRV-001"]
    assert (wrong["status"], wrong["message"]) == ("fail", "amdgpu 6.12.12 is loaded, expected 6.10.5")
    unloaded = results({"driver": {"loaded": True}}, fact(loaded=False))["ROCM-DRV-001"]
    assert unloaded["message"] == "amdgpu is not loaded"


# The driver line's kernel-module version against what the loaded amdgpu reports: 6.16.13 is
# what ROCm/ROCm#5915's modinfo prints for amdgpu-dkms 30.30 (test_rocm_drivers reads that capture);
# the banner is amd-smi 26.2.2's `static --driver` of an in-tree amdgpu (ROCm/ROCm#6074).
LINE = {"loaded": True, "line": "30.30.3", "version": "6.16.13", "kernel": "6.8.0-45-generic"}
BANNER = (CAPTURES / "rx7900xtx-2gpu_rocm-na-amdsmi26.2.2_amd-smi-static-driver_version-is-kernel-banner.txt"
          ).read_text().splitlines()[3].split("VERSION: ", 1)[1]


def test_driver_line_module_version():
    ok = results({"driver": LINE}, fact(version="6.16.13"))["ROCM-DRV-001"]
    assert (ok["status"], ok["message"]) == ("pass", "amdgpu 6.16.13 (driver line 30.30.3) is loaded")
    older = results({"driver": LINE}, fact(version="6.12.12"))["ROCM-DRV-001"]
    assert (older["status"], older["message"]) == (
        "fail", "amdgpu 6.12.12 is loaded, expected amdgpu-dkms 6.16.13 of driver line 30.30.3")
    # The driver line is not the module version: a 30.30.x module reports 6.16.13, never 30.30*.
    assert results({"driver": LINE}, fact(version="30.30.3"))["ROCM-DRV-001"]["status"] == "fail"


def test_an_in_tree_driver_is_named_as_such_not_as_a_version_mismatch():
    banner = results({"driver": LINE}, fact(version=BANNER))["ROCM-DRV-001"]
    assert (banner["status"], banner["message"]) == (
        "fail", "the in-tree amdgpu of kernel 6.19.11 is loaded, not amdgpu-dkms 6.16.13 of driver line 30.30.3")
    cut = results({"driver": LINE}, fact(version="Linuxver"))["ROCM-DRV-001"]
    assert cut["message"] == "the in-tree amdgpu is loaded, not amdgpu-dkms 6.16.13 of driver line 30.30.3"
    release = results({"driver": LINE}, fact(version="6.8.0-45-generic"))["ROCM-DRV-001"]
    assert release["message"].startswith("the in-tree amdgpu of kernel 6.8.0-45-generic is loaded")
    silent = results({"driver": LINE}, fact(version=None))["ROCM-DRV-001"]
    assert (silent["status"], silent["actual"]["kind"]) == ("fail", "unknown")
    assert "reports no driver version (none; the in-tree driver has none)" in silent["message"]


def test_an_unknown_module_version_is_never_healthy():
    unknown = results({"driver": dict(LINE, version=None)}, fact(version="6.16.13"))["ROCM-DRV-001"]
    assert unknown["status"] == "error"
    assert unknown["message"].startswith("the kernel-module version of amdgpu driver line 30.30.3 is unknown")
    nothing = results({"driver": {"loaded": True, "line": None, "version": None}}, fact())["ROCM-DRV-001"]
    assert nothing["status"] == "error" and "(none decided)" in nothing["message"]
    # Without a line (the distribution's driver serves) only loading is checked.
    assert results({"driver": {"loaded": True}}, fact(version=BANNER))["ROCM-DRV-001"]["status"] == "pass"


def test_rocm_version():
    assert results({"rocm_version": "6.4.1*"}, fact())["ROCM-PKG-001"]["status"] == "pass"
    other = results({"rocm_version": "7.2.3*"}, fact())["ROCM-PKG-001"]
    assert other["message"] == "the default ROCm release (/opt/rocm-6.4.1) is 6.4.1-83, expected 7.2.3*"
    missing = results({"rocm_version": "6.4.1*"}, fact(rocm=None))["ROCM-PKG-001"]
    assert missing["message"] == "the default ROCm release (/opt/rocm-6.4.1) has no .info/version, expected 6.4.1*"
    gone = dict(fact(), rocm={"version": None, "path": None})
    assert results({"rocm_version": "10.1.0"}, gone)["ROCM-PKG-001"]["message"] == (
        "no default ROCm release is installed, expected 10.1.0")


def test_products_per_gpu_and_vram():
    checks = results(
        {"products": ["AMD Radeon PRO W7900", "AMD Radeon RX 7900 XTX"], "vram_bytes_min": 64 * 1024**3}, fact()
    )
    assert checks["ROCM-GPU-002"]["message"] == "GPU 1: AMD Radeon PRO W7900, expected AMD Radeon RX 7900 XTX"
    assert checks["ROCM-GPU-004"]["status"] == "fail"
    assert checks["ROCM-GPU-004"]["message"].startswith("less than 68719476736 bytes of VRAM: GPU 0: 51539607552 bytes")


def test_topology_without_a_source_is_an_error_and_one_gpu_has_no_links():
    assert results({"topology": {"link_type": "XGMI"}}, fact())["ROCM-TOPO-001"]["status"] == "error"
    assert results({"topology": {"link_type": "XGMI"}}, fact(count=1))["ROCM-TOPO-001"]["status"] == "pass"


def test_result_shape_has_no_role_and_no_label_but_says_what_repairs_it():
    entry = results({"count": 2}, fact())["ROCM-GPU-001"]
    assert (entry["kind"], entry["role"], entry["label"], entry["status"]) == ("gpu", None, None, "pass")
    # no task of a role repairs the hardware: a person does
    assert entry["repair"] == BY_A_PERSON
    assert "task" not in entry


def test_each_gpu_check_says_what_repairs_it():
    expect = {"count": 3, "driver": {"loaded": True, "version": "6.10.*"}, "rocm_version": "6.3.3*"}
    checks = results(expect, fact())
    assert checks["ROCM-DRV-001"]["repair"] == REPAIRS["ROCM-DRV-001"]
    assert checks["ROCM-PKG-001"]["repair"] == REPAIRS["ROCM-PKG-001"]
    assert checks["ROCM-GPU-001"]["repair"] == BY_A_PERSON
    assert all(entry["status"] == "fail" and entry["label"] is None for entry in checks.values())
    invalid = results({"cuont": 2}, fact())[INVALID_EXPECT_ID[0]]
    assert (invalid["status"], invalid["repair"]) == ("error", REPAIRS[INVALID_EXPECT_ID[0]])


def test_every_repair_names_a_known_check():
    known = {check_id for check_id, _title in GPU_CHECKS.values()} | {INVALID_EXPECT_ID[0]}
    assert set(REPAIRS) <= known


def test_a_product_pattern_covers_the_variants_of_one_product():
    # The compliance role expects "<catalog product>*": sysfs names an MI300X "AMD Instinct MI300X OAM".
    assert results({"products": "AMD Radeon PRO W7900*"}, fact(count=1))["ROCM-GPU-002"]["status"] == "pass"
    wrong = results({"products": "AMD Instinct MI300X*"}, fact(count=1))["ROCM-GPU-002"]
    assert wrong["status"] == "fail"
    assert wrong["message"] == "GPU 0: AMD Radeon PRO W7900, expected AMD Instinct MI300X*"


def test_checks_that_need_the_driver_are_skipped_while_it_is_not_loaded():
    gpu = {"count": 1, "devices": [{"product": "AMD Radeon RX 7900 XT/7900 XTX/7900 GRE", "vram_bytes": None,
                                    "gfx_target": "gfx1100", "numa_node": 0}],
           "topology": None, "driver": {"loaded": False, "version": None}}
    expect = {"count": 1, "products": "AMD Radeon RX 7900 XTX*", "vram_bytes_min": 20 << 30,
              "gfx_targets": ["gfx1100"], "driver": {"loaded": True, "version": "6.12.12*"}}
    statuses = {result["id"]: result["status"] for result in evaluate_gpu(expect, gpu)}
    assert statuses == {"ROCM-GPU-001": "pass", "ROCM-GPU-002": "skipped", "ROCM-GPU-003": "pass",
                        "ROCM-GPU-004": "skipped", "ROCM-DRV-001": "fail"}
