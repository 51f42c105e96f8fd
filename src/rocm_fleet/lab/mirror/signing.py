"""The lab's committed signing keys and gpg signing of Release files.

The keys are test-only fixtures (see keys/README.md): LAB ONLY, never trust them
outside the lab. Their secret halves live in the checkout only: the wheel and the
collection carry none (tests/integration/test_artifacts_hold_no_secret_keys.py).
"""

from __future__ import annotations

import base64
import os
import subprocess
import tempfile
from pathlib import Path

KEYS_DIR = Path(__file__).resolve().parent.parent / "keys"
# An installed rocm-fleet finds the secret halves where this names (a checkout's src/rocm_fleet/lab/keys).
SECRET_KEYS_VARIABLE = "ROCM_FLEET_LAB_KEYS"

# name -> fingerprint; a test checks these against the key files.
FINGERPRINTS = {
    "rocm-lab": "6BB40CEB51EC0E89B75E7214C2CB197087E7408C",
    "distro-lab": "3E760FC66248B784C4AC076BE5EC761947D90E0A",
    "wrong-lab": "FE2E5E8D5C94865FFB27E7FFA4C5A27761A178A5",
    "rocm-next-lab": "5A2413C48C8A7F5DE7BB72E41A59AF35C3B49428",
    "amdrocm-lab": "0AF0F0543594E3BFEC48725D1A340DEC657D9791",
}
ROCM_KEY = "rocm-lab"
DISTRO_KEY = "distro-lab"
WRONG_KEY = "wrong-lab"
# The ROCm key the mirror moves to in the key-rotation state (docs/lab-mirror.md).
ROCM_NEXT_KEY = "rocm-next-lab"
# The ROCm Core SDK 10.x repository's key (rocm/core/packages), AMD's other key: served as rocm/gpg/packages.gpg.
AMDROCM_KEY = "amdrocm-lab"


class LabKeysMissing(RuntimeError):
    """The lab's secret signing keys are not where the lab code runs from (an installed wheel)."""


def missing_secret_keys() -> list[str]:
    return [name for name in FINGERPRINTS if not secret_key(name).is_file()]


def require_secret_keys() -> None:
    """Fail, naming what to do, where the lab cannot sign its mirror."""
    missing = missing_secret_keys()
    if missing:
        raise LabKeysMissing(
            f"the lab's secret signing keys ({', '.join(name + '.secret.asc' for name in missing)}) are not in "
            f"{secret_keys_dir()}: built packages of rocm-fleet carry no secret key, because the lab's keys are "
            "public and must never sign anything outside the lab. Run the lab from a checkout of the repository "
            f"(./dev site, or .venv/bin/rocm-fleet lab up there), or set {SECRET_KEYS_VARIABLE} to a checkout's "
            "src/rocm_fleet/lab/keys."
        )


def public_key(name: str) -> Path:
    return KEYS_DIR / f"{name}.pub.asc"


def secret_keys_dir() -> Path:
    return Path(os.environ.get(SECRET_KEYS_VARIABLE) or KEYS_DIR)


def secret_key(name: str) -> Path:
    return secret_keys_dir() / f"{name}.secret.asc"


def dearmor(armored: str) -> bytes:
    """ASCII armor -> the binary keyring apt's signed-by accepts (what ``gpg --dearmor`` does)."""
    lines = armored.strip().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("-----BEGIN PGP"))
    end = next(i for i, line in enumerate(lines) if line.startswith("-----END PGP"))
    body = lines[start + 1 : end]
    blank = body.index("") if "" in body else -1  # armor headers end at the first blank line
    data = [line for line in body[blank + 1 :] if not line.startswith("=")]  # drop the CRC line
    return base64.b64decode("".join(data))


class Signer:
    """One gpg home with the lab's secret keys, to sign many Release files in one go."""

    def __enter__(self) -> Signer:
        require_secret_keys()
        self._home = tempfile.TemporaryDirectory(prefix="lab-gpg-")
        self._gpg = [
            "gpg",
            "--homedir",
            self._home.name,
            "--batch",
            "--quiet",
            "--no-tty",
            "--pinentry-mode",
            "loopback",
        ]
        keys = [str(secret_key(name)) for name in FINGERPRINTS]
        subprocess.run([*self._gpg, "--import", *keys], check=True, capture_output=True)
        return self

    def __exit__(self, *exc) -> None:
        subprocess.run(["gpgconf", "--homedir", self._home.name, "--kill", "all"], capture_output=True)
        self._home.cleanup()

    def export(self, key_names: list[str]) -> str:
        """The armored public keys of ``key_names`` in one block (one key file serving several keys)."""
        fingerprints = [FINGERPRINTS[name] for name in key_names]
        result = subprocess.run([*self._gpg, "--armor", "--export", *fingerprints], check=True, capture_output=True)
        return result.stdout.decode("ascii")

    def sign(self, release: Path, key_name: str) -> None:
        """Write InRelease (clearsigned) and Release.gpg (detached) next to ``release``."""
        signer = ["--local-user", FINGERPRINTS[key_name], "--digest-algo", "SHA512", "--yes"]
        inrelease = release.with_name("InRelease")
        detached = release.with_name("Release.gpg")
        for how, output in ((["--clearsign"], inrelease), (["--armor", "--detach-sign"], detached)):
            subprocess.run(
                [*self._gpg, *signer, *how, "-o", str(output), str(release)], check=True, capture_output=True
            )

    def sign_rpms(self, packages: list[Path], key_name: str) -> None:
        """Sign RPM packages in place with rpmsign (the header and payload signature dnf checks with gpgcheck=1)."""
        if not packages:
            return
        macros = {
            "_gpg_path": self._home.name,
            "_gpg_name": FINGERPRINTS[key_name],
            "_gpg_digest_algo": "sha256",
            # rpmsign's own gpg command line, with the batch options of this gpg home (no agent prompt).
            "__gpg": "/usr/bin/gpg",
        }
        defines = [arg for name, value in macros.items() for arg in ("--define", f"{name} {value}")]
        subprocess.run(["rpmsign", *defines, "--addsign", *map(str, packages)], check=True, capture_output=True)

    def sign_repomd(self, repomd: Path, key_name: str) -> None:
        """Write repomd.xml.asc, the detached armored signature dnf checks with repo_gpgcheck=1."""
        signer = ["--local-user", FINGERPRINTS[key_name], "--digest-algo", "SHA512", "--yes"]
        output = repomd.with_name(repomd.name + ".asc")
        subprocess.run(
            [*self._gpg, *signer, "--armor", "--detach-sign", "-o", str(output), str(repomd)],
            check=True,
            capture_output=True,
        )


def sign_release(release: Path, key_name: str) -> None:
    """Sign one Release file (see Signer for many)."""
    with Signer() as signer:
        signer.sign(release, key_name)
