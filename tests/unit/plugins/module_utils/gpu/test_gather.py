"""The default release gather reads beside the GPU sources: the legacy /opt/rocm link and the Core SDK's
/opt/rocm/core alternative, laid out as the packages' postinst scripts lay them out."""

from __future__ import annotations

import os

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.gather import read_rocm_install


def release_dir(root, path, version):
    directory = root / path.lstrip("/")
    (directory / ".info").mkdir(parents=True)
    (directory / ".info" / "version").write_text(version + "\n")
    return directory


def alternative(root, link, target, name):
    """update-alternatives' two links: <link> -> /etc/alternatives/<name> -> <target>, relative to ``root``."""
    (root / "etc/alternatives").mkdir(parents=True, exist_ok=True)
    os.symlink(root / target.lstrip("/"), root / "etc/alternatives" / name)
    (root / link.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(root / "etc/alternatives" / name, root / link.lstrip("/"))


def test_the_legacy_link_names_the_release_rocm_core_wrote(tmp_path):
    release_dir(tmp_path, "/opt/rocm-7.2.3", "7.2.3-90")
    release_dir(tmp_path, "/opt/rocm-6.4.1", "6.4.1-83")
    alternative(tmp_path, "/opt/rocm", "/opt/rocm-7.2.3", "rocm")
    assert read_rocm_install(str(tmp_path)) == {"version": "7.2.3-90", "path": "/opt/rocm-7.2.3"}


def test_the_core_sdk_default_is_the_core_alternative(tmp_path):
    release_dir(tmp_path, "/opt/rocm/core-10.0", "10.0.0")
    release_dir(tmp_path, "/opt/rocm/core-10.1", "10.1.0")
    alternative(tmp_path, "/opt/rocm/core", "/opt/rocm/core-10.1", "core")
    alternative(tmp_path, "/opt/rocm/bin", "/opt/rocm/core-10.1/bin", "rocm-bin")
    assert read_rocm_install(str(tmp_path)) == {"version": "10.1.0", "path": "/opt/rocm/core-10.1"}


def test_a_core_sdk_release_without_its_version_file_has_no_version(tmp_path):
    (tmp_path / "opt/rocm/core-10.1").mkdir(parents=True)
    alternative(tmp_path, "/opt/rocm/core", "/opt/rocm/core-10.1", "core")
    assert read_rocm_install(str(tmp_path)) == {"version": None, "path": "/opt/rocm/core-10.1"}


def test_no_release_is_none(tmp_path):
    assert read_rocm_install(str(tmp_path)) == {"version": None, "path": None}
    # A dangling core alternative (the release removed by hand) is no release either.
    (tmp_path / "opt/rocm").mkdir(parents=True)
    os.symlink(tmp_path / "opt/rocm/core-10.1", tmp_path / "opt/rocm/core")
    assert read_rocm_install(str(tmp_path)) == {"version": None, "path": None}
