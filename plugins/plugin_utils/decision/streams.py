# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""AMD's release streams (roles/preflight/vars/release_streams.yml): what a release of each is on a host.

A release's row in the support matrix names its stream; the stream's row says how its repositories
are registered, how its packages are named, where it installs, what makes it the default and which
tools it ships. Every answer here comes from those two rows, so a release of an existing stream is
a matrix row and nothing else.

* stream_name(matrix, release) / stream_of(streams, matrix, release): the stream of a release.
* host_os(distribution, version, codename): the host as the streams' os_dirs key it.
* registrations(streams, keys, matrix, releases, host, manager): the repository registrations
  (apt deb822 stanzas, dnf/zypper .repo sections) that the releases need on the host.
* render(registration): the file text of a registration, as AMD's instructions write it.
* release_packages(streams, matrix, release, usecases, targets, package_format, all_targets):
  the package names of the use cases for the host's GPU targets.
* install_root, default_links, stream_tools: where a release lives, what points at it, what it ships.
* installed_releases(streams, matrix, packages) / default_link_release(streams, matrix, link, resolved, ...):
  a host's installed releases of every stream (from their release packages) and its default release
  (from the path its default link resolves to); replaces / conflicting: which streams cannot sit side by side.
* stream_problems(streams, keys, matrix): what is wrong with the tables (an extension's typo).

Every failure is a StreamError whose message names the release, the stream and what to do.
Stdlib only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import string

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import OS_LABELS, os_key, version_key

DEFAULT_STREAM = "legacy"
MANAGERS = ("apt", "dnf", "zypper")
PACKAGE_FORMATS = ("deb", "rpm")
# Enterprise derivatives read the os_dirs of the distribution they rebuild.
OS_FALLBACK = {"ol": "rhel", "rocky": "rhel", "centos": "rhel", "almalinux": "rhel"}
_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
_PER_RELEASE = ("{release}", "{dir}", "{series}")
# What a registration's values may hold: they reach files root's package manager reads, so a value from an
# inventory's *_extra that would break out of its line or field is refused (value_syntax's url characters).
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://[A-Za-z0-9._~:/?#@!&+,=%\[\]-]+$")
_WORDS = re.compile(r"^[A-Za-z0-9._~:/+@=-]+( [A-Za-z0-9._~:/+@=()-]+)*$")
STREAM_KEYS = ("title", "series", "dir", "key", "os_dirs", "repositories", "packages", "all_targets",
               "target_names", "apt_pin", "install_root", "default", "release_package", "version_file", "tools",
               "replaces", "source")


class StreamError(ValueError):
    """A release, host or table the streams cannot answer for; the message says what to do."""


def _release_parts(release):
    match = _RELEASE.match(str(release or "").strip())
    if not match:
        raise StreamError("%r is not a ROCm release (x.y.z)" % (release,))
    major, minor, patch = match.groups()
    short = "%s.%s" % (major, minor) if int(patch) == 0 else "%s.%s.%s" % (major, minor, patch)
    return {"release": match.group(0), "major": major, "minor": minor, "patch": patch, "short": short}


def stream_name(matrix, release):
    """The stream the matrix row of ``release`` names ("legacy" where it names none)."""
    row = (matrix or {}).get(str(release))
    if not isinstance(row, dict):
        known = ", ".join(sorted(matrix or {}, key=lambda value: version_key(value) or (0,)))
        raise StreamError("ROCm %s is not in the support matrix (known: %s); add its row to "
                          "preflight_support_matrix_extra or pick a known release" % (release, known))
    return str(row.get("stream") or DEFAULT_STREAM)


def stream_of(streams, matrix, release):
    name = stream_name(matrix, release)
    stream = (streams or {}).get(name)
    if not isinstance(stream, dict):
        raise StreamError("ROCm %s names the release stream %r, which release_streams.yml does not define "
                          "(known: %s)" % (release, name, ", ".join(sorted(streams or {}))))
    return name, stream


def release_values(stream, release):
    """{release, major, minor, patch, short, series, dir} of ``release`` in ``stream``."""
    values = _release_parts(release)
    values["series"] = _format(stream.get("series") or "{release}", values)
    values["dir"] = _format(stream.get("dir") or "{release}", values)
    return values


def _format(template, values):
    try:
        return string.Formatter().vformat(str(template), (), values)
    except (KeyError, IndexError, ValueError) as error:
        raise StreamError("the release stream field %r names %s, which is not a known placeholder"
                          % (template, error)) from error


def host_os(distribution, version, codename=""):
    """{os, version, major, codename} of a host, from ansible_distribution and its version."""
    name = os_key(distribution) or str(distribution or "").strip().lower()
    version = str(version or "").strip()
    return {"os": name, "version": version, "major": version.split(".", maxsplit=1)[0], "codename": str(codename or "")}


def _os_dir(stream_title, table_name, table, host, values):
    """The directory ``table`` (os key -> {OS release or major or '*': format}) gives the host."""
    for name in (host["os"], OS_FALLBACK.get(host["os"])):
        entries = (table or {}).get(name) if name else None
        if not entries:
            continue
        for wanted in (host["version"], host["major"], "*"):
            if wanted in entries:
                return _format(entries[wanted], values)
    label = OS_LABELS.get(host["os"], host["os"])
    served = "; ".join("%s %s" % (OS_LABELS.get(name, name), ", ".join(sorted(map(str, entries))))
                       for name, entries in sorted((table or {}).items()))
    raise StreamError("%s has no %s repository for %s %s (AMD builds it for %s): install a listed OS or "
                      "add the directory to preflight_release_streams_extra" % (
                          stream_title, table_name, label, host["version"], served or "no OS"))


def _applies(entry, release):
    """Whether an entry's releases: {min, max} admit ``release`` (no bounds: every release)."""
    bounds = entry.get("releases") if isinstance(entry, dict) else None
    if not bounds:
        return True
    wanted = version_key(release)
    low, high = version_key(bounds.get("min")), version_key(bounds.get("max"))
    return (low is None or wanted >= low) and (high is None or wanted <= high)


def _host_values(stream, release, host):
    values = release_values(stream, release)
    values.update(os_version=host["version"], os_major=host["major"], codename=host["codename"], arch="amd64")
    tables = stream.get("os_dirs") or {}
    os_dirs = {}
    for table_name in tables:
        os_dirs[table_name] = _LazyDir(stream.get("title") or "the release stream", table_name, tables[table_name],
                                       host, values)
    values["os_dirs"] = _Dirs(os_dirs)
    return values


class _LazyDir:
    """An os_dirs table resolved only where a field names it, so a missing directory fails only its user."""

    def __init__(self, title, name, table, host, values):
        self.args = (title, name, table, host, values)

    def __format__(self, spec):
        return format(_os_dir(*self.args), spec)


class _Dirs(dict):
    def __missing__(self, key):
        raise StreamError("a repository field names os_dirs[%s], which the stream does not define" % key)


def _expand(template, stream, releases, host):
    """The distinct values of ``template`` over the releases (once when it names no release field)."""
    per_release = any(field in str(template) for field in _PER_RELEASE)
    chosen = releases if per_release else releases[:1]
    seen = []
    for release in chosen:
        value = _format(template, _host_values(stream, release, host))
        if value not in seen:
            seen.append(value)
    return seen


def _stream_releases(streams, matrix, releases):
    """{stream name: (stream, [releases in the given order])} for the host's releases."""
    grouped = {}
    for release in releases or []:
        name, stream = stream_of(streams, matrix, release)
        grouped.setdefault(name, (stream, []))[1].append(str(release))
    return grouped


def _key(keys, name, stream_title):
    key = (keys or {}).get(name)
    if not isinstance(key, dict):
        raise StreamError("%s names the signing key %r, which preflight_repository_keys does not define" % (
            stream_title, name))
    return key


def _apt_registration(layout, stream, wanted, host, key):
    uris = []
    for uri in layout.get("uris") or []:
        for value in _expand(uri["url"], stream, [release for release in wanted if _applies(uri, release)], host):
            if value not in uris:
                uris.append(value)
    suite = " ".join(_expand(layout["suite"], stream, wanted, host))
    components = " ".join(layout.get("components") or ["main"])
    fields = [["X-Repo-Id", layout["repo_id"]]] if layout.get("repo_id") else []
    fields += [["Types", "deb"], ["URIs", " ".join(uris)], ["Suites", suite], ["Components", components],
               ["Architectures", "amd64"], ["Signed-By", key["apt_keyring"]]]
    if layout.get("enabled"):
        fields.append(["Enabled", "yes"])
    return {"path": layout["file"], "style": layout.get("style") or "deb822", "fields": fields}


def _newest(releases):
    return max(releases, key=version_key)


def _rpm_registration(layout, stream, wanted, host, key, manager):
    sections = []
    for section in layout.get("sections") or []:
        admitted = [release for release in wanted if _applies(section, release)]
        if admitted and not any(field in str(section["id"]) for field in _PER_RELEASE):
            admitted = [_newest(admitted)]
        for release in admitted:
            values = _host_values(stream, release, host)
            item = {"id": _format(section["id"], values), "name": _format(section["title"], values),
                    "baseurl": _format(section["baseurl"], values), "gpgkey": "file://%s" % key["rpm_path"]}
            if item["id"] not in [known["id"] for known in sections]:
                sections.append(item)
    directory = "/etc/yum.repos.d" if manager == "dnf" else "/etc/zypp/repos.d"
    return {"path": "%s/%s.repo" % (directory, layout["file"]), "priority": layout.get("priority"),
            "sections": sections}


def registrations(streams, keys, matrix, releases, host, manager):
    """The registrations the host needs for ``releases`` on ``manager`` (apt, dnf, zypper), in table order.

    apt: {name, manager, key, stream, path, style, fields: [[field, value], ...]} (one deb822 stanza, or
    one line where the stream's style says one_line); dnf/zypper: {name, manager, key, stream, path,
    priority, sections: [{id, name, baseurl, gpgkey}]}.
    """
    if manager not in MANAGERS:
        raise StreamError("unknown package manager %r (%s)" % (manager, ", ".join(MANAGERS)))
    found = []
    for _name, (stream, wanted) in _stream_releases(streams, matrix, releases).items():
        title = stream.get("title") or _name
        key = _key(keys, stream.get("key"), title)
        for repository in stream.get("repositories") or []:
            layout = repository.get(manager)
            if not layout:
                raise StreamError("%s has no %s registration for %s: it is not built for this package manager" % (
                    title, manager, repository.get("name")))
            entry = {"name": repository["name"], "manager": manager, "key": stream.get("key"), "stream": _name}
            if manager == "apt":
                entry.update(_apt_registration(layout, stream, wanted, host, key))
            else:
                entry.update(_rpm_registration(layout, stream, wanted, host, key, manager))
            found.append(entry)
    return found


def render(registration):
    """The text of a registration's file (without the managed-by header a role adds)."""
    if registration["manager"] == "apt":
        fields = dict(registration["fields"])
        if registration.get("style") == "one_line":
            return "deb [arch=%s signed-by=%s] %s %s %s\n" % (
                fields["Architectures"], fields["Signed-By"], fields["URIs"], fields["Suites"], fields["Components"])
        return "".join("%s: %s\n" % (field, value) for field, value in registration["fields"])
    blocks = []
    for section in registration["sections"]:
        lines = ["[%s]" % section["id"], "name=%s" % section["name"], "baseurl=%s" % section["baseurl"],
                 "enabled=1", "gpgcheck=1", "gpgkey=%s" % section["gpgkey"]]
        if registration.get("priority") is not None:
            lines.append("priority=%s" % registration["priority"])
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _names(entries, package_format, release):
    names = []
    for entry in entries or []:
        if isinstance(entry, dict):
            if package_format not in (entry.get("formats") or PACKAGE_FORMATS) or not _applies(entry, release):
                continue
            entry = entry["name"]
        names.append(str(entry))
    return names


def release_packages(streams, matrix, release, usecases, targets=(), package_format="deb", all_targets=False):
    """The package names of ``usecases`` for ``release``: per GPU target where the stream names them so
    (the host's ``targets``), every target's package when ``all_targets``. Without GPU targets (a login
    node) a per-target stream installs its all-targets packages."""
    name, stream = stream_of(streams, matrix, release)
    title = stream.get("title") or name
    if package_format not in PACKAGE_FORMATS:
        raise StreamError("unknown package format %r (deb or rpm)" % (package_format,))
    row = matrix[str(release)]
    built = [str(target) for target in row.get("gfx_targets") or []]
    targets = [str(target) for target in targets or []]
    values = release_values(stream, release)
    table = stream.get("packages") or {}
    everything = all_targets or not targets
    names = []
    for usecase in usecases or []:
        if usecase not in table:
            raise StreamError("%s has no use case %r for ROCm %s (known: %s)" % (
                title, usecase, release, ", ".join(sorted(table))))
        entries = table[usecase]
        if everything and usecase in (stream.get("all_targets") or {}):
            entries = stream["all_targets"][usecase]
        for template in _names(entries, package_format, release):
            if "{target}" not in template:
                found = [_format(template, values)]
            else:
                found = []
                for target in targets:
                    suffix = (stream.get("target_names") or {}).get(target, target)
                    package = _format(template, dict(values, target=suffix))
                    if target not in built:
                        raise StreamError(
                            "ROCm %s is not built for %s (%s builds it for %s): %s would have been needed. Pick a "
                            "release whose gfx_targets list %s" % (
                                release, target, title, ", ".join(built) or "no GPU target", package, target))
                    found.append(package)
            for package in found:
                if package not in names:
                    names.append(package)
    return names


def install_root(streams, matrix, release):
    _name, stream = stream_of(streams, matrix, release)
    return _format(stream.get("install_root") or "/opt/rocm-{release}", release_values(stream, release))


def default_links(streams, matrix, release):
    """[{alternative, link, path}]: the update-alternatives choices that make ``release`` the host's default."""
    _name, stream = stream_of(streams, matrix, release)
    values = release_values(stream, release)
    return [{field: _format(item.get(field, ""), values) for field in ("alternative", "link", "path")}
            for item in stream.get("default") or []]


def release_package(streams, matrix, release):
    """The package whose removal takes every package of ``release`` with it (rocm-core7.2.3, amdrocm-base10.1)."""
    _name, stream = stream_of(streams, matrix, release)
    return _format(stream.get("release_package") or "rocm-core{release}", release_values(stream, release))


def version_file(streams, matrix, release):
    """What the default release's .info/version holds once ``release`` is the default, a glob (7.2.3-*, 10.1.0)."""
    _name, stream = stream_of(streams, matrix, release)
    return _format(stream.get("version_file") or "{release}-*", release_values(stream, release))


def unlisted_release_packages(streams, matrix, installed, releases, conflicting_only=False):
    """The release packages among ``installed`` (package names) of a release of any stream that ``releases``
    does not list, sorted: removing them removes those releases (the packages role's
    packages_remove_unlisted_versions, the move off the legacy stream). With ``conflicting_only``, only those of a
    stream that cannot sit beside the streams of ``releases`` (one replaces the other)."""
    listed = set(release_package(streams, matrix, release) for release in releases or [])
    wanted = set(stream_name(matrix, release) for release in releases or [])
    streams_in_play = [stream for name, stream in sorted((streams or {}).items()) if isinstance(stream, dict) and (
        not conflicting_only or any(conflicting(streams, name, other) for other in wanted))]
    return sorted(name for name in set(map(str, installed or [])) if name not in listed and any(
        _template_fields(stream, _release_package_template(stream), name) is not None for stream in streams_in_play))


def stream_tools(streams, matrix, release):
    return list(stream_of(streams, matrix, release)[1].get("tools") or [])


def stream_problems(streams, keys, matrix):
    """What is wrong with the stream and key tables and the matrix rows' stream names."""
    problems = []
    for name, stream in sorted((streams or {}).items()):
        where = "release stream %s" % name
        if not isinstance(stream, dict):
            problems.append("%s: must be a mapping" % where)
            continue
        unknown = sorted(set(stream) - set(STREAM_KEYS))
        if unknown:
            problems.append("%s: unknown keys %s (known: %s)" % (where, ", ".join(unknown), ", ".join(STREAM_KEYS)))
        if not str(stream.get("source") or "").strip():
            problems.append("%s: has no source" % where)
        if stream.get("key") not in (keys or {}):
            problems.append("%s: key %r is not in preflight_repository_keys" % (where, stream.get("key")))
        for usecase, entries in sorted((stream.get("packages") or {}).items()):
            for entry in entries or []:
                if isinstance(entry, dict) and not entry.get("name"):
                    problems.append("%s: a package of use case %s has no name" % (where, usecase))
        for repository in stream.get("repositories") or []:
            for manager in MANAGERS:
                if manager not in (repository or {}):
                    problems.append("%s: repository %s has no %s registration" % (
                        where, (repository or {}).get("name"), manager))
    for name, key in sorted((keys or {}).items()):
        where = "repository key %s" % name
        if not isinstance(key, dict):
            problems.append("%s: must be a mapping" % where)
            continue
        for field in ("url", "apt_keyring", "rpm_path", "source"):
            if not str(key.get(field) or "").strip():
                problems.append("%s: has no %s" % (where, field))
    for release, row in sorted((matrix or {}).items()):
        wanted = (row or {}).get("stream") if isinstance(row, dict) else None
        if wanted is not None and wanted not in (streams or {}):
            problems.append("ROCm %s: stream %r is not a release stream (known: %s)" % (
                release, wanted, ", ".join(sorted(streams or {}))))
    return problems


def conflict_problem(streams, matrix, releases):
    """Why ``releases`` cannot be installed side by side (one stream replaces another's), or None."""
    grouped = _stream_releases(streams, matrix, releases)
    for name, (stream, wanted) in grouped.items():
        for replaced in stream.get("replaces") or []:
            if replaced in grouped:
                old = grouped[replaced]
                return ("ROCm %s (%s) and %s (%s) cannot be installed side by side: AMD's instructions remove %s "
                        "before installing %s. List the releases of one stream in packages_rocm_versions, or move "
                        "the host with playbooks/upgrade.yml" % (
                            ", ".join(old[1]), old[0].get("title") or replaced, ", ".join(wanted),
                            stream.get("title") or name, old[0].get("title") or replaced,
                            stream.get("title") or name))
    return None


def origin(url):
    """scheme://host of a URL: what a mirror stands in for."""
    scheme, _sep, rest = str(url).partition("://")
    return "%s://%s" % (scheme, rest.split("/", 1)[0])


def mirrored(url, mirrors):
    """``url`` with its origin replaced by the mirror ``mirrors`` maps it to ({origin: mirror base}); as it is
    where no mirror stands in for its origin."""
    for source, base in (mirrors or {}).items():
        source = str(source).rstrip("/")
        if url == source or str(url).startswith(source + "/"):
            return str(base).rstrip("/") + str(url)[len(source):]
    return url


def _mirror_registration(item, mirrors):
    if item["manager"] == "apt":
        item["fields"] = [[field, " ".join(mirrored(url, mirrors) for url in value.split()) if field == "URIs"
                           else value] for field, value in item["fields"]]
    else:
        for section in item["sections"]:
            section["baseurl"] = mirrored(section["baseurl"], mirrors)
    return item


def _check_values(item):
    """Refuse a value that is not a URL (URIs, baseurl) or a line of plain words (the rest)."""
    if item["manager"] == "apt":
        values = [(field, value, field == "URIs") for field, value in item["fields"]]
    else:
        values = [(name, section[name], name in ("baseurl", "gpgkey")) for section in item["sections"]
                  for name in ("id", "name", "baseurl", "gpgkey")]
    values.append(("path", item["path"], False))
    for field, value, is_url in values:
        parts = str(value).split(" ") if is_url and item["manager"] == "apt" else [str(value)]
        if not all((_URL if is_url else _WORDS).match(part) for part in parts):
            raise StreamError("the %s registration's %s would be %r, which is not %s: correct the release stream "
                              "data (preflight_release_streams_extra) or repo_mirrors" % (
                                  item["name"], field, value, "a URL" if is_url else "one line of plain words"))


def _origins(found, keys):
    urls = [url for item in found for field, value in item.get("fields", []) if field == "URIs"
            for url in value.split()]
    urls += [section["baseurl"] for item in found for section in item.get("sections", [])]
    urls += [key["url"] for key in keys.values()]
    return sorted({origin(url) for url in urls})


def host_plan(streams, keys, matrix, releases, default, host, manager, usecases, targets, all_targets=False,
              mirrors=None, mirror_required=False, driver_repository=False):
    """Everything the roles need for one host's releases: {streams, registrations (with content), keys,
    packages {release: names}, roots {release: path}, defaults (the default release's links), tools, apt_pin}.

    ``mirrors`` ({AMD origin: mirror base URL}) rewrites every repository and key URL of an origin it maps;
    with ``mirror_required`` (repo_source: mirror) an origin it does not map is a problem. With
    ``driver_repository`` the keys include the one that signs the amdgpu repositories (driver: true).

    Raises StreamError (the message says what to do) for an unknown release, a release of another stream
    that cannot sit beside the others, an OS without a repository, a GPU target a release does not build.
    """
    releases = [str(release) for release in releases or []]
    if str(default) not in releases:
        raise StreamError("the default release %s is not among the host's releases %s" % (
            default, ", ".join(releases) or "(none)"))
    problem = conflict_problem(streams, matrix, releases)
    if problem:
        raise StreamError(problem)
    package_format = "deb" if manager == "apt" else "rpm"
    found = registrations(streams, keys, matrix, releases, host, manager)
    used = []
    for name in [item["key"] for item in found] + [name for name, key in sorted(keys.items())
                                                   if driver_repository and (key or {}).get("driver")]:
        if name not in used:
            used.append(name)
    needed = {name: dict(keys[name]) for name in used}
    unmapped = [source for source in _origins(found, needed) if not any(
        source == str(mapped).rstrip("/") for mapped in mirrors or {})]
    if mirror_required and unmapped:
        raise StreamError("repo_source is mirror, but repo_mirrors names no mirror for %s (%s): map each to the "
                          "mirror's URL of AMD's tree" % (", ".join(unmapped), ", ".join(
                              sorted({item["name"] for item in found}))))
    for item in found:
        _check_values(_mirror_registration(item, mirrors))
        item["content"] = render(item)
    for key in needed.values():
        key["url"] = mirrored(key["url"], mirrors)
    return {
        "streams": sorted({stream_name(matrix, release) for release in releases}),
        "stream": stream_name(matrix, default),
        "title": stream_of(streams, matrix, default)[1].get("title"),
        "registrations": found,
        "keys": needed,
        "known_keys": sorted(keys),
        "all_keyrings": sorted({key.get("apt_keyring") for key in keys.values() if key.get("apt_keyring")}),
        "packages": {release: release_packages(streams, matrix, release, usecases, targets, package_format,
                                               all_targets) for release in releases},
        "roots": {release: install_root(streams, matrix, release) for release in releases},
        "defaults": default_links(streams, matrix, default),
        # The links update-alternatives keeps at each choice's link, which a person can replace by hand.
        "default_links": [{"path": item["link"], "target": "/etc/alternatives/%s" % item["alternative"]}
                          for item in default_links(streams, matrix, default)],
        "tools": stream_tools(streams, matrix, default),
        "version_file": version_file(streams, matrix, default),
        "apt_pin": any(stream_of(streams, matrix, release)[1].get("apt_pin") for release in releases),
        "retired": retired_paths(streams, found, manager),
    }


def retired_paths(streams, found, manager):
    """The registration files of every stream for ``manager`` that ``found`` does not write (a host that moved
    streams, or an earlier manual install of one), so a role removes them."""
    directory = "/etc/yum.repos.d" if manager == "dnf" else "/etc/zypp/repos.d"
    paths = []
    for stream in (streams or {}).values():
        for repository in (stream or {}).get("repositories") or []:
            layout = (repository or {}).get(manager) or {}
            if not layout.get("file"):
                continue
            path = layout["file"] if manager == "apt" else "%s/%s.repo" % (directory, layout["file"])
            if path not in paths:
                paths.append(path)
    written = [item["path"] for item in found]
    return [path for path in paths if path not in written]


# The fields a release's templates hold, each as a token that survives _format and re.escape, and what it matches.
_FIELD_TOKENS = (("major", "\x01", "[0-9]+"), ("minor", "\x02", "[0-9]+"), ("patch", "\x03", "[0-9]+"),
                 ("short", "\x04", "[0-9]+[.][0-9]+(?:[.][0-9]+)?"))
_VERSION = re.compile(r"^(?:[0-9]+:)?([0-9]+)\.([0-9]+)\.([0-9]+)")


def _template_fields(stream, template, text):
    """The release fields {major, minor[, patch]} for which ``template`` (a format of a release's fields: a release
    package's name, an install root) is ``text`` in ``stream``, or None; patch is missing where the template holds
    the series only (amdrocm-sysdeps{series}, /opt/rocm/core-{series})."""
    values = {name: token for name, token, _part in _FIELD_TOKENS}
    values["release"] = "\x01.\x02.\x03"
    values["series"] = _format(stream.get("series") or "{release}", values)
    values["dir"] = _format(stream.get("dir") or "{release}", values)
    pattern = re.escape(_format(template, values))
    for name, token, part in _FIELD_TOKENS:
        pieces = pattern.replace(re.escape(token), token).split(token)
        # The first place a field appears captures it, every later one must repeat it.
        pattern = pieces[0] + "".join(("(?P<%s>%s)" % (name, part) if index == 1 else "(?P=%s)" % name) + piece
                                      for index, piece in enumerate(pieces[1:], start=1))
    match = re.match("^%s$" % pattern, str(text))
    if not match:
        return None
    fields = {name: value for name, value in match.groupdict().items() if value is not None}
    short = fields.pop("short", None)
    if short:
        parts = short.split(".")
        # A short release is major.minor where its patch is 0 (_release_parts).
        fields.setdefault("major", parts[0])
        fields.setdefault("minor", parts[1])
        fields.setdefault("patch", parts[2] if len(parts) > 2 else "0")
    if "major" not in fields or "minor" not in fields:
        return None
    return fields


def _version_release(version):
    """The x.y.z a package version or a version file starts with (1:10.1.0-1, 10.1.0, 7.2.3.70203-90~22.04)."""
    match = _VERSION.match(str(version or "").strip())
    return ".".join(str(int(part)) for part in match.groups()) if match else None


def _same_series(fields, release):
    parts = str(release).split(".")
    return [int(parts[0]), int(parts[1])] == [int(fields["major"]), int(fields["minor"])] and (
        "patch" not in fields or int(parts[2]) == int(fields["patch"]))


def _matching_release(streams, matrix, text, template_of, hints, what, remedy):
    """(release, stream name) of ``text`` (what ``template_of(stream)`` makes of a release in some stream), or None
    where no stream's template makes it. A template that holds the series only takes the release from ``hints``
    ([(release, stream name or None)]: a package's version, a version file) or from the single release of that
    series the support matrix lists for the stream; the stream is the one the matrix names for the release."""
    found = []
    for name, stream in sorted((streams or {}).items()):
        template = template_of(stream) if isinstance(stream, dict) else None
        fields = _template_fields(stream, template, text) if template else None
        if fields is None:
            continue
        if "patch" in fields:
            release = "%d.%d.%d" % (int(fields["major"]), int(fields["minor"]), int(fields["patch"]))
        else:
            hinted = [hint for hint, hint_stream in hints if hint and hint_stream in (None, name)
                      and _same_series(fields, hint)]
            listed = [known for known in (matrix or {}) if _RELEASE.match(str(known)) and _same_series(fields, known)
                      and stream_name(matrix, known) == name]
            release = hinted[0] if hinted else (listed[0] if len(listed) == 1 else None)
        found.append((name, release))
    if not found:
        return None
    named = [(name, release) for name, release in found if release in (matrix or {})
             and stream_name(matrix, release) == name]
    if named:
        return named[0][1], named[0][0]
    if len(found) == 1 and found[0][1]:
        return found[0][1], found[0][0]
    releases = sorted({release for _name, release in found if release})
    titles = " or ".join(sorted(str(streams[name].get("title") or name) for name, _release in found))
    if not releases:
        raise StreamError("%s is %s of a release of %s, and neither a version nor the support matrix says which: "
                          "%s, or add the release's row to preflight_support_matrix_extra" % (
                              text, what, titles, remedy))
    raise StreamError("%s is %s of ROCm %s, which the support matrix does not list, so its release stream is not "
                      "known (%s): add its row to preflight_support_matrix_extra" % (
                          text, what, ", ".join(releases), titles))


def installed_releases(streams, matrix, packages, versions=()):
    """{release: {stream, package}} of the releases whose release package (rocm-core7.2.3, amdrocm-sysdeps10.1) is
    among ``packages``: ansible_facts.packages ({name: [{version, ...}]}) or package names.

    A release package that names the series only (amdrocm-sysdeps10.1) takes its release from its version
    (10.1.0-1: 10.1.0); without one, from ``versions`` (texts such as the default release's .info/version: 10.1.0)
    where one is of its series, else from the support matrix where a single release of the stream has that
    series. A release the matrix does not list keeps the stream whose package name it has (rocm-core5.7.1:
    legacy). Raises StreamError where a release package's release or stream cannot be told."""
    if isinstance(packages, dict):
        entries = {str(name): [(entry or {}).get("version") for entry in listed or [] if isinstance(entry, dict)]
                   for name, listed in packages.items()}
    else:
        entries = {str(name): [] for name in packages or []}
    found = {}
    for name, own in sorted(entries.items()):
        # One answer per installed version (rpm can install one name at several versions), one without any.
        for hints in [[(_version_release(version), None)] for version in own if _version_release(version)] or [
                [(_version_release(text), None) for text in versions or () if _version_release(text)]]:
            match = _matching_release(streams, matrix, name, _release_package_template, hints, "the release package",
                                      "pass the installed packages with their versions (ansible_facts.packages)")
            if match:
                found[match[0]] = {"stream": match[1], "package": name}
    return found


def _release_package_template(stream):
    return stream.get("release_package") or "rocm-core{release}"


def default_link_release(streams, matrix, link, resolved, version_text=None, installed=None):
    """(release, stream name) that ``link`` (a stream's first default link: /opt/rocm, /opt/rocm/core) makes the
    host's default, from ``resolved``, the path the link resolves to (/opt/rocm-7.2.3, /opt/rocm/core-10.1); None
    where no stream's default path is ``resolved``. A path that holds the series only takes the release from
    ``version_text`` (its .info/version: 10.1.0) or the installed release of that series (``installed``, from
    installed_releases)."""
    if not resolved:
        return None
    resolved = str(resolved).rstrip("/") or "/"

    def path_of(stream):
        entries = [item for item in stream.get("default") or [] if isinstance(item, dict)]
        return entries[0].get("path") if entries and entries[0].get("link") == link else None

    hints = [(_version_release(version_text), None)] if _version_release(version_text) else []
    hints += [(release, item.get("stream")) for release, item in sorted((installed or {}).items())]
    return _matching_release(streams, matrix, resolved, path_of, hints, "the install root",
                             "read its .info/version, or pass the installed packages with their versions")


def replaces(streams, new, old):
    """Whether AMD's instructions remove the releases of stream ``old`` before installing one of ``new``."""
    return old != new and old in (((streams or {}).get(new) or {}).get("replaces") or [])


def conflicting(streams, first, second):
    """Whether releases of the two streams cannot be installed side by side (one replaces the other)."""
    return bool(replaces(streams, first, second) or replaces(streams, second, first))
