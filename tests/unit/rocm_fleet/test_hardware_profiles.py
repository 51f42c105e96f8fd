"""Hardware profiles: loading, validation errors, fault variants, the topology they imply, their KFD
rendering, and the documented limits of the tools that read them."""

from pathlib import Path

import pytest
import yaml
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import DEVICE_KEYS, TOPOLOGY_KEYS
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi.text import parse_rocm_smi_text
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.sysfs.devices import collect_sysfs
from fleet_testing.tool_limits import LIMITS, NOT_THE_GPU, UNKNOWN, limits_for, upstream_version

from rocm_fleet.hardware import ProfileError, available_profiles, load_profile, profile_from_dict
from rocm_fleet.hardware.profile import PROFILE_DIR
from rocm_fleet.hardware.render import DeviceNode, render_profile
from rocm_fleet.hardware.render_kfd import NODE_DIRECTORIES
from rocm_fleet.hardware.sandbox import tool_root_script

CAPTURES = Path(__file__).resolve().parents[2] / "fixtures" / "captures"
EXPECTED_PROFILES = {"mi300x-8", "mi250x-8gcd", "mi210-4-pcie", "w7900-2", "rx7900xtx-1", "rx6700xt-1", "nogpu"}


def profile_data(name):
    return yaml.safe_load((PROFILE_DIR / ("%s.yml" % name)).read_text())


def test_every_required_profile_exists_and_loads():
    assert set(available_profiles()) >= EXPECTED_PROFILES
    for name in available_profiles():
        profile = load_profile(name)
        assert profile.name == name
        assert profile.sources, "%s cites no sources" % name


@pytest.mark.parametrize(
    ("name", "gpus", "device_id", "gfx", "vram_gib", "pci_class"),
    [
        ("mi300x-8", 8, 0x74A1, "gfx942", 192, 0x120000),
        ("mi250x-8gcd", 8, 0x7408, "gfx90a", 64, 0x038000),
        ("mi210-4-pcie", 4, 0x740F, "gfx90a", 64, 0x038000),
        ("w7900-2", 2, 0x7448, "gfx1100", 48, 0x030000),
        ("rx7900xtx-1", 1, 0x744C, "gfx1100", 24, 0x030000),
        ("rx6700xt-1", 1, 0x73DF, "gfx1031", 12, 0x030000),
    ],
)
def test_profile_identity(name, gpus, device_id, gfx, vram_gib, pci_class):
    profile = load_profile(name)
    assert len(profile.gpus) == gpus
    assert {gpu.device_id for gpu in profile.gpus} == {device_id}
    assert {gpu.gfx_target for gpu in profile.gpus} == {gfx}
    assert {gpu.vram_bytes for gpu in profile.gpus} == {vram_gib * 1024**3}
    assert {gpu.pci_class for gpu in profile.gpus} == {pci_class}


def test_mi300x_matches_the_amd_smi_topology_capture():
    profile = load_profile("mi300x-8")
    assert [gpu.bus[5:7] for gpu in profile.gpus] == ["0c", "22", "38", "5c", "9f", "af", "bf", "df"]
    assert [gpu.numa_node for gpu in profile.gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    topology = profile.expected_topology()
    off_diagonal = [(i, j) for i in range(8) for j in range(8) if i != j]
    assert {topology["link_type"][i][j] for i, j in off_diagonal} == {"XGMI"}
    assert {topology["weight"][i][j] for i, j in off_diagonal} == {15}
    assert {topology["hops"][i][j] for i, j in off_diagonal} == {1}


def test_mi250x_links_follow_the_xgmi_num_links_capture():
    text = (CAPTURES / "mi250x-8gcd_sysfs-drm-xgmi_num_links.txt").read_text()
    counts = [[int(value) for value in line.split()] for line in text.splitlines() if line.strip()]
    topology = load_profile("mi250x-8gcd").expected_topology()
    for i in range(8):
        for j in range(8):
            if i != j:
                assert topology["weight"][i][j] == (15 if counts[i][j] else 30), (i, j)
                assert (topology["link_type"][i][j], topology["hops"][i][j]) == ("XGMI", 1)


def test_pcie_profile_reproduces_the_4numa_showtopo_capture():
    captured = parse_rocm_smi_text((CAPTURES / "unknown-4gpu-pcie-4numa_rocm5.x_rocm-smi-showtopo.txt").read_text())
    expected = load_profile("mi210-4-pcie").expected_topology()
    for key in ("link_type", "hops", "weight"):
        assert expected[key] == captured["topology"][key]


def test_two_gpus_on_one_numa_node_weigh_40_over_2_hops():
    topology = load_profile("w7900-2").expected_topology()
    assert (topology["link_type"][0][1], topology["hops"][0][1], topology["weight"][0][1]) == ("PCIE", 2, 40)


def test_nogpu_has_no_gpus_and_no_driver():
    profile = load_profile("nogpu")
    assert profile.gpus == () and not profile.driver_loaded
    assert profile.expected_topology()["link_type"] == []


def test_without_gpu_renumbers_the_links():
    profile = load_profile("mi250x-8gcd")
    smaller = profile.without_gpu(0)
    assert len(smaller.gpus) == 7 and smaller.gpus[0].bus == profile.gpus[1].bus
    # old pair 1-2 (no direct link, weight 30) is now pair 0-1
    assert smaller.link(0, 1).weight == profile.link(1, 2).weight == 30
    assert all(0 <= i < 7 for pair in smaller.links for i in pair)
    assert len(smaller.links) == 21


def test_with_link_degrades_and_restores_xgmi():
    profile = load_profile("mi300x-8")
    degraded = profile.with_link(0, 4, "PCIE")
    assert degraded.link(0, 4) is None and profile.link(0, 4) is not None
    topology = degraded.expected_topology()
    # cross-socket through the CPUs: 20 + 20 + default SLIT remote distance 20
    assert (topology["link_type"][4][0], topology["hops"][4][0], topology["weight"][4][0]) == ("PCIE", 3, 60)
    assert degraded.with_link(0, 4, "XGMI").link(0, 4).weight == 15


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("gpus"), "gpus: missing"),
        (lambda d: d.update(colour="red"), "unknown keys ['colour']"),
        (lambda d: d["gpus"][0].update(bus="0C:00.0"), "gpus[0].bus"),
        (lambda d: d["gpus"][1].update(numa_node=7), "gpus[1].numa_node: 7 is not one of"),
        (lambda d: d["gpu_model"].pop("vram_bytes"), "missing ['vram_bytes']"),
        (lambda d: d["gpu_model"].update(vram_bytes="192GiB"), "gpus[0].vram_bytes: must be an integer"),
        (lambda d: d["gpu_model"].update(gfx_target="942"), "gfx_target"),
        (lambda d: d["gpu_model"].update(vbios_version="D65209"), "vbios_version: must look like 113-<SKU>-<build>"),
        (lambda d: d.update(xgmi={"pairs": [{"gpus": [0, 8]}]}), "xgmi.pairs[0]: GPU indices"),
        (lambda d: d.update(numa_distance=[[10, 32], [31, 10]]), "numa_distance: not symmetric"),
        (lambda d: d["cpus"].reverse(), "numa_node values must be 0..1 in order"),
        (lambda d: d["gpus"][1].update(bus=d["gpus"][0]["bus"]), "PCI bus addresses repeat"),
        (lambda d: d.update(driver={"loaded": True}), "driver.version"),
    ],
)
def test_invalid_profiles_name_the_offending_key(change, message):
    data = profile_data("mi300x-8")
    change(data)
    with pytest.raises(ProfileError) as error:
        profile_from_dict(data, origin="broken.yml")
    assert "broken.yml" in str(error.value)
    assert message in str(error.value)


def test_unknown_profile_lists_the_known_ones():
    with pytest.raises(ProfileError, match=r"known profiles: .*mi300x-8"):
        load_profile("mi999-16")


def test_invalid_yaml_is_a_profile_error(tmp_path):
    path = tmp_path / "bad.yml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(ProfileError, match="not valid YAML"):
        load_profile(path)


def test_fault_helpers_reject_bad_indexes():
    profile = load_profile("w7900-2")
    with pytest.raises(ProfileError, match="has no GPU 2"):
        profile.without_gpu(2)
    with pytest.raises(ProfileError):
        profile.with_link(0, 0, "XGMI")
    with pytest.raises(ProfileError):
        profile.with_link(0, 1, "NVLINK")


def kfd_nodes(tmp_path, name):
    render_profile(load_profile(name), tmp_path)
    return tmp_path / "sys/devices/virtual/kfd/kfd/topology/nodes"


def link_targets(directory):
    return sorted(
        (int(props["node_to"]), int(props["weight"]), int(props["type"]))
        for props in (
            dict(line.split() for line in path.read_text().splitlines()) for path in directory.glob("*/properties")
        )
    )


def test_every_kfd_node_has_the_directories_the_kernel_creates(tmp_path):
    nodes = kfd_nodes(tmp_path, "w7900-2")
    for node in nodes.iterdir():
        assert sorted(path.name for path in node.iterdir() if path.is_dir()) == sorted(NODE_DIRECTORIES), node


def test_p2p_links_are_the_kernels_indirect_links_to_the_other_cpu_nodes(tmp_path):
    # kfd_create_indirect_link_prop: GPU -> each other CPU node, weight = PCIe 20 + SLIT distance;
    # large-BAR GPUs get the reverse link in that CPU node (mi300x-8: GPUs 0-3 on NUMA 0, 4-7 on NUMA 1).
    nodes = kfd_nodes(tmp_path, "mi300x-8")
    remote = 20 + load_profile("mi300x-8").numa_distance[0][1]
    assert link_targets(nodes / "2/p2p_links") == [(1, remote, 2)]
    assert link_targets(nodes / "6/p2p_links") == [(0, remote, 2)]
    assert link_targets(nodes / "0/p2p_links") == [(node, remote, 2) for node in (6, 7, 8, 9)]
    properties = dict(line.split() for line in (nodes / "0/properties").read_text().splitlines())
    assert properties["p2p_links_count"] == "4"


def test_one_numa_node_has_no_indirect_links(tmp_path):
    nodes = kfd_nodes(tmp_path, "w7900-2")
    assert all(not any((node / "p2p_links").iterdir()) for node in nodes.iterdir())


def test_rendered_p2p_links_leave_the_sysfs_view_unchanged(tmp_path):
    nodes = kfd_nodes(tmp_path, "mi300x-8")
    state, report = collect_sysfs(str(nodes.parents[6]))
    assert state == "ok" and report["topology"] == load_profile("mi300x-8").expected_topology()


@pytest.mark.parametrize(
    ("debian", "upstream"),
    [("6.1.2+ds-2", "6.1.2"), ("10.1-1", "10.1"), ("1:6.4.1-1.1", "6.4.1"), ("7.2.4-1", "7.2.4")],
)
def test_upstream_version_of_a_debian_version(debian, upstream):
    assert upstream_version(debian) == upstream


def test_a_tool_version_nobody_documented_is_held_to_the_newest_known_limits():
    limits, known = limits_for("amd-smi", "11.0")
    assert known == "10.1" and limits["device_id"].shows == UNKNOWN
    limits, known = limits_for("rocm-smi", "6.1.2")
    assert known == "6.1.2" and limits == {}


def test_every_documented_limit_names_a_report_field_and_why():
    for (tool, version), limits in LIMITS.items():
        for limit in limits:
            assert limit.field in DEVICE_KEYS + TOPOLOGY_KEYS, (tool, version, limit)
            assert limit.shows in (UNKNOWN, NOT_THE_GPU) and len(limit.why) > 40, (tool, version, limit)


def test_tool_root_script_mounts_what_the_tools_open(tmp_path):
    script = tool_root_script("/roots/tools-trixie", tmp_path, [DeviceNode("/dev/kfd", 234, 0)])
    assert "mount -o remount,bind,ro /roots/tools-trixie" in script
    for mount_point in ("/sys", "/proc", "/dev", "/dev/shm", "/tmp"):
        assert " /roots/tools-trixie%s\n" % mount_point in script
    assert "mknod -m 0666 /roots/tools-trixie/dev/kfd c 234 0" in script
    assert script.endswith('exec chroot /roots/tools-trixie "$@"')


def properties_of(path):
    return dict(line.split() for line in path.read_text().splitlines())


def test_cpx_nps4_profile_has_a_kfd_node_and_drm_slot_per_partition(tmp_path):
    profile = load_profile("mi300x-8-cpx-nps4")
    result = render_profile(profile, tmp_path)
    sys_dir = tmp_path / "sys"
    nodes = sys_dir / "devices/virtual/kfd/kfd/topology/nodes"
    assert len(list(nodes.iterdir())) == 2 + 64
    gpu = profile.gpus[0]
    first, second = properties_of(nodes / "2/properties"), properties_of(nodes / "3/properties")
    # kfd_topology_add_device: BDF | partition; same domain, unique_id and hive; own gpu_id and render minor.
    assert (int(first["location_id"]), int(second["location_id"])) == (gpu.location_id, gpu.location_id | 1)
    assert first["unique_id"] == second["unique_id"] and first["hive_id"] == second["hive_id"] != "0"
    assert (nodes / "2/gpu_id").read_text() != (nodes / "3/gpu_id").read_text()
    assert (first["drm_render_minor"], second["drm_render_minor"]) == ("128", "129")
    # 38 CUs, one XCC each; the mem bank holds 1/8 of the GPU (the capture's 25767706624 B in NPS1 and NPS4).
    assert (first["simd_count"], first["num_xcc"]) == (str(38 * 4), "1")
    bank = properties_of(nodes / "3/mem_banks/0/properties")
    assert int(bank["size_in_bytes"]) == 25767706624 == gpu.vram_bytes // 8
    # Partition 0 below the PCI device, partitions 1-7 on amdxcp's platform devices.
    pci = sys_dir / "bus/pci/devices" / gpu.bus
    assert sorted(path.name for path in (pci / "drm").iterdir()) == ["card0", "renderD128"]
    xcp = sys_dir / "devices/platform/amdgpu_xcp.0"
    assert sorted(path.name for path in (xcp / "drm").iterdir()) == ["card1", "renderD129"]
    assert (sys_dir / "class/drm/renderD129/device").resolve() == xcp.resolve()
    assert len([n for n in result.device_nodes if n.path.startswith("/dev/dri/renderD")]) == 64
    assert (pci / "current_compute_partition").read_text() == "CPX\n"
    assert (pci / "current_memory_partition").read_text() == "NPS4\n"
    assert (pci / "available_compute_partition").read_text() == "SPX, DPX, QPX, CPX\n"
    assert (pci / "available_memory_partition").read_text() == "NPS1, NPS4\n"
    # kfd_fill_gpu_xgmi_link_to_gpu for multi-node GPUs: 13 within a GPU, 41 across.
    topology = profile.expected_topology()
    assert topology["weight"][0][1:9] == [13] * 7 + [41]


def test_a_foreign_drm_card_costs_one_partition_its_slot():
    profile = load_profile("mi300x-8-cpx-nps4").with_foreign_drm_card(5)
    parts = profile.partitions()
    assert len(parts) == 63
    assert [p.partition_id for p in parts if p.gpu == 5] == list(range(7))
    assert parts[0].drm.card_minor == 1  # the foreign driver took card0
    with pytest.raises(ProfileError, match="DRM primary minors"):
        load_profile("mi300x-8").with_foreign_drm_card()


@pytest.mark.parametrize(
    ("name", "modes"),
    [
        ("mi300x-8", ("SPX", "NPS1", "SPX, DPX, QPX, CPX", "NPS1, NPS4")),
        ("mi210-4-pcie", None),
        ("mi250x-8gcd", None),
        ("w7900-2", None),
        ("rx7900xtx-1", None),
        ("rx6700xt-1", None),
    ],
)
def test_partition_files_exist_only_where_the_gpu_has_them(tmp_path, name, modes):
    profile = load_profile(name)
    render_profile(profile, tmp_path)
    pci = tmp_path / "sys/bus/pci/devices" / profile.gpus[0].bus
    files = ("current_compute_partition", "current_memory_partition", "available_compute_partition")
    files += ("available_memory_partition",)
    if modes is None:
        assert not any((pci / name).exists() for name in files)
    else:
        assert tuple((pci / name).read_text().strip() for name in files) == modes


def test_invalid_partition_pairs_are_refused():
    data = profile_data("mi300x-8-cpx-nps4")
    data["gpu_model"]["compute_partition"] = "SPX"  # SPX cannot share NPS4
    with pytest.raises(ProfileError, match="memory_partition"):
        profile_from_dict(data)
