"""The drift engine: run rocm_fleet.core.drift through ansible-runner and read each host's result from its events.

Each host costs one task (roles/compliance: rocm_fleet.core.host_compliance):
two module calls over one connection, gpu_facts and node_compliance, with the
decision and the desired state evaluated on the controller between them; one
call while the facts kept from the run before (the fact cache) still hold.
Nothing on a host changes. A host that is unreachable, or whose checks could
not run, is recorded as such and never stops the others.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import shlex
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from rocm_fleet import __version__
from rocm_fleet.collection import NotInstalled, locate
from rocm_fleet.drift.model import DriftReport, HostResult, RunInfo
from rocm_fleet.drift.results import host_result

# By its name, so the same command runs from a checkout and from the installed collection (rocm_fleet.collection).
PLAYBOOK = "rocm_fleet.core.drift"
# The cached facts never expire (0): they never stand in unconfirmed (host_compliance reads them again in its one
# call and decides again where they changed), and a run writes a host's facts only when they changed.
FACT_CACHE_SECONDS = 0
COMPLIANCE_ACTIONS = ("rocm_fleet.core.host_compliance", "host_compliance")


class EngineError(RuntimeError):
    """The run could not look at any host: bad inventory, missing playbook, Ansible failing to start."""


def inventory_hosts(inventory: str, limit: str | None) -> dict[str, list[str]]:
    """{host: [group names]} of the hosts the run covers, as Ansible resolves the pattern."""
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader

    if not Path(inventory).exists():
        raise EngineError(f"inventory {inventory} does not exist")
    manager = InventoryManager(loader=DataLoader(), sources=[inventory])
    hosts = manager.get_hosts(limit or "all")
    return {host.name: sorted(group.name for group in host.get_groups() if group.name != "all") for host in hosts}


class _Events:
    """Collects per-host outcomes from ansible-runner events and reports each finished host once."""

    def __init__(self, hosts: list[str], progress: Callable[[str], None]):
        self.hosts = hosts
        self.progress = progress
        self.results: dict[str, HostResult] = {}

    def _finish(self, host: str, result: HostResult) -> None:
        if host in self.results or host not in self.hosts:
            return
        self.results[host] = result
        self.progress(f"{host}: {result.status if result.status != 'compliant' else 'done'} "
                      f"({len(self.results)}/{len(self.hosts)})")

    def __call__(self, event: dict) -> bool:
        """Read one event; False: ansible-runner need not write it to the (temporary) artifacts.

        Writing every event as a JSON file cost the controller more CPU than reading them: a host's
        result event carries its check results and facts, and the artifacts are deleted unread.
        """
        data = event.get("event_data") or {}
        host, kind, res = data.get("host"), event.get("event"), data.get("res") or {}
        if not host:
            return False
        if kind == "runner_on_unreachable":
            self._finish(host, HostResult.unreachable(str(res.get("msg") or "unreachable").strip()))
        elif kind == "runner_on_failed" and not data.get("ignore_errors"):
            reason = str(res.get("msg") or "failed").strip()
            self._finish(host, HostResult(error=f"task '{data.get('task')}' failed: {reason}"))
        elif kind == "runner_on_ok" and data.get("task_action") in COMPLIANCE_ACTIONS:
            self._finish(host, host_result(res))
        return False


def fact_cache_dir(inventory: str) -> Path | None:
    """Where this inventory's hosts' GPU and OS facts are kept between runs; None when switched off.

    ROCM_FLEET_FACT_CACHE names the directory (``none`` switches the cache off);
    by default it is per inventory under $XDG_CACHE_HOME (~/.cache)/rocm-fleet/facts.
    """
    configured = os.environ.get("ROCM_FLEET_FACT_CACHE")
    if configured:
        return None if configured.lower() == "none" else Path(configured)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = hashlib.sha256(str(Path(inventory).resolve()).encode()).hexdigest()[:16]
    return base / "rocm-fleet" / "facts" / key


# The environment's bookkeeping of a shell session: not an input of any host's declared state.
SESSION_VARIABLES = frozenset(("PWD", "OLDPWD", "SHLVL", "_", "TERM", "COLUMNS", "LINES", "SSH_CLIENT",
                               "SSH_CONNECTION", "SSH_TTY", "XDG_SESSION_ID", "WINDOWID"))


def state_cache_dir(inventory: str) -> Path | None:
    """Where host_compliance keeps each host's declared state between runs; None when switched off.

    ROCM_FLEET_STATE_CACHE names the directory (``none`` switches it off); by default it lies
    beside the fact cache (plugins/plugin_utils/compliance/declared_state_cache.py says what its key covers).
    """
    configured = os.environ.get("ROCM_FLEET_STATE_CACHE")
    if configured:
        return None if configured.lower() == "none" else Path(configured)
    facts = fact_cache_dir(inventory)
    return facts.with_name(facts.name + ".state") if facts else None


def environment_key(environ: dict[str, str]) -> str:
    """The run's part of the declared state's key: the environment lookups of env read, less a shell's bookkeeping."""
    kept = sorted((name, value) for name, value in environ.items() if name not in SESSION_VARIABLES)
    return hashlib.sha256(repr(kept).encode()).hexdigest()


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def collect(
    inventory: str, limit: str | None, progress: Callable[[str], None], extra_vars: list[str] = (),
) -> tuple[DriftReport, dict]:
    """Look at every host of ``inventory`` (``limit``: an Ansible pattern); the ``drift.cli`` engine contract.

    ``extra_vars`` are ansible-playbook ``-e`` arguments, passed on unchanged.
    """
    import ansible_runner

    started = _now()
    inventory = str(Path(inventory).resolve())
    host_groups = inventory_hosts(inventory, limit)
    if not host_groups:
        raise EngineError(f"no host of {inventory} matches {limit or 'all'}")
    try:
        collection = locate()
    except NotInstalled as exc:
        raise EngineError(str(exc)) from None
    progress(f"checking {len(host_groups)} host(s) of {inventory}")
    events = _Events(sorted(host_groups), progress)
    env = {
        # The collection's own ansible.cfg (the tarball and the wheel carry it), so drift runs with the
        # settings it is made for (gathering = smart, pipelining, ControlPersist) wherever it is started.
        "ANSIBLE_CONFIG": str(collection.root / "ansible.cfg"),
        "ANSIBLE_COLLECTIONS_PATH": os.pathsep.join(
            filter(None, (str(collection.collections_path), os.environ.get("ANSIBLE_COLLECTIONS_PATH")))
        ),
        # The caller's forks where it sets them (benchmarks/bench_scale.py), else one per host from 16 to 64.
        "ANSIBLE_FORKS": os.environ.get("ANSIBLE_FORKS") or str(max(16, min(64, len(host_groups)))),
        "ANSIBLE_NOCOLOR": "1",
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        # ansible-runner turns host key checking off unless told: keep the caller's setting, else Ansible's default.
        "ANSIBLE_HOST_KEY_CHECKING": os.environ.get("ANSIBLE_HOST_KEY_CHECKING", "True"),
        # The fact cache (below) keeps a host's facts until they change.
        "ANSIBLE_CACHE_PLUGIN_TIMEOUT": str(FACT_CACHE_SECONDS),
        # The report is built here from each host's result: the playbook's set_stats summary (for AWX
        # workflows) would read every host's variables once more at the end, serially, for no reader.
        "ROCM_FLEET_DRIFT_SET_STATS": "false",
    }
    # ansible-runner keeps Ansible's jsonfile fact cache in its (temporary) artifacts
    # unless given a directory: each host's facts from the run before let host_compliance
    # decide first and confirm in its one node_compliance call, one module call per host
    # instead of two while the facts hold. Only drift runs use this cache, never site.yml.
    cache = fact_cache_dir(inventory)
    cache_options = {"fact_cache_type": "jsonfile", "fact_cache": str(cache)} if cache else {"fact_cache_type": "none"}
    # Each host's declared state, rendered again only when what it is rendered from changed (a nightly drift of
    # an unchanged fleet renders none): the controller's work per host comes close to that of a ping.
    state = state_cache_dir(inventory)
    env.update(ROCM_FLEET_STATE_CACHE=str(state) if state else "",
               ROCM_FLEET_STATE_KEY=environment_key(dict(os.environ)))
    with tempfile.TemporaryDirectory(prefix="rocm-fleet-drift-") as private:
        runner = ansible_runner.run(
            private_data_dir=private, project_dir=str(collection.root), playbook=PLAYBOOK, inventory=inventory,
            limit=limit, envvars=env, event_handler=events, quiet=True, suppress_env_files=True,
            cmdline=shlex.join(option for value in extra_vars for option in ("-e", value)) or None, **cache_options,
        )
        if not events.results and runner.rc != 0:
            output = runner.stdout.read()[-2000:] if runner.stdout else ""
            raise EngineError(f"ansible-playbook {PLAYBOOK} exited {runner.rc} without a host result: {output}")
    for host in host_groups:
        if host not in events.results:  # the play ended for it before any task said why
            events.results[host] = HostResult(error="the run ended before this host's checks ran")
    run = RunInfo(
        started=started, finished=_now(), inventory=inventory, command=shlex.join(sys.argv),
        rocm_fleet_version=__version__, limit=limit,
    )
    return DriftReport(run=run, hosts=events.results), host_groups
