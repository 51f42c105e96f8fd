"""A host's releases read back through the streams: release packages and default links to releases and streams."""

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision import data as rocm_data
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.streams import (
    StreamError,
    conflicting,
    default_link_release,
    installed_releases,
    replaces,
)

STREAMS, KEYS = rocm_data.release_streams()
MATRIX = rocm_data.preflight_data()[1]


def test_the_release_packages_of_every_stream_name_their_releases():
    packages = {
        "rocm-core": [{"version": "7.2.3.70203-90~22.04"}],
        "rocm-core6.4.1": [{"version": "6.4.1.60401-83~22.04"}],
        "rocm-core7.2.3": [{"version": "7.2.3.70203-90~22.04"}],
        "rocm-core7.2.3-dev": [{"version": "7.2.3.70203-90~22.04"}],
        "rocm-core5.7.1": [{"version": "5.7.1.50701-98~22.04"}],
        "amdrocm-sysdeps10.1": [{"version": "10.1.0-1"}],
        "amdrocm-sysdeps10.1-extra": [{"version": "10.1.0-1"}],
        "amdrocm-sysdeps7.14": [{"version": "1:7.14.0-1"}],
        "amdrocm10.1-gfx942": [{"version": "10.1.0-1"}],
    }
    assert installed_releases(STREAMS, MATRIX, packages) == {
        "5.7.1": {"stream": "legacy", "package": "rocm-core5.7.1"},
        "6.4.1": {"stream": "legacy", "package": "rocm-core6.4.1"},
        "7.2.3": {"stream": "legacy", "package": "rocm-core7.2.3"},
        "7.14.0": {"stream": "core_sdk_7_14", "package": "amdrocm-sysdeps7.14"},
        "10.1.0": {"stream": "core_sdk_10", "package": "amdrocm-sysdeps10.1"},
    }
    # Names alone: the matrix's single release of the series, or the version file of the series where it has two.
    assert installed_releases(STREAMS, MATRIX, ["amdrocm-sysdeps10.0", "bash"]) == {
        "10.0.0": {"stream": "core_sdk_10", "package": "amdrocm-sysdeps10.0"}}
    matrix = rocm_data.preflight_data(None, {"10.0.1": {"stream": "core_sdk_10"}}, None)[1]
    assert installed_releases(STREAMS, matrix, ["amdrocm-sysdeps10.0"], ["10.1.0\n", "10.0.1\n"]) == {
        "10.0.1": {"stream": "core_sdk_10", "package": "amdrocm-sysdeps10.0"}}
    with pytest.raises(StreamError, match=r"amdrocm-sysdeps10\.0 is the release package of a release of"):
        installed_releases(STREAMS, matrix, ["amdrocm-sysdeps10.0"], ["10.1.0"])


def test_a_release_package_whose_release_or_stream_is_unknown_is_refused():
    with pytest.raises(StreamError, match=r"amdrocm-sysdeps10\.9 is the release package of a release of the ROCm Core "
                                          r"SDK 10\.x or the ROCm Core SDK 7\.14, and neither a version"):
        installed_releases(STREAMS, MATRIX, ["amdrocm-sysdeps10.9"])
    with pytest.raises(StreamError, match=r"of ROCm 10\.9\.0, which the support matrix does not list.*"
                                          r"preflight_support_matrix_extra"):
        installed_releases(STREAMS, MATRIX, {"amdrocm-sysdeps10.9": [{"version": "10.9.0-1"}]})


def test_the_default_link_names_the_default_release_and_its_stream():
    assert default_link_release(STREAMS, MATRIX, "/opt/rocm", "/opt/rocm-7.2.3/") == ("7.2.3", "legacy")
    assert default_link_release(STREAMS, MATRIX, "/opt/rocm/core", "/opt/rocm/core-10.1", "10.1.0\n") == (
        "10.1.0", "core_sdk_10")
    # Two releases of the series in the matrix: the installed one says which.
    matrix = rocm_data.preflight_data(None, {"10.2.1": {"stream": "core_sdk_10"}}, None)[1]
    installed = {"10.2.1": {"stream": "core_sdk_10", "package": "amdrocm-sysdeps10.2"}}
    assert default_link_release(STREAMS, matrix, "/opt/rocm/core", "/opt/rocm/core-10.2", None, installed) == (
        "10.2.1", "core_sdk_10")
    with pytest.raises(StreamError, match=r"/opt/rocm/core-10\.2 is the install root of a release of"):
        default_link_release(STREAMS, matrix, "/opt/rocm/core", "/opt/rocm/core-10.2")
    # A version file of another series does not count.
    assert default_link_release(STREAMS, MATRIX, "/opt/rocm/core", "/opt/rocm/core-7.14", "10.1.0") == (
        "7.14.0", "core_sdk_7_14")
    assert default_link_release(STREAMS, MATRIX, "/opt/rocm/core", "/opt/rocm-7.2.3/core") is None
    assert default_link_release(STREAMS, MATRIX, "/opt/rocm", "/opt/rocm/core-10.1") is None
    assert default_link_release(STREAMS, MATRIX, "/opt/rocm", None) is None


def test_which_streams_replace_which():
    assert replaces(STREAMS, "core_sdk_10", "legacy") and not replaces(STREAMS, "legacy", "core_sdk_10")
    assert conflicting(STREAMS, "legacy", "core_sdk_10") and conflicting(STREAMS, "core_sdk_10", "legacy")
    assert not conflicting(STREAMS, "core_sdk_7_14", "core_sdk_10") and not conflicting(STREAMS, "legacy", "legacy")
