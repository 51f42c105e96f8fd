"""Package sets per use case and ROCm release, evaluated with the packages role's own expressions."""

from __future__ import annotations

import pytest
from fleet_testing.roles import evaluate, find_task, load_yaml, render

ROCM_TASKS = "packages/tasks/rocm.yml"
USECASES = load_yaml("packages/meta/argument_specs.yml")["argument_specs"]["main"]["options"]["packages_usecases"][
    "choices"
]
STREAMS = load_yaml("preflight/vars/release_streams.yml")["preflight_release_streams_builtin"]
DRIVERS = load_yaml("preflight/vars/amdgpu_drivers.yml")["preflight_amdgpu_drivers_builtin"]


def packages_variables(family: str = "Debian", **overrides) -> dict:
    """The role's defaults, vars/main.yml and the OS family's vars, with ``overrides`` as the inventory's."""
    facts = {"distribution": "Debian", "distribution_version": "12", "distribution_major_version": "12",
             "distribution_release": "bookworm",
             "kernel": "6.1.0-37-amd64"}
    return {**load_yaml("packages/defaults/main.yml"), **load_yaml("packages/vars/main.yml"),
            **load_yaml(f"packages/vars/{family}.yml"), "preflight_decision": {}, "repo_source": "amd",
            "ansible_facts": facts, **overrides}


def release_objects(versions: list[str], usecases: list[str], extra: list[str] | None = None, **overrides) -> list:
    """The install task's loop items: the role's ROCM-PKG-002 objects (__packages_release_objects), labelled."""
    task = find_task(ROCM_TASKS, "Install the use cases of each ROCm release")
    assert task["loop_control"]["label"] == "{{ item.label }}"
    variables = packages_variables(packages_rocm_versions=versions, packages_usecases=usecases,
                                   packages_extra=extra or [], **overrides)
    return render(task["loop"], **variables)


def amd_packages(version: str, usecases: list[str], extra: list[str] | None = None) -> list[str]:
    """What the install task names for one release (its loop item is the release's object)."""
    task = find_task(ROCM_TASKS, "Install the use cases of each ROCm release")
    [item] = release_objects([version], usecases, extra)
    assert (item["label"], item["release"]) == (f"packages: ROCm {version}", f"ROCm {version}")
    return render(task["ansible.builtin.package"]["name"], item=item)


def distro_packages(family: str, major: str, usecases: list[str]) -> list[str]:
    task = find_task(ROCM_TASKS, "Install the distribution's ROCm packages of the use cases")
    data = load_yaml(f"packages/vars/{family}.yml")
    return render(
        task["ansible.builtin.package"]["name"],
        packages_usecases=usecases,
        packages_extra=[],
        ansible_facts={"distribution_major_version": major},
        **data,
        **task["vars"],
    )


def test_every_stream_maps_every_use_case():
    # sdk is the Core SDK's full suite; the legacy stream has no such package.
    for name, stream in STREAMS.items():
        assert set(USECASES) - ({"sdk"} if name == "legacy" else set()) <= set(stream["packages"]), name


@pytest.mark.parametrize("version", ["6.3.3", "6.4.1"])
def test_rocm_6_base_and_hip_are_versioned_packages_of_the_release(version):
    packages = amd_packages(version, ["base", "hip"])
    assert packages == [
        f"rocm-core{version}",
        f"rocm-language-runtime{version}",
        f"rocminfo{version}",
        f"rocm-smi-lib{version}",
        f"rocm-hip-runtime{version}",
    ]


def test_rocm_7_base_takes_amd_smi_and_keeps_rocm_smi():
    packages = amd_packages("7.0.1", ["base"])
    assert "amd-smi-lib7.0.1" in packages and "rocm-smi-lib7.0.1" in packages


def test_overlapping_use_cases_install_each_package_once():
    packages = amd_packages("6.4.1", ["dev", "ml", "hip", "dev"])
    assert len(packages) == len(set(packages))
    assert {"rocm-hip-sdk6.4.1", "rocm-dev6.4.1", "rocm-ml-libraries6.4.1", "rocm-hip-runtime6.4.1"} == set(packages)


def test_extra_packages_are_added_as_given():
    assert amd_packages("6.4.1", ["hip"], ["rocm-bandwidth-test6.4.1"])[-1] == "rocm-bandwidth-test6.4.1"


def test_no_package_name_is_left_unpinned():
    for version in ("6.3.3", "6.4.1", "7.0.1"):
        for name in amd_packages(version, [usecase for usecase in USECASES if usecase != "sdk"]):
            assert name.endswith(version), name


def test_each_listed_release_is_one_object_and_none_where_rocm_is_not_wanted():
    objects = release_objects(["6.3.3", "6.4.1"], ["base"])
    assert [(item["id"], item["label"]) for item in objects] == [
        ("ROCM-PKG-002", "packages: ROCm 6.3.3"), ("ROCM-PKG-002", "packages: ROCm 6.4.1")]
    assert [item["names"][0] for item in objects] == ["rocm-core6.3.3", "rocm-core6.4.1"]
    assert release_objects(["6.4.1"], ["base"], packages_source="distro") == []
    no_gpu = {"preflight_decision": {"gpu_count": 0}, "packages_rocm_without_gpu": False}
    assert release_objects(["6.4.1"], ["base"], **no_gpu) == []


def driver_objects(family: str, driver_line: str | None = "6.4.1", **overrides) -> list[dict]:
    """The driver task's loop items, with preflight's decision of the driver line (amdgpu_drivers.yml's entry)."""
    task = find_task("packages/tasks/driver.yml", "Install amdgpu-dkms of the decided driver line")
    driver = dict(DRIVERS[driver_line], line=driver_line) if driver_line else None
    overrides.setdefault("preflight_decision", {"amdgpu_driver": driver})
    return render(task["loop"], **packages_variables(family, **overrides))


def test_the_lab_driver_of_641_keeps_its_apt_version():
    # The lab mirror serves amdgpu-dkms 1:6.12.12.60401-2164967.22.04 (src/rocm_fleet/lab/mirror/catalog.py).
    task = find_task("packages/tasks/driver.yml", "Install amdgpu-dkms of the decided driver line")
    [debian] = driver_objects("Debian", packages_rocm_versions=["6.3.3", "6.4.1"])
    assert (debian["id"], debian["label"], debian["version"]) == ("ROCM-PKG-003", "packages: amdgpu-dkms",
                                                                  "1:6.12.12.60401-*")
    assert render(task["ansible.builtin.package"]["name"], item=debian) == "amdgpu-dkms=1:6.12.12.60401-*"
    # RPM hosts get a versioned spec too, never a bare "present".
    [redhat] = driver_objects("RedHat", packages_rocm_versions=["6.4.1"])
    assert render(task["ansible.builtin.package"]["name"], item=redhat) == "amdgpu-dkms >= 1:6.12.12"
    assert task["ansible.builtin.package"]["state"] == "present"


def test_the_driver_moves_only_when_missing_or_older():
    task = find_task("packages/tasks/driver.yml",
                     "Install amdgpu-dkms of the decided driver line, or take back a failed install")
    driver = dict(DRIVERS["30.30.3"], line="30.30.3")
    variables = {**packages_variables("Debian"), "__packages_amdgpu_driver": driver}
    facts = variables.pop("ansible_facts")

    def moves(installed):
        return evaluate(task["when"], ansible_facts=dict(facts, packages={"amdgpu-dkms": installed} if installed
                                                         is not None else {}), **variables)

    assert moves(None) is True
    assert moves([{"version": "1:6.12.12.60401-2164967.22.04"}]) is True
    assert moves([{"version": "1:6.16.13.30300300-2327507.24.04"}]) is False
    install = find_task("packages/tasks/driver.yml", "Install amdgpu-dkms of the decided driver line")
    assert install["notify"] == "packages amdgpu driver changed"


def test_no_driver_object_without_the_driver_or_from_the_distribution():
    assert driver_objects("Debian", packages_rocm_versions=["6.4.1"], packages_amdgpu_dkms=False) == []
    assert driver_objects("Debian", packages_rocm_versions=["6.4.1"], packages_source="distro") == []


@pytest.mark.parametrize(("family", "line", "problem"), [
    ("Debian", None, "no amdgpu driver line is decided for this host"),
    ("RedHat", "6.2.4", "the rpm version of amdgpu-dkms in driver line 6.2.4 is unknown (not sourced)"),
])
def test_a_driver_without_a_known_version_fails_preflight_naming_it(family, line, problem):
    task = find_task("packages/tasks/preflight.yml",
                     "Check that amdgpu-dkms of the decided driver line has a known version")
    driver = dict(DRIVERS[line], line=line) if line else None
    variables = {**packages_variables(family), "preflight_decision": {"amdgpu_driver": driver},
                 "inventory_hostname": "gpu-01"}
    assert evaluate(task["ansible.builtin.assert"]["that"], **variables) is False
    message = render(task["ansible.builtin.assert"]["fail_msg"], **variables)
    assert message.startswith("gpu-01: " + problem)


def test_debian_12_distro_packages():
    assert distro_packages("Debian", "12", ["base", "hip"]) == ["rocminfo", "rocm-smi", "libamdhip64-5"]


@pytest.mark.parametrize("family", ["Debian", "Ubuntu", "RedHat", "Suse"])
def test_distro_sets_only_use_known_use_cases(family):
    for release, usecases in load_yaml(f"packages/vars/{family}.yml").get("__packages_distro_usecase_sets", {}).items():
        assert set(usecases) <= set(USECASES), (family, release)


def test_missing_distro_use_cases_are_named():
    task = find_task("packages/tasks/preflight.yml", "Check that the distribution packages every use case")
    missing = render(
        "{{ __packages_distro_missing }}",
        packages_usecases=["base", "opencl", "profiler"],
        __packages_distro_usecase_sets=load_yaml("packages/vars/Debian.yml")["__packages_distro_usecase_sets"],
        ansible_facts={"distribution_major_version": "12"},
        **task["vars"],
    )
    assert missing == ["opencl", "profiler"]


@pytest.mark.parametrize(
    ("files", "kernel", "major", "expected"),
    [
        (["Debian"], "6.1.0-28-amd64", "12", ["linux-headers-6.1.0-28-amd64"]),
        (["Debian", "Ubuntu"], "6.8.0-45-generic", "24",
         ["linux-headers-6.8.0-45-generic", "linux-modules-extra-6.8.0-45-generic"]),
        # AMD's RHEL 9 and 10 instructions add kernel-devel-matched; RHEL 8's do not (amdgpu-docs @ 7302d99).
        (["RedHat"], "5.14.0-427.el9.x86_64", "9",
         ["kernel-headers-5.14.0-427.el9.x86_64", "kernel-devel-5.14.0-427.el9.x86_64",
          "kernel-devel-matched-5.14.0-427.el9.x86_64", "kernel-modules-extra-5.14.0-427.el9.x86_64"]),
        (["RedHat"], "4.18.0-553.el8_10.x86_64", "8",
         ["kernel-headers-4.18.0-553.el8_10.x86_64", "kernel-devel-4.18.0-553.el8_10.x86_64",
          "kernel-modules-extra-4.18.0-553.el8_10.x86_64"]),
        # Oracle Linux on its UEK: kernel-uek-devel; on the Red Hat compatible kernel: RHEL's packages.
        (["RedHat", "OracleLinux"], "5.15.0-208.159.3.el9uek.x86_64", "9",
         ["kernel-uek-devel-5.15.0-208.159.3.el9uek.x86_64"]),
        (["RedHat", "OracleLinux"], "5.14.0-427.el9.x86_64", "9",
         ["kernel-headers-5.14.0-427.el9.x86_64", "kernel-devel-5.14.0-427.el9.x86_64",
          "kernel-devel-matched-5.14.0-427.el9.x86_64", "kernel-modules-extra-5.14.0-427.el9.x86_64"]),
        (["Suse"], "6.4.0-150600.23.25-default", "15", ["kernel-default-devel=6.4.0-150600.23.25"]),
    ],
)  # fmt: skip
def test_kernel_packages_follow_the_running_kernel(files, kernel, major, expected):
    data = {}
    for name in files:  # the family's file, then the distribution's (roles/packages/tasks/os_vars.yml)
        data.update(load_yaml(f"packages/vars/{name}.yml"))
    facts = {"kernel": kernel, "distribution_major_version": major}
    assert render(data["__packages_kernel_packages"], ansible_facts=facts, **data) == expected


def test_unlisted_releases_are_removed_through_their_release_package():
    # One definition (vars/main.yml), read by the removal (tasks/versions.yml) and the lock check (tasks/locks.yml).
    role_vars = load_yaml("packages/vars/main.yml")
    task = {"vars": {name: role_vars[name] for name in ("__packages_unlisted_cores", "__packages_single_release")}}
    removal = find_task("packages/tasks/versions.yml",
                        "Remove the ROCm releases that packages_rocm_versions does not list")
    assert removal["ansible.builtin.package"]["name"] == "{{ __packages_unlisted_cores }}"
    installed = {
        "rocm-core6.3.3": [{"version": "6.3.3.60303-74~22.04"}],
        "rocm-core6.4.1": [{"version": "6.4.1.60401-83~22.04"}],
        "rocm-hip-runtime6.3.3": [{"version": "6.3.3.60303-74~22.04"}],
        "rocm-core": [{"version": "6.2.4.60204-139~22.04"}],
    }
    extras = {"__packages_stream_extras": {}}
    cores = render(
        "{{ __packages_unlisted_cores }}",
        packages_rocm_versions=["6.4.1"],
        ansible_facts={"packages": installed},
        **task["vars"],
        **extras,
    )
    assert cores == ["rocm-core6.3.3", "rocm-core"]
    # A Core SDK release goes through its amdrocm-sysdeps<series>, which every package of it depends on.
    core_sdk = dict(installed, **{"amdrocm-sysdeps10.0": [{"version": "10.0.0-4"}],
                                  "amdrocm10.0-gfx942": [{"version": "10.0.0-4"}]})
    assert render("{{ __packages_unlisted_cores }}", packages_rocm_versions=["6.4.1"],
                  ansible_facts={"packages": core_sdk}, **task["vars"], **extras) == [
        "amdrocm-sysdeps10.0", "rocm-core6.3.3", "rocm-core"]
    kept = render(
        "{{ __packages_unlisted_cores }}",
        packages_rocm_versions=["6.3.3", "6.4.1", "6.2.4"],
        ansible_facts={"packages": installed},
        **task["vars"],
        **extras,
    )
    assert kept == []
