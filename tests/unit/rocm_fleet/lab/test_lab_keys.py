"""Without its secret keys (an installed wheel carries none) the lab says what to do instead of failing in gpg."""

from __future__ import annotations

import shutil

import pytest

from rocm_fleet import cli
from rocm_fleet.lab.mirror import signing


@pytest.fixture
def public_keys_only(tmp_path, monkeypatch):
    for path in signing.KEYS_DIR.glob("*.pub.asc"):
        shutil.copy2(path, tmp_path / path.name)
    monkeypatch.setattr(signing, "KEYS_DIR", tmp_path)
    return tmp_path


def test_the_checkout_has_every_secret_key():
    assert signing.missing_secret_keys() == []
    signing.require_secret_keys()


@pytest.mark.parametrize("argv", [["lab", "up"], ["lab", "fault", "mirror", "clear"]])
def test_lab_commands_that_sign_fail_with_what_to_do(public_keys_only, argv, monkeypatch):
    monkeypatch.setattr("os.geteuid", lambda: 0)
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    message = str(exited.value.code)
    assert message.startswith("rocm-fleet lab: the lab's secret signing keys (rocm-lab.secret.asc, ")
    assert "built packages of rocm-fleet carry no secret key" in message
    assert "Run the lab from a checkout of the repository" in message


def test_the_signer_refuses_too(public_keys_only):
    with pytest.raises(signing.LabKeysMissing, match="are not in"), signing.Signer():
        pass
