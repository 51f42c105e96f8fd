"""Each status vocabulary is defined once (plugins/module_utils/common/status.py): its users import it, no other
module of the collection spells it again, and the drift report's copies equal it (src/rocm_fleet cannot import
collection code when installed alone)."""

from __future__ import annotations

import ast
from pathlib import Path

from ansible_collections.rocm_fleet.core.plugins.module_utils.common import status
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance import evaluate
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance import health as compliance_health
from ansible_collections.rocm_fleet.core.plugins.module_utils.health import common as health_common
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.boot import amdgpu_disabled_next_boot
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.compliance import fleet

from rocm_fleet.drift import model as drift_model
from rocm_fleet.drift import results as drift_results
from rocm_fleet.drift.writers import html, html_fleet, html_text

REPO = Path(__file__).resolve().parents[5]
STATUS_FILE = REPO / "plugins" / "module_utils" / "common" / "status.py"
VOCABULARIES = {name: value for name, value in vars(status).items() if name.isupper() and isinstance(value, tuple)}
WORDS = {name: value for name, value in vars(status).items() if name.isupper() and isinstance(value, str)}
# The drift report's own definitions: its check statuses add "waived"; the others mirror status.py.
SRC_DEFINITIONS = {("src/rocm_fleet/drift/model.py", name) for name in ("CHECK_STATUSES", "DRIFT_STATUSES")}


def _strings(node):
    """The strings of a tuple, list or set display of string constants (two or more), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set", "tuple"):
        node = node.args[0] if len(node.args) == 1 else None
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or len(node.elts) < 2:
        return None
    if not all(isinstance(item, ast.Constant) and isinstance(item.value, str) for item in node.elts):
        return None
    return [item.value for item in node.elts]


def _assignments(path):
    """(line, target name, value node) of each assignment to a plain name in ``path``, at any depth."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            names = target.elts if isinstance(target, ast.Tuple) else [target]
            values = value.elts if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) else [value]
            for name, item in zip(names, values if len(values) == len(names) else [value] * len(names)):  # noqa: B905
                if isinstance(name, ast.Name):
                    yield node.lineno, name.id, item


def redefinitions(repo):
    """'file:line: NAME ...' for each vocabulary of status.py (or the drift report's) spelled again elsewhere, and
    each upper-case constant of plugins/ other than status.py bound to a status word."""
    vocabularies = {"common/status.py " + name: set(value) for name, value in VOCABULARIES.items()}
    vocabularies["rocm_fleet.drift.model CHECK_STATUSES"] = set(drift_model.CHECK_STATUSES)
    words = set(WORDS.values())
    found = []
    files = [*(repo / "plugins").rglob("*.py"), *(repo / "src" / "rocm_fleet").rglob("*.py")]
    for path in sorted(files):
        relative = path.relative_to(repo).as_posix()
        if relative == STATUS_FILE.relative_to(REPO).as_posix():
            continue
        for line, name, value in _assignments(path):
            strings = _strings(value)
            if strings is not None and (relative, name) not in SRC_DEFINITIONS:
                for label, vocabulary in vocabularies.items():
                    if set(strings) == vocabulary:
                        found.append("%s:%d: %s spells %s again: import it" % (relative, line, name, label))
            is_word = isinstance(value, ast.Constant) and value.value in words
            if relative.startswith("plugins/") and name.isupper() and is_word:
                found.append("%s:%d: %s = %r: import the word from common/status.py"
                             % (relative, line, name, value.value))
    return found


def test_nothing_else_defines_a_status_vocabulary_or_word():
    assert redefinitions(REPO) == []


def test_a_second_definition_is_found(tmp_path):
    module = tmp_path / "plugins" / "module_utils" / "health" / "extra.py"
    module.parent.mkdir(parents=True)
    module.write_text('STATES = ("unknown", "pass", "fail")\nOK = "ok"\nLABELS = ("pass", "fail")\n')
    assert redefinitions(tmp_path) == [
        "plugins/module_utils/health/extra.py:1: STATES spells common/status.py HEALTH_STATES again: import it",
        "plugins/module_utils/health/extra.py:2: OK = 'ok': import the word from common/status.py",
    ]


def test_the_users_take_the_one_definition():
    assert evaluate.CHECK_STATUSES is status.CHECK_STATUSES
    assert evaluate.PROBLEM_STATUSES is status.PROBLEM_STATUSES
    assert fleet.CHECK_STATUSES is status.CHECK_STATUSES and fleet.DRIFT_STATUSES is status.DRIFT_STATUSES
    assert health_common.HEALTH_STATES is status.HEALTH_STATES
    # Every verdict a health check or the next-boot check gives becomes a check status.
    assert set(compliance_health.STATE_STATUS) == {*status.HEALTH_STATES, status.PENDING}
    assert set(compliance_health.STATE_STATUS.values()) <= set(status.CHECK_STATUSES)
    blacklisted = {"/etc/modprobe.d/blacklist.conf": "blacklist amdgpu\n"}
    assert amdgpu_disabled_next_boot(blacklisted, {})["state"] == status.PENDING


def test_the_subsets_are_of_their_vocabulary():
    assert set(status.PROBLEM_STATUSES) <= set(status.CHECK_STATUSES)
    assert set(status.DRIFT_STATUSES) <= set(status.PROBLEM_STATUSES)
    assert set(status.HEALTH_STATES) <= set(status.CHECK_STATUSES)
    assert status.PENDING not in status.CHECK_STATUSES
    assert {status.SOURCE_OK, status.SOURCE_FAILED} <= set(status.SOURCE_STATES)
    for vocabulary in VOCABULARIES.values():
        assert len(set(vocabulary)) == len(vocabulary)


def test_the_drift_report_reads_the_statuses_the_collection_gives():
    assert drift_model.ITEM_STATUSES == status.CHECK_STATUSES
    assert drift_model.DRIFT_STATUSES == status.DRIFT_STATUSES
    assert drift_results.ITEM_STATUSES is drift_model.ITEM_STATUSES
    assert set(drift_model.CHECK_STATUSES) == {*status.CHECK_STATUSES, "waived"}
    for subset in (drift_model.WAIVABLE_STATUSES, drift_model.FINDING_STATUSES):
        assert set(subset) <= set(drift_model.CHECK_STATUSES)
    # The page's tables of the check statuses: each names every status it shows, and no other.
    assert sorted(html_fleet.COUNTED) == sorted(drift_model.CHECK_STATUSES)
    assert set(html_text.CHECK_ICONS) == set(drift_model.CHECK_STATUSES)
    assert set(html.OTHER_COUNTS) == set(drift_model.CHECK_STATUSES) - {status.PASS}
    # Host statuses: the report's sort order names each once; a play's summary says not_checked where the report
    # tells unreachable from error, and means the same by the others.
    assert sorted(drift_model.HOST_ORDER) == sorted(drift_model.HOST_STATUSES)
    assert set(fleet.HOST_STATUSES) - {"not_checked"} <= set(drift_model.HOST_STATUSES)
