"""The lab's committed signing keys and gpg signing of Release files.

The keys are test-only fixtures (see keys/README.md): LAB ONLY, never trust them
outside the lab.
"""

from __future__ import annotations

import base64
import subprocess
import tempfile
from pathlib import Path

KEYS_DIR = Path(__file__).resolve().parent.parent / "keys"

# name -> fingerprint; a test checks these against the key files.
FINGERPRINTS = {
    "rocm-lab": "6BB40CEB51EC0E89B75E7214C2CB197087E7408C",
    "distro-lab": "3E760FC66248B784C4AC076BE5EC761947D90E0A",
    "wrong-lab": "FE2E5E8D5C94865FFB27E7FFA4C5A27761A178A5",
}
ROCM_KEY = "rocm-lab"
DISTRO_KEY = "distro-lab"
WRONG_KEY = "wrong-lab"


def public_key(name: str) -> Path:
    return KEYS_DIR / f"{name}.pub.asc"


def secret_key(name: str) -> Path:
    return KEYS_DIR / f"{name}.secret.asc"


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

    def sign(self, release: Path, key_name: str) -> None:
        """Write InRelease (clearsigned) and Release.gpg (detached) next to ``release``."""
        signer = ["--local-user", FINGERPRINTS[key_name], "--digest-algo", "SHA512", "--yes"]
        inrelease = release.with_name("InRelease")
        detached = release.with_name("Release.gpg")
        for how, output in ((["--clearsign"], inrelease), (["--armor", "--detach-sign"], detached)):
            subprocess.run(
                [*self._gpg, *signer, *how, "-o", str(output), str(release)], check=True, capture_output=True
            )


def sign_release(release: Path, key_name: str) -> None:
    """Sign one Release file (see Signer for many)."""
    with Signer() as signer:
        signer.sign(release, key_name)
