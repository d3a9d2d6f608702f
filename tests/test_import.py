"""``detective-tui import``: Ansible inventories (the JSON of ``ansible-inventory --list``; the
real tool runs in the slow test), Slurm node lists and MPI hostfiles → a hosts.yaml that loads;
errors at file:line; an existing hosts.yaml is never overwritten silently."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tui.cli import main
from tui.core import exitcodes
from tui.core.reach.inventory import load_inventory
from tui.core.reach.inventory_import import ssh_args_to_config

# what `ansible-inventory -i groups.ini --list` (ansible-core 2.19) printed for GROUPS_INI below
GROUPS_INI = """\
[b200]
gpu[01:03] ansible_user=root ansible_python_interpreter=/opt/venv/bin/python3
bastioned ansible_host=10.0.0.9 ansible_port=2222 ansible_ssh_private_key_file=~/.ssh/gpu \
ansible_ssh_common_args='-o ProxyJump=jump@bastion.example -o ServerAliveInterval=30'

[h100]
h100-a ansible_host=fe80::1 ansible_port=22 ansible_password=hunter2

[gpu:children]
b200
h100

[gpu:vars]
ansible_become=true

[ctl]
localhost ansible_connection=local
box ansible_connection=community.docker.docker
"""
LISTED = {
    "_meta": {
        "hostvars": {
            "bastioned": {
                "ansible_become": "true",
                "ansible_host": "10.0.0.9",
                "ansible_port": 2222,
                "ansible_ssh_common_args": "-o ProxyJump=jump@bastion.example "
                "-o ServerAliveInterval=30",
                "ansible_ssh_private_key_file": "~/.ssh/gpu",
            },
            **{
                f"gpu0{i}": {
                    "ansible_become": "true",
                    "ansible_python_interpreter": "/opt/venv/bin/python3",
                    "ansible_user": "root",
                }
                for i in (1, 2, 3)
            },
            "h100-a": {
                "ansible_become": "true",
                "ansible_host": "fe80::1",
                "ansible_password": "hunter2",
                "ansible_port": 22,
            },
            "localhost": {"ansible_connection": "local"},
            "box": {"ansible_connection": "community.docker.docker"},
        },
        "profile": "inventory_legacy",
    },
    "all": {"children": ["ungrouped", "gpu", "ctl"]},
    "b200": {"hosts": ["gpu01", "gpu02", "gpu03", "bastioned"]},
    "ctl": {"hosts": ["localhost", "box"]},
    "gpu": {"children": ["b200", "h100"]},
    "h100": {"hosts": ["h100-a"]},
}


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def check_ansible_result(path: Path, err: str) -> None:
    inv = load_inventory(path)
    hosts = {h.name: h for h in inv.hosts}
    assert list(hosts) == ["gpu01", "gpu02", "gpu03", "bastioned", "h100-a", "localhost", "box"]
    gpu2 = hosts["gpu02"]
    assert gpu2.ssh == "root@gpu02" and gpu2.python == ("/opt/venv/bin/python3",)
    assert gpu2.tags == ("gpu", "b200")
    assert hosts["bastioned"].ssh == "bastioned"  # the alias the ssh config lines define
    assert hosts["h100-a"].ssh == "[fe80::1]:22" and hosts["h100-a"].tags == ("gpu", "h100")
    assert hosts["localhost"].local and hosts["localhost"].tags == ("ctl",)
    assert hosts["box"].ssh == "box"
    assert (
        "Host bastioned\n  HostName 10.0.0.9\n  Port 2222\n  IdentityFile ~/.ssh/gpu\n"
        "  ProxyJump jump@bastion.example\n  ServerAliveInterval 30\n"
    ) in err
    text = path.read_text()
    assert "#     ProxyJump jump@bastion.example" in text
    assert "hunter2" not in text and "hunter2" not in err
    assert "h100-a: not imported: ansible_password (passwords are never imported" in err
    assert "box: not imported: ansible_connection=community.docker.docker" in err
    assert "ansible_become=true (fixes that need root run `sudo -n` themselves)" in err


def test_ansible_from_its_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inv.json").write_text(json.dumps(LISTED, indent=4))
    code, _, err = cli(capsys, "import", "ansible", "inv.json")
    assert code == exitcodes.OK, err
    assert "wrote hosts.yaml: 7 entries" in err
    check_ansible_result(tmp_path / "hosts.yaml", err)


def test_ansible_ini_without_ansible_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    (tmp_path / "groups.ini").write_text(GROUPS_INI)
    code, out, err = cli(capsys, "import", "ansible", str(tmp_path / "groups.ini"), "-o", "-")
    assert code == exitcodes.USAGE and out == ""
    assert "Ansible is not installed here" in err and "--list` can be read" in err


def test_bad_json_names_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "inv.json").write_text('{\n  "_meta": {\n    "hostvars": {,}\n}\n')
    code, _, err = cli(capsys, "import", "ansible", str(tmp_path / "inv.json"), "-o", "-")
    assert code == exitcodes.USAGE and f"{tmp_path / 'inv.json'}:3: not valid JSON" in err


@pytest.mark.parametrize(
    ("args", "lines", "leftover"),
    [
        (
            "-o ProxyJump=j@b -o 'ProxyCommand=ssh -W %h:%p x'",
            ["ProxyJump j@b", "ProxyCommand ssh -W %h:%p x"],
            [],
        ),
        (
            "-J bastion -oStrictHostKeyChecking=no -p 2200 -C",
            ["ProxyJump bastion", "StrictHostKeyChecking no", "Port 2200"],
            ["-C"],
        ),
        ("-o 'unbalanced", [], ["-o 'unbalanced"]),
    ],
)
def test_ssh_args_to_config(args: str, lines: list[str], leftover: list[str]) -> None:
    assert ssh_args_to_config(args) == (lines, leftover)


def test_slurm_nodes_fold_into_node_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "sinfo.txt"
    lines = [f"gpu{i:03d} batch*" for i in range(1, 129)] + ["gpu001 debug", "gpu002 debug"]
    src.write_text("\n".join([*lines, "login[1-2] login", ""]))
    out_file = tmp_path / "hosts.yaml"
    code, _, err = cli(capsys, "import", "slurm", str(src), "-o", str(out_file))
    assert code == exitcodes.OK, err
    text = out_file.read_text()
    assert "  - name: gpu[001-002]\n    tags: [batch, debug]\n" in text
    assert "  - name: gpu[003-128]\n    tags: [batch]\n" in text
    inv = load_inventory(out_file)
    assert len(inv.hosts) == 130 and inv.get("gpu077").tags == ("batch",)  # type: ignore[union-attr]
    assert "130 hosts" in err


def test_scontrol_show_hostnames(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "nodes"
    src.write_text("node8\nnode9\nnode10\nnode12\n")
    code, out, _ = cli(capsys, "import", "slurm", str(src), "-o", "-")
    assert code == exitcodes.OK and "  - name: node[8-10,12]\n" in out


@pytest.mark.parametrize(
    ("kind", "text", "message"),
    [
        ("slurm", "gpu1\ngpu[3-1]\n", ":2: 'gpu[3-1]': [3-1] runs backwards"),
        ("slurm", "gpu1 batch extra\n", ":1: expected a node name (and a partition)"),
        ("slurm", "ok\nbad$name\n", ":2: 'bad$name' is not a host name"),
        ("hostfile", "# c\nnode1 slots=4\nnode2 cpus=8\n", ":3: 'cpus=8' is not slots=N"),
        ("hostfile", "# only a comment\n", "no host names in it"),
    ],
)
def test_errors_name_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, text: str, message: str
) -> None:
    src = tmp_path / "src"
    src.write_text(text)
    code, out, err = cli(capsys, "import", kind, str(src), "-o", "-")
    assert code == exitcodes.USAGE and out == ""
    assert f"{src}{message}" in err or message in err


def test_mpi_hostfile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "hostfile"
    src.write_text(
        "# MPI\nnode01 slots=8 max_slots=8\nnode02 slots=8\nnode03:8\n\nnode01 slots=8\n"
    )
    code, out, _ = cli(capsys, "import", "hostfile", str(src), "-o", "-")
    assert code == exitcodes.OK and "  - name: node[01-03]\n" in out


def test_an_existing_inventory_is_never_overwritten_silently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "hosts.yaml"
    original = "hosts:\n  - name: keep\n    ssh: root@10.0.0.1\n"
    target.write_text(original)
    src = tmp_path / "nodes"
    src.write_text("gpu1\ngpu2\n")
    code, _, err = cli(capsys, "import", "slurm", str(src), "-o", str(target))
    assert code == exitcodes.USAGE and "exists; not overwritten" in err
    assert target.read_text() == original

    code, _, err = cli(capsys, "import", "slurm", str(src), "-o", str(target), "--append")
    assert code == exitcodes.OK, err
    assert [h.name for h in load_inventory(target).hosts] == ["keep", "gpu1", "gpu2"]
    assert target.read_text().startswith(original)

    code, _, err = cli(capsys, "import", "slurm", str(src), "-o", str(target), "--append")
    assert code == exitcodes.USAGE
    assert f"already in the inventory: gpu1 ({target}:5)" in err

    appended = target.read_text()
    code, _, err = cli(capsys, "import", "slurm", str(src), "-o", str(target), "--force")
    assert code == exitcodes.OK
    assert [h.name for h in load_inventory(target).hosts] == ["gpu1", "gpu2"]
    (backup,) = tmp_path.glob("hosts.yaml.bak-*")
    assert backup.read_text() == appended
    assert not list(tmp_path.glob(".hosts-*"))  # no temp file left


def test_append_refuses_a_flow_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "hosts.yaml"
    target.write_text("hosts: [{name: a, local: true}]\n")
    src = tmp_path / "nodes"
    src.write_text("gpu1\n")
    code, _, err = cli(capsys, "import", "slurm", str(src), "-o", str(target), "--append")
    assert code == exitcodes.USAGE and f"{target}:1: `hosts:` is a [flow] list" in err


@pytest.mark.slow
def test_real_ansible_inventory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ansible-inventory from the package index reads the INI; the result is the same as from
    its JSON above (which is what it printed)."""
    from engines_venv import engines_bin

    bin_dir = engines_bin()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("ANSIBLE_HOME", str(tmp_path / "ansible-home"))
    ini = tmp_path / "groups.ini"
    ini.write_text(GROUPS_INI)
    listed = subprocess.run(
        [str(bin_dir / "ansible-inventory"), "-i", str(ini), "--list"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(listed.stdout) == LISTED
    out_file = tmp_path / "hosts.yaml"
    code, _, err = cli(capsys, "import", "ansible", str(ini), "-o", str(out_file))
    assert code == exitcodes.OK, err
    assert "ran " in err and "ansible-inventory -i" in err
    check_ansible_result(out_file, err)
