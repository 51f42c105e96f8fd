"""A signing-key rotation on the lab mirror, and the keys the repo role refuses.

With the current and the next key pinned, the host trusts both before the mirror signs
with the next one, so apt keeps verifying and installing across the switch (no outage),
and its keyring never holds a key that is not pinned. A key that is not listed, and a lab
key outside the lab (repo_lab), fail the host before any change. One host without a GPU
(no driver repository) and the repo role alone keep this short; the mirror and the host
are put back as the lab inventory has them at the end.
"""

from __future__ import annotations

import base64
import json
import subprocess

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.repo.openpgp import keyring_fingerprints
from fleet_testing.lab_ansible import BIN, LAB_INVENTORY, ansible_env
from fleet_testing.lab_helpers import REPO, LabShell, rocm_fleet
from fleet_testing.lab_site import PlaybookRun, run_playbook
from fleet_testing.provision_lab import failed_task, failure_of, port

from rocm_fleet.lab.mirror import signing

pytestmark = [pytest.mark.lab, pytest.mark.slow]

HOST = "login-01"
CURRENT = signing.FINGERPRINTS[signing.ROCM_KEY]
NEXT = signing.FINGERPRINTS[signing.ROCM_NEXT_KEY]
WRONG = signing.FINGERPRINTS[signing.WRONG_KEY]
KEYRING = "/etc/apt/keyrings/rocm.asc"
ROCM_RELEASE = "7.2.3"
PLAYBOOK = """\
- name: The repo role alone
  hosts: all
  gather_facts: false
  pre_tasks:
    - name: Gather the facts the role reads
      ansible.builtin.setup:
        gather_subset: [min]
  roles:
    - rocm_fleet.core.repo
"""
REFUSED = "Check each key against its pinned fingerprints"


@pytest.fixture(scope="module")
def repo_role(lab, tmp_path_factory):
    playbook = tmp_path_factory.mktemp("rotation") / "repo.yml"
    playbook.write_text(PLAYBOOK)
    mirror(None)  # a mirror fault survives the lab's reset: start from the current key alone

    def run(**variables) -> PlaybookRun:
        settings = {"repo_rocm_versions": [ROCM_RELEASE], "repo_amdgpu_enabled": False, **variables}
        return run_playbook(str(playbook), "--limit", HOST, "-e", json.dumps(settings), timeout=600)

    yield run
    # Put the mirror and the host back: the lab inventory's one pinned key, a keyring holding only it.
    mirror(None)
    restored = run()
    assert restored.returncode == 0, restored.tail()
    assert installed_keys(lab) == [CURRENT]


def mirror(state: str | None) -> None:
    rocm_fleet("lab", "fault", "mirror", state or "clear")


def on_host(lab: LabShell, command: str) -> subprocess.CompletedProcess:
    return subprocess.run(lab.ssh_command(port(HOST), f"sudo sh -c '{command}'"), capture_output=True, text=True,
                          timeout=300)


def installed_keys(lab: LabShell) -> list[str]:
    encoded = on_host(lab, f"base64 -w0 {KEYRING}").stdout
    return keyring_fingerprints(base64.b64decode(encoded))


def keyring_check(tmp_path, **variables) -> dict:
    """ROCM-REPO-002 as `rocm-fleet drift` reports it: compliance reads the role's own pins and decision."""
    settings = {"repo_rocm_versions": [ROCM_RELEASE], "repo_amdgpu_enabled": False, **variables}
    out = tmp_path / "drift"
    subprocess.run([str(BIN / "rocm-fleet"), "drift", "-i", str(LAB_INVENTORY), "--limit", HOST, "-e",
                    json.dumps(settings), "--output-dir", str(out)], cwd=REPO, env=ansible_env(), capture_output=True,
                   text=True, timeout=600)
    host = json.loads((out / "drift.json").read_text())["hosts"][HOST]
    # drift.json schema 3: a passed check is only its ID in "passed"; any other status keeps its detail in "checks".
    if "ROCM-REPO-002" in host["passed"]:
        return {"id": "ROCM-REPO-002", "status": "pass"}
    (check,) = [check for check in host["checks"] if check["id"] == "ROCM-REPO-002"]
    return check


def apt_verifies_and_installs(lab: LabShell, package: str) -> None:
    """apt-get update checks every Release signature (no warning, nothing trusted without one); then an install."""
    update = on_host(lab, "apt-get update")
    output = update.stdout + update.stderr
    assert update.returncode == 0 and "W:" not in output and "NO_PUBKEY" not in output, output
    trusted = on_host(lab, "grep -rils trusted /etc/apt/sources.list.d || true").stdout
    assert trusted == "", trusted
    install = on_host(lab, f"DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall {package}")
    assert install.returncode == 0, install.stdout + install.stderr


def pins(fingerprints, **key) -> dict:
    """repo_signing_keys pinning AMD's (here the lab's) rocm key."""
    return {"repo_signing_keys": {"rocm": {"fingerprints": fingerprints, **key}}}


PINS_VARIABLE = "repo_signing_keys.rocm.fingerprints"


def test_a_rotation_with_both_keys_pinned_has_no_outage(lab, repo_role, tmp_path):
    both = [CURRENT, NEXT]
    # The site pins the next key before the mirror publishes it: nothing changes, the current key stays trusted.
    first = repo_role(**pins(both))
    assert first.returncode == 0, first.tail()
    assert installed_keys(lab) == [CURRENT]
    # Step 1: the mirror publishes the next key beside the current one; the role trusts both.
    mirror("next-key")
    published = repo_role(**pins(both))
    assert published.returncode == 0, published.tail()
    assert installed_keys(lab) == both
    apt_verifies_and_installs(lab, f"rocm-core{ROCM_RELEASE}")
    # Step 2: the mirror signs with the next key. The host, untouched since, still verifies and installs.
    mirror("rotated-key")
    apt_verifies_and_installs(lab, f"rocm-core{ROCM_RELEASE}")
    again = repo_role(**pins(both))
    assert again.returncode == 0, again.tail()
    assert again.recap[HOST]["changed"] == 0, again.changed_objects
    assert set(installed_keys(lab)) <= set(both)
    assert keyring_check(tmp_path, **pins(both))["status"] == "pass"
    # Drift reads the same pins: a site that lists the current key alone finds the next one wanting.
    drift = keyring_check(tmp_path, **pins(CURRENT))
    assert drift["status"] == "fail"
    assert f"holds {NEXT}, which {PINS_VARIABLE} does not list (it lists {CURRENT})" in drift["message"]


def test_a_key_that_is_not_listed_fails_before_any_change(lab, repo_role):
    mirror("next-key")
    before = on_host(lab, f"sha256sum {KEYRING} /etc/apt/sources.list.d/rocm.sources").stdout
    # The mirror serves the next key too, which this site has not pinned.
    only_current = repo_role(**pins(CURRENT))
    assert only_current.returncode != 0
    assert failed_task(only_current, HOST).endswith(f"repo : {REFUSED}"), only_current.tail()
    message = failure_of(only_current, HOST)
    assert f"holds {NEXT}, which {PINS_VARIABLE} does not list (it lists {CURRENT})" in message
    assert message.startswith(f"{HOST}: the signing key rocm (AMD's ROCm and amdgpu repository key "
                              "(repo.radeon.com)) from http://127.0.0.1:"), message
    # A key given as content that is neither: the error names it and every listed key.
    wrong = repo_role(**pins([CURRENT, NEXT], content=signing.public_key(signing.WRONG_KEY).read_text()))
    assert wrong.returncode != 0
    assert failed_task(wrong, HOST).endswith(f"repo : {REFUSED}"), wrong.tail()
    message = failure_of(wrong, HOST)
    assert f"from repo_signing_keys.rocm.content holds {WRONG}, which {PINS_VARIABLE} does not list (it lists " \
           f"{CURRENT}, {NEXT})" in message, message
    assert on_host(lab, f"sha256sum {KEYRING} /etc/apt/sources.list.d/rocm.sources").stdout == before


def test_a_lab_key_outside_the_lab_fails_in_preflight(lab, repo_role):
    before = on_host(lab, f"sha256sum {KEYRING}").stdout
    refused = repo_role(repo_lab=False)
    assert refused.returncode != 0
    assert failed_task(refused, HOST).endswith(
        "repo : Check the pinned signing key fingerprints (a lab key outside the lab is refused)"), refused.tail()
    message = failure_of(refused, HOST)
    assert message.startswith(f"{HOST}: {PINS_VARIABLE} lists {CURRENT}, a signing key of the rocm-fleet lab"), \
        message
    assert "repo_lab: true" in message
    assert on_host(lab, f"sha256sum {KEYRING}").stdout == before
