"""AMD's package relations as the lab mirror declares them."""

from rocm_fleet.lab.mirror import amd_packages


def test_rocrs_libdrm_alternative_comes_before_what_debians_library_needs():
    # apt resolves Depends in order: Debian's libhsa-runtime64-1 reaching libdrm-amdgpu1 first would satisfy
    # the alternative with it, and AMD's libdrm from the graphics repository would never be installed.
    depends = ["rocm-core7.2.3 (= 1)", "libc6 (>= 2.34), libdrm-amdgpu1 (>= 2.4.120), libhsakmt1"]
    assert amd_packages._amd_libdrm_first(depends) == [
        "rocm-core7.2.3 (= 1)",
        "libdrm-amdgpu-amdgpu1 | libdrm-amdgpu1",
        "libc6 (>= 2.34), libdrm-amdgpu1 (>= 2.4.120), libhsakmt1",
    ]
