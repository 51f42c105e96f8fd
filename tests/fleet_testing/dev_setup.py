"""What ./dev setup installs, and what a test does when one of those Debian packages is missing.

``./dev setup`` (and ``./dev test``, what CI runs, which sets up first every time) installs the
APT_PACKAGES of ./dev and then makes the checkout's .venv. A test run by that .venv's Python is on a
machine ./dev set up: a package of the list being absent there is a broken setup, and the test fails
saying so, never skips (a skip there would disable the test in CI for good without anyone noticing).
Elsewhere (the Debian 13 controller root of test_newest_ansible_core.py runs tests/unit with a
virtualenv of its own and none of ./dev's packages, or a plain pytest on a machine ./dev never set up)
the package is genuinely unavailable, and the test skips.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fleet_testing.lab_helpers import REPO

DEV_VENV = REPO / ".venv"


def set_up_by_dev() -> bool:
    """Whether this Python is the checkout's .venv, which ./dev setup makes after installing APT_PACKAGES."""
    return Path(sys.prefix).resolve() == DEV_VENV.resolve()


def require_dev_package(present: bool, what: str, package: str) -> None:
    """Fail (under ./dev's .venv) or skip (elsewhere) unless ``present``: ``what`` comes from Debian's ``package``."""
    if present:
        return
    message = f"{what} is missing: ./dev setup installs Debian's {package} package (./dev's APT_PACKAGES)"
    if set_up_by_dev():
        pytest.fail(f"{message}; run ./dev setup")
    pytest.skip(f"{message}; this Python ({sys.prefix}) is not ./dev's .venv, so nothing installed it here")
