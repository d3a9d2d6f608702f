"""The one way the rest of the app talks to hosts: a ``Session`` owning the connection pool and
the transcript. Probes, fixes and validation all run through ``Session.run_script``, so every
command is deadline-bound, killable, and recorded.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from probes import probe_env, probe_script
from tui.core import locations
from tui.core.hosts import Host
from tui.core.reach.hops import fetch_host_key
from tui.core.reach.hostkeys import (
    HostKeyChanged,
    HostKeyError,
    HostKeyInfo,
    HostKeyRevoked,
    HostKeyUnknown,
)
from tui.core.reach.hostkeys import add_known_host as _append_known_host
from tui.core.reach.pool import ConnectionPool
from tui.core.reach.sshconnect import Unreachable
from tui.core.reach.transport import (
    ENV_END,
    MAX_OUTPUT_CHARS,
    CommandResult,
    command_line,
    env_head,
    script_body,
)
from tui.core.records.transcript import Transcript
from tui.core.redact import LineRedactor, redact_text

if TYPE_CHECKING:  # the facts' modules load while the first probe runs (Session.probe)
    from tui.core.facts import Facts
    from tui.core.facts.build import FactBuilder, ProbeProgress

ProgressCallback = Callable[[str, "ProbeProgress | str"], None]
LineCallback = Callable[[str], None]

# error_kind values of ProbeResult
UNREACHABLE = "unreachable"
HOSTKEY_UNKNOWN = "hostkey-unknown"
HOSTKEY_CHANGED = "hostkey-changed"
HOSTKEY_REVOKED = "hostkey-revoked"
TIMEOUT = "timeout"
PROBE_FAILED = "probe-failed"
BAD_INVENTORY = "bad-inventory"  # a bad inventory entry: never connected to, its error said
NOT_REACHED = (UNREACHABLE, HOSTKEY_UNKNOWN, HOSTKEY_CHANGED, HOSTKEY_REVOKED, BAD_INVENTORY)


@dataclass(frozen=True)
class ProbeResult:
    host: Host
    facts: Facts | None  # partial facts survive a timeout or a dropped connection
    error: str | None = None
    error_kind: str | None = None  # see the constants above
    raw_lines: tuple[str, ...] = ()
    duration_s: float = 0.0
    hostkey: HostKeyInfo | None = None  # the offered key, when error_kind is hostkey-*
    hostkey_note: str = ""  # what known_hosts says about it (HostKeyError.note)

    @property
    def reachable(self) -> bool:
        return self.error_kind not in NOT_REACHED

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class FixActivity:
    """The fixes a session is running, and whether they were asked to stop (the TUI quits):
    a running plan then finishes its current step and starts no other."""

    running: dict[str, str] = dataclasses.field(default_factory=dict)  # host → "fix: step 2/3"
    stop_requested: bool = False

    def request_stop(self) -> None:
        self.stop_requested = True


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Session:
    """Owns the pool and the transcript; ``async with Session(...) as s:``."""

    def __init__(
        self,
        *,
        transcript: Transcript | None = None,
        known_hosts: Path | None = None,
        ssh_config: Path | None = None,
        concurrency: int = 32,
        connect_timeout: float = 10.0,
        probe_deadline_s: float = 120.0,
        step_timeout_s: int = 10,
    ) -> None:
        self.transcript = transcript
        self.known_hosts = known_hosts or locations.known_hosts_file()
        self.ssh_config = ssh_config or locations.ssh_config_file()
        self.probe_deadline_s = probe_deadline_s
        self.step_timeout_s = step_timeout_s
        self.fixes = FixActivity()
        self.pool = ConnectionPool(
            known_hosts=self.known_hosts,
            ssh_config=self.ssh_config,
            concurrency=concurrency,
            connect_timeout=connect_timeout,
        )

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.pool.close()

    async def release(self, host: Host) -> None:
        """Close ``host``'s connection now that this session is done with it for a while."""
        await self.pool.release(host)

    def record(self, kind: str, **data: object) -> None:
        """User decisions and other events → the transcript (no-op without one)."""
        if self.transcript is not None:
            self.transcript.record(kind, **data)

    # -- commands --------------------------------------------------------------------------

    async def _run(
        self,
        host: Host,
        script: str,
        *,
        env: Mapping[str, str],
        deadline_s: float,
        on_line: LineCallback | None,
        stdin: str | None,
        interpreter: str,
        purpose: str,
        max_output_chars: int = MAX_OUTPUT_CHARS,
    ) -> CommandResult:
        """Run and record; raises ``Unreachable``/``HostKeyError`` when no connection (a bad
        inventory entry never gets one)."""
        if host.invalid:
            raise Unreachable(f"not run: a bad inventory entry\n{host.invalid}")
        if stdin is not None and interpreter.split()[-1] in ("-s", "-"):
            raise ValueError(
                f"interpreter {interpreter!r} reads the script from stdin; with stdin= use "
                "one that takes it as an argument, such as 'sh -c' or 'python3 -c'"
            )
        head = env_head(env) if env else None  # the variables travel on stdin, never in argv
        if stdin is None and env:
            command = command_line("sh -s", deadline_s=deadline_s)
            feed = script_body(script, interpreter)
        elif stdin is None:
            command = command_line(interpreter, deadline_s=deadline_s)
            feed = script
        else:
            command = command_line(
                interpreter, deadline_s=deadline_s, script_arg=script, env_on_stdin=bool(env)
            )
            feed = f"{ENV_END}\n{stdin}" if env else stdin
        started = _utc_now()
        transport = self.pool.transport(host)
        # the transcript's redaction of the output, a line at a time while the host works
        redactor = LineRedactor() if self.transcript is not None else None
        each_line = on_line if redactor is None else _both(redactor.add, on_line)
        try:
            async with self.pool.slot():
                result = await transport.execute(
                    command,
                    stdin=feed,
                    deadline_s=deadline_s,
                    on_line=each_line,
                    env=head,
                    max_output_chars=max_output_chars,
                )
        except (Unreachable, HostKeyError) as exc:
            self._record_command(
                host, purpose, command, script, stdin, started, interpreter, error=str(exc)
            )
            raise
        except asyncio.CancelledError:
            self._record_command(
                host, purpose, command, script, stdin, started, interpreter,
                error="cancelled; the remote process group was killed",
            )  # fmt: skip
            raise
        if redactor is not None:
            redactor.text(result.output)  # redact_text(result.output) is now a lookup
        self._record_command(
            host, purpose, command, script, stdin, started, interpreter, result=result
        )
        return result

    def _record_command(
        self,
        host: Host,
        purpose: str,
        command: str,
        script: str,
        stdin: str | None,
        started: str,
        interpreter: str,
        *,
        result: CommandResult | None = None,
        error: str | None = None,
    ) -> None:
        if self.transcript is None:
            return
        digest = hashlib.sha256(script.encode()).hexdigest()
        data: dict[str, object] = {
            "host": host.name,
            "target": host.target,
            "purpose": purpose,
            "command": command,
            "interpreter": interpreter,  # what reads the script (inside sh -s when env travels)
            "script_sha256": digest,
            "start": started,
        }
        if self.transcript.first_time_script(digest):
            data["script"] = script
        if stdin is not None:
            data["stdin"] = stdin
        if result is not None:
            data.update(
                exit_status=result.exit_status,
                duration_s=round(result.duration_s, 3),
                timed_out=result.timed_out,
                error=result.error,
                output=result.output,
            )
        else:
            data.update(exit_status=None, duration_s=0.0, timed_out=False, error=error)
        self.transcript.record("command", **data)

    async def run_script(
        self,
        host: Host,
        script: str,
        *,
        env: Mapping[str, str] | None = None,
        deadline_s: float = 60,
        on_line: LineCallback | None = None,
        stdin: str | None = None,
        interpreter: str = "sh -s",
        max_output_chars: int = MAX_OUTPUT_CHARS,
    ) -> CommandResult:
        """Run ``script`` on ``host`` under a remote deadline, streaming lines to ``on_line``;
        output past ``max_output_chars`` is counted, not kept or streamed (a note says so).

        Without ``stdin`` the script is fed to ``interpreter`` on stdin (``sh -s``,
        ``python3 -``). With ``stdin``, the script is the interpreter's last argument
        (use ``sh -c`` / ``python3 -c``) and ``stdin`` is fed instead. ``env`` is exported,
        sent on stdin ahead of the script (or of ``stdin``), never on a command line. Never
        raises for host trouble: a host that cannot be reached gives a result with
        ``exit_status=None`` and ``error``/``error_kind`` set.
        """
        try:
            return await self._run(
                host,
                script,
                env=env or {},
                deadline_s=deadline_s,
                on_line=on_line,
                stdin=stdin,
                interpreter=interpreter,
                purpose="script",
                max_output_chars=max_output_chars,
            )
        except (Unreachable, HostKeyError) as exc:
            return CommandResult(
                command="",
                exit_status=None,
                output="",
                duration_s=0.0,
                error=str(exc),
                error_kind=_kind_of(exc),
            )

    # -- probes ----------------------------------------------------------------------------

    async def probe(self, host: Host, on_progress: ProgressCallback | None = None) -> ProbeResult:
        """Probe one host; never raises for host trouble (see ``ProbeResult.error_kind``)."""
        started = time.monotonic()
        if host.invalid:
            return self._probe_done(ProbeResult(host, None, host.invalid, BAD_INVENTORY), started)
        builder: FactBuilder | None = None
        raw: list[str] = []
        script = probe_script(locations.cache_dir())  # kept there: no ast per process

        def on_line(line: str) -> None:
            nonlocal builder
            if builder is None:  # the host is at work now: what comes after loads meanwhile
                builder = self._while_probing(script)
            raw.append(line)
            progress = builder.feed(line)
            if on_progress is not None:
                on_progress(host.name, progress if progress is not None else line)

        env = {
            **host.env,
            **probe_env(
                host.python,
                root=host.root,
                step_timeout_s=self.step_timeout_s,
                # `local`: the probe inherits this process's environment — the user's shell
                session="current" if host.current_shell else None,
                tree_exec=host.fake_tree,
            ),
        }
        try:
            result = await self._run(
                host,
                script,
                env=env,
                deadline_s=self.probe_deadline_s,
                on_line=on_line,
                stdin=None,
                interpreter="sh -s",
                purpose="probe",
            )
        except (Unreachable, HostKeyError) as exc:
            hostkey = exc.info if isinstance(exc, HostKeyError) else None
            note = exc.note if isinstance(exc, HostKeyError) else ""
            return self._probe_done(
                ProbeResult(
                    host, None, str(exc), _kind_of(exc), hostkey=hostkey, hostkey_note=note
                ),
                started,
            )
        from tui.core.rules.completeness import inventory_problems, root_problem

        facts = (builder or self._while_probing(script)).facts()
        errors = facts.probe.errors
        bad_root = any(e.startswith("root: ") for e in errors)
        if bad_root:  # the probe's own words → the inventory line that set it
            errors = tuple(root_problem(host) if e.startswith("root: ") else e for e in errors)
        errors += inventory_problems(facts, host)
        if errors != facts.probe.errors:
            probe = dataclasses.replace(facts.probe, errors=errors)
            facts = dataclasses.replace(facts, probe=probe)
        error = kind = None
        if bad_root:
            error, kind = root_problem(host), PROBE_FAILED
        elif result.timed_out:
            error = (
                f"probe stopped by its {self.probe_deadline_s:g} s deadline; "
                "the facts collected until then are kept"
            )
            kind = TIMEOUT
        elif result.error is not None:
            error = f"{result.error} (mid-probe); partial facts kept"
            kind = PROBE_FAILED
        elif not facts.probe.complete:
            tail = redact_text(" | ".join(raw[-3:])) or "no output"
            error = f"the probe ended early (exit status {result.exit_status}): {tail}"
            kind = PROBE_FAILED
        return self._probe_done(
            ProbeResult(host, facts, error, kind, raw_lines=tuple(raw)), started
        )

    def _while_probing(self, script: str) -> FactBuilder:
        """A fact builder for a probe whose host has started answering; the first one loads the
        modules the rest of a probe needs, and the transcript's redacted copy of the probe
        script is made (``redact_text`` keeps large texts), while the host works — a process
        that probes once (``probe HOST``) overlaps them with the probe instead of adding them."""
        from tui.core.facts.build import FactBuilder
        from tui.core.rules import completeness  # noqa: F401  (used once the probe ends)

        if self.transcript is not None:
            redact_text(script)
        return FactBuilder()

    def _probe_done(self, result: ProbeResult, started: float) -> ProbeResult:
        duration = time.monotonic() - started
        facts = result.facts
        if facts is not None and facts.probe.duration_s is None:
            facts = dataclasses.replace(
                facts, probe=dataclasses.replace(facts.probe, duration_s=round(duration, 3))
            )
        result = dataclasses.replace(result, facts=facts, duration_s=duration)
        self.record(
            "probe",
            host=result.host.name,
            target=result.host.target,
            error=result.error,
            error_kind=result.error_kind,
            duration_s=round(duration, 3),
            hostkey=(
                {"key_type": result.hostkey.key_type, "fingerprint": result.hostkey.fingerprint}
                if result.hostkey
                else None
            ),
            facts=facts.to_json() if facts is not None else None,
        )
        return result

    async def probe_many(
        self,
        hosts: Sequence[Host],
        on_progress: ProgressCallback | None = None,
        on_result: Callable[[ProbeResult], None] | None = None,
    ) -> list[ProbeResult]:
        """Probe all hosts concurrently; results in the order given (``on_result`` sees each
        as it finishes); one failure never stops the others (even an unexpected exception
        becomes that host's ``probe-failed``)."""

        async def guarded(host: Host) -> ProbeResult:
            try:
                result = await self.probe(host, on_progress)
            except Exception as exc:  # a bug must not take the other hosts down
                result = ProbeResult(host, None, f"internal error: {exc!r}", PROBE_FAILED)
            if on_result is not None:
                on_result(result)
            return result

        return list(await asyncio.gather(*(guarded(h) for h in hosts)))


def _both(first: LineCallback, then: LineCallback | None) -> LineCallback:
    if then is None:
        return first

    def each(line: str) -> None:
        first(line)
        then(line)

    return each


def _kind_of(exc: Exception) -> str:
    if isinstance(exc, HostKeyRevoked):
        return HOSTKEY_REVOKED
    if isinstance(exc, HostKeyChanged):
        return HOSTKEY_CHANGED
    if isinstance(exc, HostKeyUnknown):
        return HOSTKEY_UNKNOWN
    return UNREACHABLE


# -- trust ---------------------------------------------------------------------------------


async def trust_host(
    host: Host, *, known_hosts: Path | None = None, ssh_config: Path | None = None
) -> HostKeyInfo:
    """The key ``host`` offers, to show before trusting it; writes nothing.
    ``key_type, fingerprint = await trust_host(h)`` works. Raises ``HostKeyRevoked`` or
    ``HostKeyChanged`` (never trusted) or ``Unreachable``."""
    if host.local:
        raise ValueError(f"{host.name} is this machine: there is no host key to trust")
    known = known_hosts or locations.known_hosts_file()
    status, info = await fetch_host_key(
        host, known_hosts=known, ssh_config=ssh_config or locations.ssh_config_file()
    )
    if status == "revoked":
        raise HostKeyRevoked(host.target, info, known)
    if status == "changed":
        raise HostKeyChanged(host.target, info, known)
    return info


def add_known_host(host: Host, key: HostKeyInfo, known_hosts: Path | None = None) -> bool:
    """Append the key shown by ``trust_host`` to known_hosts; False if it was already there.
    Raises ``HostKeyRevoked`` for a revoked key, ``HostKeyChanged`` if the file holds a
    different key for the host."""
    return _append_known_host(host.target, key, known_hosts or locations.known_hosts_file())
