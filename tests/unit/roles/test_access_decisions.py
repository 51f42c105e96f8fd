"""Who the access role adds to the GPU groups, and what it refuses."""

from __future__ import annotations

from fleet_testing.roles import evaluate, find_task, load_yaml, render, render_template

PASSWD = {"root": ["x", "0"], "alice": ["x", "1000"], "bob": ["x", "1001"]}


def missing_users(users: list[dict]) -> list[str]:
    task = find_task("access/tasks/preflight.yml", "Fail on listed users that do not exist and may not be created")
    return render("{{ __access_missing }}", access_users=users, ansible_facts={"getent_passwd": PASSWD}, **task["vars"])


def test_existing_users_pass():
    assert missing_users([{"name": "alice"}, {"name": "bob", "create": False}]) == []


def test_a_missing_user_is_named():
    assert missing_users([{"name": "alice"}, {"name": "carol"}]) == ["carol"]


def test_a_missing_user_may_be_created_when_asked():
    assert missing_users([{"name": "carol", "create": True}]) == []


def access_variables(**overrides) -> dict:
    """The role's defaults and vars/main.yml (its managed objects), with ``overrides`` as the inventory's."""
    return {**load_yaml("access/defaults/main.yml"), **load_yaml("access/vars/main.yml"),
            "ansible_facts": {"os_family": "Debian"}, **overrides}


def removals(groups: dict, listed: list[str], exclusive: bool = True) -> list[tuple[str, str, str]]:
    """(group, user, loop label) of each gpasswd --delete the role's task runs, as its loop and when decide."""
    task = find_task("access/tasks/groups.yml", "Take unlisted users out of the GPU groups")
    variables = access_variables(access_users=[{"name": name} for name in listed],
                                 access_exclusive_membership=exclusive,
                                 ansible_facts={"os_family": "Debian", "getent_group": groups})
    loop = render(task["loop"], **variables, **task["vars"])
    assert task["loop_control"]["label"] == "{{ item.0.label }}"
    assert task["ansible.builtin.command"]["argv"] == ["gpasswd", "--delete", "{{ item.1 }}", "{{ item.0.group }}"]
    return [(obj["group"], user, obj["label"]) for obj, user in loop
            if all(evaluate(condition, item=[obj, user], **variables) for condition in task["when"])]


def test_unlisted_members_are_found_across_groups():
    groups = {"render": ["x", "993", "alice,mallory"], "video": ["x", "44", "bob,mallory"]}
    assert removals(groups, ["alice", "bob"]) == [
        ("render", "mallory", "access: only the listed users in render"),
        ("video", "mallory", "access: only the listed users in video"),
    ]


def test_a_listed_user_is_never_removed_and_only_members_are():
    groups = {"render": ["x", "993", "alice,bob"], "video": ["x", "44", "alice"]}
    assert removals(groups, ["alice"]) == [("render", "bob", "access: only the listed users in render")]


def test_empty_and_missing_groups_have_no_members():
    assert removals({"render": ["x", "993", ""]}, []) == []


def test_without_exclusive_membership_nobody_is_removed():
    groups = {"render": ["x", "993", "alice,mallory"], "video": ["x", "44", "mallory"]}
    assert removals(groups, ["alice"], exclusive=False) == []
    main = load_yaml("access/tasks/main.yml")
    groups_import = next(task for task in main if task.get("ansible.builtin.import_tasks") == "groups.yml")
    assert groups_import["when"] == "access_exclusive_membership | bool"


def objects(**overrides) -> list[dict]:
    return render("{{ __access_objects }}", **access_variables(**overrides))


def test_each_user_is_one_object_for_all_gpu_groups_and_created_users_first():
    users = [{"name": "alice"}, {"name": "carol", "create": True}]
    labels = [obj["label"] for obj in objects(access_users=users, access_udev_rules=False)]
    assert labels == ["access: group render", "access: group video", "access: user carol",
                      "access: alice in render, video", "access: carol in render, video",
                      "access: nobody unlisted in render", "access: nobody unlisted in video",
                      "access: the listed users can open the GPU device nodes"]


def test_unlisted_members_are_a_warning_and_with_exclusive_membership_the_removal_fails_instead():
    users = [{"name": "alice"}, {"name": "bob"}]
    checked = [obj for obj in objects(access_users=users) if obj["id"] in ("ROCM-ACCESS-006", "ROCM-ACCESS-007")]
    assert [(obj["kind"], obj.get("group"), obj["users" if obj["kind"] == "device_access" else "members"])
            for obj in checked] == [("unlisted_members", "render", ["alice", "bob"]),
                                    ("unlisted_members", "video", ["alice", "bob"]),
                                    ("device_access", None, ["alice", "bob"])]
    assert checked[-1]["open"] is True and all(obj["repair"] for obj in checked)
    assert not render("{{ __access_objects | selectattr('id', 'eq', 'ROCM-ACCESS-006') | list }}",
                      **access_variables(access_users=users, access_exclusive_membership=True))
    exclusive = [obj["label"] for obj in objects(access_users=users, access_exclusive_membership=True)
                 if obj["kind"] == "exclusive_members"]
    assert exclusive == ["access: only the listed users in render", "access: only the listed users in video"]
    # No listed users: nothing to judge membership or access by.
    assert not [obj for obj in objects() if obj["id"] in ("ROCM-ACCESS-006", "ROCM-ACCESS-007")]


def test_udev_and_adduser_objects_follow_their_switches():
    labels = [obj["label"] for obj in objects(access_adduser_defaults=True)]
    assert labels[2:] == ["access: /etc/udev/rules.d", "access: /etc/udev/rules.d/70-rocm-fleet-gpu.rules",
                          "access: /etc/udev/rules.d/70-uaccess.rules (the distribution's uaccess rules without the"
                          " AMD render nodes)",
                          "access: no ACL on /dev/kfd, /dev/dri/renderD*",
                          "access: /dev/kfd", "access: /dev/dri/renderD*",
                          "access: /etc/adduser.conf ADD_EXTRA_GROUPS", "access: /etc/adduser.conf EXTRA_GROUPS"]
    devices = [obj for obj in objects(access_render_mode="0666") if obj["kind"] == "device"]
    assert [(obj["glob"], obj["group"], obj["mode"]) for obj in devices] == [
        ("/dev/kfd", "render", "0660"), ("/dev/dri/renderD*", "render", "0666")]
    adduser = [obj for obj in objects(access_adduser_defaults=True) if obj["kind"] == "line"]
    assert [(obj["key"], obj["value"]) for obj in adduser] == [("ADD_EXTRA_GROUPS", "1"),
                                                              ("EXTRA_GROUPS", '"render video"')]
    # adduser.conf is Debian's
    assert not [obj for obj in objects(access_adduser_defaults=True, ansible_facts={"os_family": "RedHat"})
                if obj["kind"] == "line"]
    assert [obj["kind"] for obj in objects(access_udev_rules=False)] == ["group", "group"]


def test_udev_rules_pin_group_and_mode():
    text = render_template(
        "access/templates/70-rocm-fleet-gpu.rules.j2", access_kfd_mode="0660", access_render_mode="0666"
    )
    rules = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert rules == [
        'SUBSYSTEM=="kfd", KERNEL=="kfd", GROUP:="render", MODE:="0660"',
        'SUBSYSTEM=="drm", KERNEL=="renderD*", ATTRS{vendor}=="0x1002", GROUP:="render", MODE:="0666"',
    ]


def test_the_uaccess_mask_is_derived_in_preflight_from_the_first_distribution_file_found():
    mask = next(obj for obj in objects() if obj["kind"] == "uaccess_mask")
    assert (mask["path"], mask["sources"], mask["id"]) == (
        "/etc/udev/rules.d/70-uaccess.rules",
        ["/usr/lib/udev/rules.d/70-uaccess.rules", "/lib/udev/rules.d/70-uaccess.rules"], "ROCM-ACCESS-008")
    task = find_task("access/tasks/preflight.yml", "Read the distribution's uaccess rules")
    found = {"results": [{"item": "/usr/lib/udev/rules.d/70-uaccess.rules", "stat": {"exists": False}},
                         {"item": "/lib/udev/rules.d/70-uaccess.rules", "stat": {"exists": True}}]}
    assert render(task["vars"]["__access_uaccess_source"], __access_uaccess_found=found) == (
        "/lib/udev/rules.d/70-uaccess.rules")
    for result in found["results"]:
        result["stat"]["exists"] = False
    assert render(task["vars"]["__access_uaccess_source"], __access_uaccess_found=found) == ""
