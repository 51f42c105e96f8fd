"""Stand-in for the get-pip bootstrap script that ansible-test downloads.

ansible-test fetches get-pip.py from a host this machine cannot reach. This
does the same job with what the interpreter already has: ensurepip installs
the bundled pip, which then runs with the arguments ansible-test gave.
"""

import ensurepip
import importlib
import runpy
import sys

ensurepip.bootstrap(upgrade=False, default_pip=True)
importlib.invalidate_caches()
# get-pip's own options; what remains are arguments of `pip install`.
GET_PIP_ONLY = {"--no-setuptools", "--no-wheel"}
sys.argv = ["pip", "install", *(arg for arg in sys.argv[1:] if arg not in GET_PIP_ONLY)]
runpy.run_module("pip", run_name="__main__", alter_sys=True)
