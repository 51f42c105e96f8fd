# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a command (a GPU tool, dkms, rpm, ...) with a hard timeout, the C locale and no stdin.

AnsibleModule.run_command has no timeout, and a hung rocm-smi (a GPU stuck
in reset) must not hang the play: the tool runs in its own process group,
which is killed as a whole when the timeout expires.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import signal
import subprocess

_UNDECODABLE = re.compile("[\udc80-\udcff]")


class ToolTimeout(Exception):
    """The external tool did not finish within the module's timeout."""


TOOL_ENV = {"LC_ALL": "C", "LANG": "C", "PYTHONWARNINGS": "ignore", "NO_COLOR": "1", "TERM": "dumb"}


def make_runner(binary, timeout):
    """Return ``run(args) -> (rc, stdout, stderr)`` for ``binary``; raises ToolTimeout."""
    env = dict(os.environ)
    env.update(TOOL_ENV)

    def run(args):
        process = subprocess.Popen(
            [binary] + list(args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise ToolTimeout("%s %s did not finish within %ss" % (binary, " ".join(args), timeout)) from None
        return process.returncode, _text(out), _text(err)

    return run


def _kill_group(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        process.communicate(timeout=5)
    except (subprocess.TimeoutExpired, OSError, ValueError):
        pass


def _text(data):
    """UTF-8 text; an 8-bit CSI byte (0x9b) a C tool writes raw stays 0x9b, so that the
    parsers strip its colour sequence instead of meeting U+FFFD and the sequence's tail."""
    if not data:
        return ""
    text = data.decode("utf-8", errors="surrogateescape").replace("\udc9b", "\x9b")
    return _UNDECODABLE.sub("\ufffd", text)
