"""rpm_key items: the key file a .repo's gpgkey names holds pinned keys only, each imported into the real rpm's
database (gpg-pubkey-<keyid>), read through one rpm -qa."""

import shutil
import subprocess
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import HostView
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.evaluate import evaluate_item

KEYS = Path(__file__).resolve().parents[5] / "src" / "rocm_fleet" / "lab" / "keys"
AMDROCM = "0AF0F0543594E3BFEC48725D1A340DEC657D9791"  # amdrocm-lab.pub.asc (LAB ONLY)
ROCM = "6BB40CEB51EC0E89B75E7214C2CB197087E7408C"  # rocm-lab.pub.asc
KEY_PATH = "/etc/pki/rpm-gpg/RPM-GPG-KEY-amdrocm"
pytestmark = pytest.mark.skipif(not shutil.which("rpm"), reason="needs rpm (Debian's rpm package)")


def rpm(root, *args):
    subprocess.run(["rpm", "--root", str(root), "--dbpath", "/var/lib/rpm", *args], check=True, capture_output=True)


@pytest.fixture
def root(tmp_path):
    rpm(tmp_path, "--initdb")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").write_text('NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\n')
    key = tmp_path / KEY_PATH.lstrip("/")
    key.parent.mkdir(parents=True)
    key.write_bytes((KEYS / "amdrocm-lab.pub.asc").read_bytes())
    return tmp_path


def check(root, fingerprints):
    expect = {"path": KEY_PATH, "fingerprints": fingerprints, "lab_fingerprints": [AMDROCM, ROCM], "lab": True}
    return evaluate_item({"id": "ROCM-REPO-002", "kind": "rpm_key", "expect": expect}, 0, HostView(str(root)))


def test_a_pinned_key_imported_into_the_rpm_database_passes(root):
    rpm(root, "--import", str(root / KEY_PATH.lstrip("/")))
    result = check(root, [AMDROCM])
    assert result["status"] == "pass", result["message"]
    assert result["actual"]["imported_key_ids"] == ["657d9791"]


def test_a_key_file_not_imported_names_the_gpg_pubkey_rpm_would_make(root):
    result = check(root, [AMDROCM])
    assert (result["status"], result["action"]) == ("fail", "import")
    assert result["message"] == (
        f"{KEY_PATH}: the rpm database has not imported {AMDROCM} (gpg-pubkey-657d9791)"
    )


def test_a_key_file_with_an_unpinned_key_fails_before_the_database_is_read(root):
    rpm(root, "--import", str(root / KEY_PATH.lstrip("/")))
    result = check(root, [ROCM])
    assert result["status"] == "fail" and AMDROCM in result["message"], result["message"]


def test_a_missing_key_file_is_created_by_the_role(root):
    (root / KEY_PATH.lstrip("/")).unlink()
    result = check(root, [AMDROCM])
    assert (result["status"], result["action"], result["message"]) == ("fail", "create", f"{KEY_PATH} does not exist")


def test_a_host_without_an_rpm_database_is_an_error(tmp_path):
    (tmp_path / "var/lib/dpkg").mkdir(parents=True)
    (tmp_path / "var/lib/dpkg/status").write_text("")
    key = tmp_path / KEY_PATH.lstrip("/")
    key.parent.mkdir(parents=True)
    key.write_bytes((KEYS / "amdrocm-lab.pub.asc").read_bytes())
    result = check(tmp_path, [AMDROCM])
    assert result["status"] == "error" and "not an rpm database" in result["message"], result
