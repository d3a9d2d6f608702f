"""The toolkit fixes: use one already installed, or install CUDA 13 from pip or NVIDIA's apt repo.

All three end the same way: ``CUDA_HOME`` and ``PATH`` point at the toolkit for every
environment FlashInfer runs under (the serving unit, the venv or the login shell).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from tui.core.facts import Facts, PythonEnv, Toolkit
from tui.core.findings import (
    flashinfer_arch_rejected,
    jit_nvcc_missing,
    nvcc_too_old_for_gpu,
    nvcc_torch_major_mismatch,
)
from tui.core.fixes.env_targets import SYSTEM_PREFIXES, env_targets, pick_python
from tui.core.fixes.envset import EnvChange, env_change, make_plan
from tui.core.fixes.plan import FixError, FixPlan, Step
from tui.core.fixes.record import Fix, Param
from tui.core.fixes.shell import (
    host_path,
    machine_tool,
    only_if_marked,
    q,
    require_file,
    say_changed,
    say_unchanged,
    write_path,
)
from tui.core.fixes.simulate import add_toolkit, mm, point_at, python_env
from tui.core.hosts import Host
from tui.core.rules.subject import subjects, toolkit_identity
from tui.core.tables.cuda_toolkits import (
    APT_ARCHES,
    APT_HOME,
    APT_KEYRING,
    APT_PACKAGE,
    APT_REPOS,
    APT_URL,
    APT_VERSION,
    PIP_COMPONENTS,
    PIP_DEFAULT_VERSION,
    PIP_EXTRAS,
    PIP_HOME,
    PIP_RELEASE_FOR_MINOR,
)

TOOLKIT_FINDINGS = (flashinfer_arch_rejected.ID, nvcc_too_old_for_gpu.ID, jit_nvcc_missing.ID)
MAJOR_FINDING = nvcc_torch_major_mismatch.ID

# where the apt steps leave their "installed by this run" markers on the host
MARKER_DIR = "/var/lib/detective-tui"


def _major(version: str | None) -> str | None:
    return version.split(".", 1)[0] if version else None


def _verify_ids(py: PythonEnv | None, toolkit_version: str | None) -> tuple[str, ...]:
    ids = list(TOOLKIT_FINDINGS)
    if py is not None and py.torch_cuda and _major(py.torch_cuda) == _major(toolkit_version):
        ids.append(MAJOR_FINDING)
    return tuple(ids)


def _point_at(
    facts: Facts, host: Host, py: PythonEnv | None, *, fix_id: str, home: str, stamp: str
) -> EnvChange:
    return env_change(
        host,
        env_targets(facts, py),
        name="cuda",
        fix_id=fix_id,
        env={"CUDA_HOME": home},
        path_prepend=home.rstrip("/") + "/bin",
        stamp=stamp,
    )


def use_installed_toolkit(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    path = params.get("path")
    if not path:
        raise FixError(
            "use-installed-toolkit needs path=<toolkit directory>, e.g. path=/usr/local/cuda-13.0"
        )
    home = path.rstrip("/") or "/"
    toolkit = facts.toolkit_at(home)
    if toolkit is None or not toolkit.exists:
        found = ", ".join(f"{t.home} ({t.version or '?'})" for t in facts.toolkits if t.exists)
        raise FixError(
            f"no CUDA toolkit was found at {home} on {host.name} (found: {found or 'none'}); "
            "pass path= one of those, or install one with install-cuda-toolkit-pip/-apt"
        )
    py = pick_python(facts, python)
    change = _point_at(facts, host, py, fix_id="use-installed-toolkit", home=home, stamp=stamp)
    return make_plan(
        facts,
        host,
        "use-installed-toolkit",
        {"path": home},
        py,
        steps=change.steps,
        verify=_verify_ids(py, toolkit.version),
        notes=change.notes,
        change=change,
        stamp=stamp,
    )


def _minor(version: str) -> tuple[int, int]:
    major, _, rest = version.partition(".")
    return int(major), int(rest.partition(".")[0] or 0)


def _require_driver_for(facts: Facts, version: str) -> None:
    """Refuse to install a toolkit newer than the driver runs (its PTX would fail, error 222)."""
    driver, most = facts.driver, facts.driver.max_cuda
    if driver.state != "ok" or not most:
        return
    if _minor(version) > _minor(most):
        raise FixError(
            f"driver {driver.driver_version or driver.proc_version or '?'} runs CUDA "
            f"{most} at most; a CUDA {version} toolkit would be too new for it "
            "(JIT kernels fail with 'unsupported toolchain'). Upgrade the driver first, or use "
            "a toolkit already on the host that it supports (use-installed-toolkit)"
        )


def _pip_site(py: PythonEnv) -> str:
    if not py.site_packages:
        raise FixError(f"{py.path}: the probe found no site-packages directory to install into")
    return py.site_packages[0].rstrip("/")


def _ensurepip(host: Host, py: PythonEnv, site: str, stamp: str) -> Step:
    """Give a venv made without pip (``uv venv``, ``python -m venv --without-pip``) the pip its
    Python bundles, so the wheels can be installed; the undo removes it again."""
    py_cmd = host_path(host, py.path)
    marker = host_path(host, f"{site}/pip.detective-tui-{stamp}.absent")
    missing = (
        f"{py.path} has no ensurepip (a distribution Python without its venv package): add pip "
        f"with `uv pip install --python {py.path} pip` or the distribution's python3-venv "
        "package, then run the fix again"
    )
    return Step(
        title=f"Add pip to {py.prefix or py.path} (made without it, as uv makes venvs)",
        command="\n".join(
            [
                f"if {py_cmd} -m pip --version >/dev/null 2>&1; then",
                f"  {say_unchanged('pip is already there')}",
                "else",
                f"  : > {marker}",
                f"  {py_cmd} -m ensurepip --default-pip || {{ echo {q(missing)} >&2; exit 1; }}",
                f"  {say_changed('added pip with ensurepip')}",
                "fi",
            ]
        ),
        undo=only_if_marked(
            marker,
            f"{py_cmd} -m pip uninstall -y pip",
            "removed the pip this fix added",
            "pip was there before this fix run",
        ),
        changes="python -m ensurepip installs the pip bundled with that Python (no download)",
        needs_root=False,
        deadline_s=300.0,
    )


def install_cuda_toolkit_pip(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    py = pick_python(facts, python)
    if py is None:
        raise FixError(f"no Python interpreter was probed on {host.name}; name one with python=")
    if (py.prefix or "").rstrip("/") in (*SYSTEM_PREFIXES, ""):
        raise FixError(
            f"{py.path} is the system's Python, not a venv: pip would install into the OS's "
            "packages (and refuses to on PEP 668 distributions); make a venv for the server, "
            "or use install-cuda-toolkit-apt"
        )
    version = params.get("version") or PIP_RELEASE_FOR_MINOR.get(
        py.torch_cuda or "", PIP_DEFAULT_VERSION
    )
    if not version.startswith("13."):
        raise FixError(f"version={version}: only CUDA 13 wheels ship an nvcc (use 13.x)")
    _require_driver_for(facts, version)
    site = _pip_site(py)
    home = f"{site}/{PIP_HOME}"
    requirement = f"cuda-toolkit[{','.join(PIP_EXTRAS)}]=={version}"
    before = {k.lower().replace("_", "-") for k in py.packages}
    keep = {"cuda-toolkit", PIP_COMPONENTS["cudart"]} if _major(py.torch_cuda) == "13" else set()
    added = [
        p for p in ("cuda-toolkit", *PIP_COMPONENTS.values()) if p not in before and p not in keep
    ]
    py_cmd = host_path(host, py.path)
    nvcc = host_path(host, home + "/bin/nvcc")
    # left before pip runs: the undo uninstalls only what this run may have installed
    marker = write_path(host, f"{site}/nvidia-cu13.detective-tui-{stamp}.absent")
    install = Step(
        title=f"Install NVIDIA's CUDA {version} toolkit wheels into {py.prefix or py.path}",
        command="\n".join(
            [
                f"if [ -x {nvcc} ]; then",
                f"  {say_unchanged(f'{home}/bin/nvcc already installed')}",
                "else",
                f"  : > {marker}",
                f"  {py_cmd} -m pip install --disable-pip-version-check {q(requirement)}",
                "  " + require_file(nvcc, "-x", f"pip finished but {home}/bin/nvcc is missing"),
                f"  {say_changed(f'installed {requirement}')}",
                "fi",
            ]
        ),
        undo=(
            only_if_marked(
                marker,
                f"{py_cmd} -m pip uninstall -y {' '.join(q(p) for p in added)}",
                "uninstalled " + " ".join(added),
                "the wheels were not installed by this fix run",
            )
            if added
            else None
        ),
        changes=f"pip installs {requirement} (about 104 MB download, nvcc at {home}/bin/nvcc)",
        needs_root=False,
        deadline_s=1800.0,
    )
    change = _point_at(facts, host, py, fix_id="install-cuda-toolkit-pip", home=home, stamp=stamp)
    add_pip = (_ensurepip(host, py, site, stamp),) if py.has_pip is False else ()
    return make_plan(
        facts,
        host,
        "install-cuda-toolkit-pip",
        {"version": version},
        py,
        steps=(*add_pip, install, *change.steps),
        verify=_verify_ids(py, version),
        notes=change.notes,
        change=change,
        stamp=stamp,
    )


def apt_repo(facts: Facts) -> tuple[str, str]:
    """(repo, arch) of NVIDIA's apt repository for this host, or a FixError saying why not."""
    os_key = ((facts.host.os_id or "").lower(), facts.host.os_version_id or "")
    repo = APT_REPOS.get(os_key)
    if repo is None:
        supported = ", ".join(f"{o} {v}" for o, v in APT_REPOS)
        raise FixError(
            f"install-cuda-toolkit-apt supports {supported}; this host is "
            f"{facts.host.os_pretty or ' '.join(os_key).strip() or 'an unknown OS'} — "
            "use install-cuda-toolkit-pip instead"
        )
    arch = APT_ARCHES.get(facts.host.arch or "")
    if arch is None:
        raise FixError(
            "install-cuda-toolkit-apt: NVIDIA has no repository for architecture "
            f"{facts.host.arch or '?'}"
        )
    return repo, arch


def install_cuda_toolkit_apt(
    facts: Facts, host: Host, params: Mapping[str, str], python: str | None, stamp: str
) -> FixPlan:
    repo, arch = apt_repo(facts)
    _require_driver_for(facts, APT_VERSION)
    url = APT_URL.format(repo=repo, arch=arch)
    inside = (
        f"curl -fsSL -o /tmp/{APT_KEYRING} {q(url)} && dpkg -i /tmp/{APT_KEYRING} && "
        f"apt-get update && apt-get install -y --no-install-recommends {APT_PACKAGE}; "
        f"then use-installed-toolkit path={APT_HOME}"
    )
    dpkg, curl, apt_get = (
        machine_tool(host, tool, "install-cuda-toolkit-apt", inside)
        for tool in ("dpkg", "curl", "apt-get")
    )
    # a stand-in curl has no wget beside it; a machine has either
    fetch = [f'  {curl} -fsSL -o "$t"/{APT_KEYRING} {q(url)}']
    if not host.root:
        fetch = [fetch[0] + " ||", f'    wget -qO "$t"/{APT_KEYRING} {q(url)}']
    py = pick_python(facts, python)
    nvcc = host_path(host, APT_HOME + "/bin/nvcc")
    keyring_marker = write_path(host, f"{MARKER_DIR}/cuda-keyring.detective-tui-{stamp}.absent")
    toolkit_marker = write_path(host, f"{MARKER_DIR}/{APT_PACKAGE}.detective-tui-{stamp}.absent")
    marker_dir = write_path(host, MARKER_DIR)
    keyring = Step(
        title=f"Add NVIDIA's CUDA apt repository ({repo}/{arch})",
        command="\n".join(
            [
                f"if {dpkg} -s cuda-keyring >/dev/null 2>&1; then",
                f"  {say_unchanged('cuda-keyring already installed')}",
                "else",
                f"  mkdir -p {marker_dir}",
                f"  : > {keyring_marker}",
                "  t=$(mktemp -d)",
                *fetch,
                f'  {dpkg} -i "$t"/{APT_KEYRING}',
                '  rm -rf "$t"',
                f"  {say_changed('installed cuda-keyring')}",
                "fi",
            ]
        ),
        undo=only_if_marked(
            keyring_marker,
            f"{dpkg} -r cuda-keyring",
            "removed cuda-keyring",
            "cuda-keyring was not installed by this fix run",
        ),
        changes=f"installs the cuda-keyring package (NVIDIA's key and the {repo}/{arch} source)",
        needs_root=True,
    )
    update = Step(
        title="Refresh the package lists",
        command=f"{apt_get} update",
        undo=None,
        changes="downloads package lists; changes no installed package",
        needs_root=True,
        deadline_s=600.0,
    )
    install = Step(
        title=f"Install {APT_PACKAGE} (toolkit only, no driver)",
        command="\n".join(
            [
                f"if [ -x {nvcc} ]; then",
                f"  {say_unchanged(f'{APT_HOME}/bin/nvcc already installed')}",
                "else",
                f"  mkdir -p {marker_dir}",
                f"  : > {toolkit_marker}",
                f"  DEBIAN_FRONTEND=noninteractive {apt_get} install -y --no-install-recommends "
                + APT_PACKAGE,
                "  " + require_file(nvcc, "-x", f"apt-get left no {APT_HOME}/bin/nvcc"),
                f"  {say_changed(f'installed {APT_PACKAGE}')}",
                "fi",
            ]
        ),
        undo=only_if_marked(
            toolkit_marker,
            f"DEBIAN_FRONTEND=noninteractive {apt_get} remove -y {APT_PACKAGE}",
            f"removed {APT_PACKAGE}",
            f"{APT_PACKAGE} was not installed by this fix run",
        ),
        changes=f"installs {APT_PACKAGE} into {APT_HOME} (about 3 GB)",
        needs_root=True,
        deadline_s=3600.0,
    )
    change = _point_at(
        facts, host, py, fix_id="install-cuda-toolkit-apt", home=APT_HOME, stamp=stamp
    )
    autoremove = f"Undo removes {APT_PACKAGE} only; `apt-get autoremove` removes what it pulled in."
    return make_plan(
        facts,
        host,
        "install-cuda-toolkit-apt",
        {},
        py,
        steps=(keyring, update, install, *change.steps),
        verify=_verify_ids(py, APT_VERSION),
        notes=(*change.notes, autoremove),
        change=change,
        stamp=stamp,
    )


# -- the records: how the what-if tries and simulates each -----------------------------------


def _installed_choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
    """Each installed toolkit other than the one the interpreter's JIT already uses."""
    current = {
        toolkit_identity(s.jit_toolkit)
        for s in subjects(facts)
        if s.jit_toolkit is not None and (python is None or (s.python and s.python.path == python))
    }
    best: dict[str, Toolkit] = {}
    for tk in facts.toolkits:
        if not (tk.exists and tk.executable and tk.version) or tk.wrapper_of:
            continue
        ident = toolkit_identity(tk)
        if ident in current:
            continue
        if ident not in best or (best[ident].realpath and not tk.realpath):
            best[ident] = tk  # prefer the real directory to a symlink naming it
    return [{"path": tk.home} for tk in best.values()]


def _installed_title(facts: Facts, params: Mapping[str, str], python: str | None) -> str:
    tk = facts.toolkit_at(params["path"])
    version = f"CUDA {tk.version}, " if tk and tk.version else ""
    return f"Point CUDA_HOME and PATH at {params['path']} ({version}already installed)"


def _simulate_pip(
    facts: Facts, params: Mapping[str, str], py: PythonEnv | None, labels: set[str]
) -> Facts:
    if py is None or not py.site_packages:
        return facts
    version = params.get("version", PIP_DEFAULT_VERSION)
    home = posixpath.join(py.site_packages[0].rstrip("/"), PIP_HOME)
    added = add_toolkit(facts, home, mm(version), version, f"pip:{py.path}")
    return point_at(added, labels, home)


def _pip_choices(facts: Facts, python: str | None) -> list[dict[str, str]]:
    py = python_env(facts, python)
    torch_major = (py.torch_cuda or "").split(".")[0] if py else ""
    ok = py is not None and py.site_packages and torch_major == "13"
    return [{"version": PIP_DEFAULT_VERSION}] if ok else []


USE_INSTALLED = Fix(
    id="use-installed-toolkit",
    order=0,
    params=(Param("path", "the toolkit directory (CUDA_HOME)"),),
    plan=use_installed_toolkit,
    simulate=lambda facts, params, py, labels: point_at(facts, labels, params["path"]),
    choices=_installed_choices,
    title=_installed_title,
)
INSTALL_PIP = Fix(
    id="install-cuda-toolkit-pip",
    order=6,
    params=(Param("version", "the cuda-toolkit release", PIP_DEFAULT_VERSION),),
    plan=install_cuda_toolkit_pip,
    simulate=_simulate_pip,
    choices=_pip_choices,
    title=lambda facts, params, python: (
        f"Install NVIDIA's CUDA {params.get('version', PIP_DEFAULT_VERSION)} toolkit wheels "
        "into the venv, use them"
    ),
)
INSTALL_APT = Fix(
    id="install-cuda-toolkit-apt",
    order=7,
    params=(),
    plan=install_cuda_toolkit_apt,
    simulate=lambda facts, params, py, labels: point_at(
        add_toolkit(facts, APT_HOME, APT_VERSION, APT_VERSION, "apt"), labels, APT_HOME
    ),
    choices=lambda facts, python: [{}],
    title=lambda facts, params, python: (
        f"Install {APT_PACKAGE} from NVIDIA's apt repository into {APT_HOME}"
    ),
    needs_root=True,
)
