# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The status words the collection reports in: each vocabulary, and each set of it that decides something, once.

Three vocabularies, because they answer three questions (they share words where the meaning is the same):

* A compliance check's status (node_compliance's items, host_compliance, the fleet summary, onboarding's
  verify gate, the drift report): ``CHECK_STATUSES``, and the subsets that decide about a host.
* A GPU health verdict (module_utils/health): ``HEALTH_STATES``; a next-boot verdict (host/boot.py) may also
  be ``PENDING``. compliance/health.py turns a verdict into a check status.
* A GPU fact source's state (the gpu fact's ``sources``): ``SOURCE_STATES``; a collector returns
  ``SOURCE_OK`` or ``SOURCE_FAILED``.

The drift report (src/rocm_fleet/drift) cannot import collection code when installed alone; its copies
(rocm_fleet.drift.model.ITEM_STATUSES and DRIFT_STATUSES) are held equal to these by
tests/unit/plugins/module_utils/common/test_status.py, which also refuses a second definition in plugins/.

Stdlib only (runs on managed hosts too); Python 2.7 compatible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

PASS = "pass"
FAIL = "fail"
ERROR = "error"
SKIPPED = "skipped"
UNKNOWN = "unknown"
WARN = "warn"

# A check's status. skipped: does not apply on this host now (a GPU check while amdgpu is not loaded).
# unknown: a health state that could not be measured (N/A, EINVAL, a max-uint placeholder, an unreadable
# file), with its reason in the message; never a pass, though not a failure either.
# warn: a finding that does not fail the host (an unlisted GPU-group member where membership is not exclusive).
CHECK_STATUSES = (PASS, FAIL, ERROR, SKIPPED, UNKNOWN, WARN)
# What makes a host differ: compliance_fail_on_drift (onboarding's verify gate) fails on these.
PROBLEM_STATUSES = (FAIL, ERROR, UNKNOWN)
# What makes a host "drift" rather than "unverified" (an unknown) or "compliant", in the fleet summary and the
# drift report alike; a status this code does not know counts as drift too.
DRIFT_STATUSES = (FAIL, ERROR)

# A GPU health verdict: unsupported is neither healthy nor failed, it is unknown with the reason.
HEALTH_STATES = (PASS, FAIL, UNKNOWN)
# A next-boot verdict only: the running system is fine, the next boot will not be (a line disables amdgpu).
PENDING = "pending"

# A GPU fact source's state: read (ok), not installed (missing), unreadable or refused by its parser (failed),
# killed at the timeout (timeout), not asked for (skipped).
SOURCE_OK = "ok"
SOURCE_MISSING = "missing"
SOURCE_FAILED = "failed"
SOURCE_TIMEOUT = "timeout"
SOURCE_SKIPPED = "skipped"
SOURCE_STATES = (SOURCE_OK, SOURCE_MISSING, SOURCE_FAILED, SOURCE_TIMEOUT, SOURCE_SKIPPED)
