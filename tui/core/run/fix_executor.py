"""Run a fix plan: each step in order, stop at the first failure, re-probe, verify, record undo.

Every step is journaled ahead (``tui.core.records.fix_journal``): its intent is on disk before it
runs and its outcome after, so a failed step keeps what it reported and a step cut by
``kill -9`` or a dropped connection is recorded as ``unknown`` (it may have changed what it
says) and undoable. ``Session.fixes`` asks running plans to stop after their current step.

The verdict is judged for the environments the fix changed: a systemd unit as it will start
next time (its unit files, drop-ins and the ``EnvironmentFile=`` files they name, which
override ``Environment=``), the venv as ``activate`` leaves it. The live process keeps its old
environment until it restarts, and the outcome says so; a unit that would not start (a missing
environment file) is not reported as fixed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from tui.core.facts import EnvContext, Facts
from tui.core.findings import Severity
from tui.core.fixes.current_shell import current_shell_lines
from tui.core.fixes.plan import FixPlan, Step, parse_flags, shown_line
from tui.core.fixes.steplock import with_step_lock
from tui.core.fixes.undo import UndoRecord
from tui.core.hosts import Host
from tui.core.judge.diagnosis import diagnose
from tui.core.records.fix_journal import FixJournal, Journal, JournalError, UndoJournal
from tui.core.rules.flashinfer_replay import replay
from tui.core.run.fix_envread import judged_facts, read_envs, unit_problems
from tui.core.run.service import keep_probe

if TYPE_CHECKING:
    from tui.core.reach.transport import CommandResult
    from tui.core.run.runner import Session

StepStatus = Literal["changed", "unchanged", "done", "failed", "not-run"]
LineSink = Callable[[str], None]

SUDO_PASSWORD = ("a password is required", "a terminal is required", "no tty present")
PROBLEM_SEVERITIES = ("critical", "warning")
NEVER_CONNECTED = ("unreachable", "hostkey-unknown", "hostkey-changed")  # CommandResult kinds
STOPPED = "detective-tui was quit before this step; it was not started"
STEP_OUTPUT_CHARS = 1024 * 1024  # what one step's output keeps (and streams); the rest is noted


@dataclass(frozen=True)
class StepResult:
    step: Step
    command: str  # as run (sudo-wrapped where needed)
    status: StepStatus
    exit_status: int | None = None
    output: str = ""
    reports: tuple[str, ...] = ()  # what the step said it changed or left alone
    error: str | None = None
    changed_flags: tuple[str, ...] = ()  # what it said it changed (a failed step keeps them)
    untouched: bool = False  # failed before its command started (sudo refused, no connection)
    dropped_chars: int = 0  # output past STEP_OUTPUT_CHARS: counted and noted, not kept

    @property
    def may_have_changed(self) -> bool:
        """Changed, or failed / cut after its command started: its undo must run."""
        return self.status == "changed" or (self.status == "failed" and not self.untouched)

    @property
    def journal_status(self) -> str:
        """The journal's word: a failed step that started is ``unknown``."""
        if self.status == "failed":
            return "not-run" if self.untouched else "unknown"
        return self.status


@dataclass(frozen=True)
class ContextChange:
    """One environment the fix changed, before and after."""

    label: str
    before: Mapping[str, str]
    after: Mapping[str, str]
    verdict_before: str | None = None
    verdict_after: str | None = None


@dataclass(frozen=True)
class FixOutcome:
    plan: FixPlan
    steps: tuple[StepResult, ...]
    error: str | None = None  # why the plan stopped (first failing step, sudo, probe)
    findings_before: tuple[str, ...] = ()  # ids of critical/warning findings
    findings_after: tuple[str, ...] = ()
    worst_before: Severity | None = None  # the verdict before/after, for the fixed environments
    worst_after: Severity | None = None
    resolved: tuple[str, ...] = ()  # verify ids present before, gone after
    unresolved: tuple[str, ...] = ()  # verify ids still present after
    introduced: tuple[str, ...] = ()  # problems after that were not there before
    contexts: tuple[ContextChange, ...] = ()
    pending_restart: tuple[str, ...] = ()  # units whose running process still has the old env
    unit_problems: tuple[str, ...] = ()  # why a changed unit would not start next time
    not_running: tuple[str, ...] = ()  # serving processes it is for: running before, not after
    record: str | None = None  # undo record id, when something changed or may have
    facts_after: Facts | None = field(default=None, compare=False)
    stopped: bool = False  # asked to stop (the TUI was quit): the rest was not started
    reprobe_error: str | None = None  # why the re-probe after the run found no facts
    current_shell: tuple[str, ...] = ()  # where the caller's shell differs, and what to run

    @property
    def applied(self) -> bool:
        return self.error is None and all(s.status != "failed" for s in self.steps)

    @property
    def ok(self) -> bool:
        return (
            self.applied and not self.unresolved and not self.introduced and not self.unit_problems
        )

    @property
    def changed(self) -> tuple[StepResult, ...]:
        return tuple(s for s in self.steps if s.status == "changed")

    @property
    def uncertain(self) -> tuple[StepResult, ...]:
        """Steps that failed or were cut after they started: they may have changed things."""
        return tuple(s for s in self.steps if s.status == "failed" and s.may_have_changed)

    @property
    def nothing_changed(self) -> bool:
        """Proven: every step that ran reported no change, or never started."""
        return not self.changed and not self.uncertain


CAUSE_CHARS = 240  # a failed step's last output line, in its error, is cut to this


def last_words(output: str) -> str:
    """The last line a failed command printed (its cause, usually), not a ``@@dt`` marker."""
    for line in reversed(output.splitlines()):
        line = line.strip()
        if line and not line.startswith("@@dt"):
            return line if len(line) <= CAUSE_CHARS else line[: CAUSE_CHARS - 1] + "…"
    return ""


def _sudo_problem(output: str) -> bool:
    low = output.lower()
    return "sudo" in low and any(s in low for s in SUDO_PASSWORD)


async def run_steps(
    session: Session,
    host: Host,
    plan: FixPlan,
    on_line: LineSink | None = None,
    journal: Journal | None = None,
) -> tuple[tuple[StepResult, ...], str | None]:
    """Run the plan's steps in order; stop at the first failure, or before the next step when
    the session was asked to stop. Each step's intent is journaled before it runs and its
    outcome after; a journal that cannot be written stops the run. Returns results and the
    error (None when every step ran and succeeded)."""
    results: list[StepResult] = []
    error: str | None = None
    shown = (lambda line: on_line(shown_line(line))) if on_line else None
    n = len(plan.steps)
    for index, step in enumerate(plan.steps, 1):
        command = plan.effective_command(step)
        if error is None and session.fixes.stop_requested:
            error = f"stopped before step {index}: detective-tui was quit"
        if error is not None:
            results.append(StepResult(step=step, command=command, status="not-run"))
            continue
        if on_line:
            on_line(f"── step {index}/{len(plan.steps)}: {step.title}")
        try:
            if journal is not None:
                await asyncio.to_thread(journal.started, index)
        except JournalError as exc:
            error = f"step {index} ({step.title}) not started: {exc}"
            results.append(StepResult(step=step, command=command, status="not-run"))
            continue
        session.fixes.running[host.name] = f"{plan.fix_id}: step {index}/{n} running"
        try:
            # under the host tree's step lock, as the transport's deadline wraps it: an undo
            # waits for a step its killed client left running (tui.core.fixes.steplock)
            res = await session.run_script(
                host,
                with_step_lock(host, command),
                env=dict(host.env),
                deadline_s=step.deadline_s,
                on_line=shown,
                max_output_chars=STEP_OUTPUT_CHARS,
            )
        except BaseException as exc:  # cancelled or a bug: the step may have run in part
            if journal is not None:
                why = f"cut mid-step: {exc!r}"
                with contextlib.suppress(JournalError):
                    journal.finished(index, "unknown", error=why)
                    journal.not_run(list(range(index + 1, len(plan.steps) + 1)), why)
            raise
        finally:  # what the quit dialog says until the next step (or the re-probe) starts
            session.fixes.running[host.name] = f"{plan.fix_id}: step {index}/{n} ended"
        result = _step_result(host, plan, step, index, command, res)
        if result.status == "failed":
            error = result.error
        results.append(result)
        if journal is not None:
            try:
                await asyncio.to_thread(
                    journal.finished,
                    index,
                    result.journal_status,
                    exit_status=result.exit_status,
                    error=result.error,
                    reports=result.reports,
                )
            except JournalError as exc:
                error = error or f"after step {index} ({step.title}): {exc}"
    if journal is not None:
        rest = [i for i, r in enumerate(results, 1) if r.status == "not-run"]
        why = STOPPED if session.fixes.stop_requested else f"not started: {error}"
        try:
            await asyncio.to_thread(journal.not_run, rest, why)
        except JournalError as exc:
            error = error or str(exc)
    return tuple(results), error


def _step_result(
    host: Host, plan: FixPlan, step: Step, index: int, command: str, res: CommandResult
) -> StepResult:
    flags = parse_flags(res.output)
    reports = (*flags.changed, *flags.unchanged)
    failed = res.timed_out or res.error is not None or res.exit_status != 0
    if not failed:
        status: StepStatus = (
            "changed" if flags.changed else ("unchanged" if flags.unchanged else "done")
        )
        return StepResult(
            step=step,
            command=command,
            status=status,
            exit_status=res.exit_status,
            output=res.output,
            reports=reports,
            changed_flags=flags.changed,
            dropped_chars=res.dropped_chars,
        )
    sudo_refused = plan.sudo and step.needs_root and _sudo_problem(res.output)
    if sudo_refused:
        why = (
            f"sudo on {host.name} needs a password (sudo -n refused); run the commands "
            "yourself as root, or log in as root / allow this user passwordless sudo"
        )
    elif res.timed_out:
        why = f"timed out after {step.deadline_s:.0f} s"
    else:
        why = res.error or f"exit status {res.exit_status}"
        cause = last_words(res.output)
        if cause and res.error is None:
            why = f"{why}: {cause}"
    return StepResult(
        step=step,
        command=command,
        status="failed",
        exit_status=res.exit_status,
        output=res.output,
        reports=reports,
        error=f"step {index} ({step.title}) failed: {why}",
        changed_flags=flags.changed,
        untouched=bool(sudo_refused) or res.error_kind in NEVER_CONNECTED,
        dropped_chars=res.dropped_chars,
    )


def _verdict_of(facts: Facts) -> tuple[tuple[str, ...], Severity | None]:
    """The problems (critical and warning findings) and the worst severity of all findings.

    An info finding is not a problem: a fix that makes the server avoid the broken path
    turns a critical finding into info, which counts as resolved.
    """
    d = diagnose(facts)
    problems = (f.id for f in d.findings if f.severity in PROBLEM_SEVERITIES)
    return tuple(dict.fromkeys(problems)), d.worst()


def _verdict(facts: Facts, python: str | None, label: str) -> str | None:
    py = next((p for p in facts.pythons if p.path == python and p.flashinfer_version), None)
    ctx = facts.context(label)
    if py is None or ctx is None:
        return None
    r = replay(facts, py, ctx)
    archs = " ".join(r.target_cuda_archs) or "none"
    return (
        f"FlashInfer {r.version}: CUDA {r.jit_cuda or '?'} from {r.cuda_home or '?'} → "
        f"targets {archs} → check {r.check_cuda_arch}"
    )


COMMAND_KEY = "command line"


def _shown_vars(plan: FixPlan, ctx: EnvContext | None) -> dict[str, str]:
    if ctx is None:
        return {}
    shown = {k: ctx.vars[k] for k in plan.env_keys if k in ctx.vars}
    if ctx.unit in plan.exec_units and ctx.cmdline:
        shown[COMMAND_KEY] = ctx.cmdline
    return shown


def _changes(plan: FixPlan, before: Facts, after: Facts) -> tuple[ContextChange, ...]:
    labels = [*plan.contexts]
    labels += [c.label for c in after.contexts if c.label.startswith("venv activated")]
    if plan.profile:
        labels += [c.label for c in after.contexts if c.kind == "login"]
    out = []
    for label in dict.fromkeys(labels):
        b = before.context(label)
        a = after.context(label)
        out.append(
            ContextChange(
                label=_shown(label, after),
                before=_shown_vars(plan, b),
                after=_shown_vars(plan, a),
                verdict_before=_verdict(before, plan.python, label) if b else None,
                verdict_after=_verdict(after, plan.python, label) if a else None,
            )
        )
    return tuple(out)


def _shown(label: str, facts: Facts) -> str:
    ctx = facts.context(label)
    if ctx is not None and ctx.unit:
        return f"{label} ({ctx.unit} as it will start next time)"
    return label


def _pending_restart(plan: FixPlan, live: Facts, judged: Facts) -> tuple[str, ...]:
    pending = []
    for ctx in live.contexts:
        if ctx.unit in plan.units:
            new = judged.context(ctx.label)
            if new is None:
                continue
            env_differs = any(new.vars.get(k) != ctx.vars.get(k) for k in plan.env_keys)
            command_differs = ctx.unit in plan.exec_units and (new.words != ctx.words)
            if env_differs or command_differs:
                pending.append(ctx.unit)
    return tuple(dict.fromkeys(u for u in pending if u))


def _program(ctx: EnvContext) -> str:
    """A serving process's program, without its pid: ``pid 4242 sglang.launch_server``."""
    return ctx.label.split(" ", 2)[-1] if ctx.label.startswith("pid ") else ctx.label


def _not_running(plan: FixPlan, before: Facts, after: Facts) -> tuple[str, ...]:
    """The serving processes the plan is for that ran before it and run no more: no process
    of the same program (in the same unit, when it has one; a restart changes the pid). A
    verdict for them covers only their next start."""
    gone = []
    for ctx in before.contexts:
        if ctx.pid is None or (ctx.label not in plan.contexts and ctx.unit not in plan.units):
            continue
        if not any(
            c.pid is not None and c.unit == ctx.unit and _program(c) == _program(ctx)
            for c in after.contexts
        ):
            gone.append(f"{ctx.unit} (pid {ctx.pid})" if ctx.unit else ctx.label)
    return tuple(gone)


async def apply_plan(
    session: Session,
    host: Host,
    plan: FixPlan,
    on_line: LineSink | None = None,
    *,
    before: Facts | None = None,
    record_undo: bool = True,
    undoing: UndoRecord | None = None,
) -> FixOutcome:
    """Run ``plan`` on ``host``, re-probe, re-diagnose, and compare before/after.

    ``before`` is the probe the plan was built from (probed again when not given). The
    transcript gets the plan, every command, every journal write and the outcome. With
    ``record_undo`` the run is journaled in a new undo record; ``undoing`` is the record an
    undo plan reverses (its undo is journaled there, and it is moved aside once undone).
    Plans with neither (restarts) change nothing that can be undone and keep no journal.
    ``session.fixes.running`` says what it is doing (the quit dialog shows it) until it ends.
    """
    session.fixes.running[host.name] = f"{plan.fix_id}: reading the host before the change"
    try:
        return await _apply_plan(session, host, plan, on_line, before, record_undo, undoing)
    finally:
        session.fixes.running.pop(host.name, None)


async def _apply_plan(
    session: Session,
    host: Host,
    plan: FixPlan,
    on_line: LineSink | None,
    before: Facts | None,
    record_undo: bool,
    undoing: UndoRecord | None,
) -> FixOutcome:
    if before is None:
        probed = await session.probe(host)
        if probed.facts is None:
            return FixOutcome(plan=plan, steps=(), error=f"probe failed: {probed.error}")
        before = probed.facts
    session.record(
        "fix-start",
        host=host.name,
        fix=plan.fix_id,
        params=dict(plan.params),
        commands=list(plan.preview_commands()),
    )
    if plan.needs_root and plan.sudo and before.host.sudo_nopasswd is False:
        error = (
            f"{plan.fix_id} needs root and sudo on {host.name} asks for a password; run the "
            "previewed commands yourself as root, or allow passwordless sudo for this user"
        )
        session.record("fix-refused", host=host.name, fix=plan.fix_id, reason=error)
        return _not_started(plan, error)
    if session.fixes.stop_requested:
        return _not_started(plan, "not started: detective-tui was quit", stopped=True)
    reads_before = await read_envs(session, host, plan)
    judged_before = judged_facts(before, plan, reads_before)
    findings_before, worst_before = _verdict_of(judged_before)
    try:
        journal = await asyncio.to_thread(
            _open_journal, session, plan, findings_before, undoing, record_undo
        )
    except JournalError as exc:
        session.record("fix-refused", host=host.name, fix=plan.fix_id, reason=str(exc))
        return _not_started(plan, f"{exc}; nothing was run")
    results, error = await run_steps(session, host, plan, on_line, journal)
    ended = "a step failed" if error else f"all {len(plan.steps)} step(s) ran"
    session.fixes.running[host.name] = f"{plan.fix_id}: {ended}; re-probing to verify"
    cut_short = session.fixes.stop_requested and any(r.status == "not-run" for r in results)
    record = None
    if journal is not None:
        state = (
            "stopped"
            if cut_short and not any(r.status == "failed" for r in results)
            else ("failed" if error else "done")
        )
        try:
            record = await asyncio.to_thread(journal.close, state, error)
        except JournalError as exc:
            error = error or str(exc)
            record = journal.record.id
    if isinstance(journal, UndoJournal):
        record = None
    if session.fixes.stop_requested:  # quitting: no re-probe, the next run probes
        outcome = FixOutcome(
            plan=plan,
            steps=results,
            error=error,
            findings_before=findings_before,
            worst_before=worst_before,
            record=record,
            stopped=True,
        )
        session.record("fix-outcome", **outcome_summary(outcome))
        return outcome
    probed = await session.probe(host)
    await keep_probe(session, probed)  # the history shows the fix's verifying probe
    if probed.facts is None:
        outcome = FixOutcome(
            plan=plan,
            steps=results,
            error=error or f"re-probe failed: {probed.error}",
            findings_before=findings_before,
            worst_before=worst_before,
            record=record,
            reprobe_error=probed.error or "no facts",
        )
        session.record("fix-outcome", **outcome_summary(outcome))
        return outcome
    reads_after = await read_envs(session, host, plan)
    judged_after = judged_facts(probed.facts, plan, reads_after, reads_before)
    findings_after, worst_after = _verdict_of(judged_after)
    present = [i for i in plan.verify_gone if i in findings_before]
    outcome = FixOutcome(
        plan=plan,
        steps=results,
        error=error,
        findings_before=findings_before,
        findings_after=findings_after,
        worst_before=worst_before,
        worst_after=worst_after,
        resolved=tuple(i for i in present if i not in findings_after),
        unresolved=tuple(i for i in present if i in findings_after),
        introduced=tuple(i for i in findings_after if i not in findings_before),
        contexts=_changes(plan, judged_before, judged_after),
        pending_restart=_pending_restart(plan, probed.facts, judged_after),
        unit_problems=unit_problems(reads_after),
        not_running=_not_running(plan, before, probed.facts),
        record=record,
        facts_after=probed.facts,
        current_shell=current_shell_lines(probed.facts, plan, reads_after.activate, judged_after),
    )
    session.record("fix-outcome", **outcome_summary(outcome))
    return outcome


def _open_journal(
    session: Session,
    plan: FixPlan,
    findings_before: tuple[str, ...],
    undoing: UndoRecord | None,
    record_undo: bool,
) -> Journal | None:
    if undoing is not None:
        return UndoJournal.open(undoing, plan, session.record)
    if record_undo:
        return FixJournal.open(plan, findings_before, session.record)
    return None


def _not_started(plan: FixPlan, error: str, *, stopped: bool = False) -> FixOutcome:
    steps = tuple(
        StepResult(step=s, command=plan.effective_command(s), status="not-run") for s in plan.steps
    )
    return FixOutcome(plan=plan, steps=steps, error=error, stopped=stopped)


def outcome_summary(outcome: FixOutcome) -> dict[str, object]:
    """A JSON-able summary for the transcript and ``--json`` output."""
    return {
        "host": outcome.plan.host.name,
        "fix": outcome.plan.fix_id,
        "params": dict(outcome.plan.params),
        "applied": outcome.applied,
        "ok": outcome.ok,
        "error": outcome.error,
        "steps": [
            {
                "title": s.step.title,
                "status": s.status,
                "exit_status": s.exit_status,
                "reports": list(s.reports),
                "may_have_changed": s.may_have_changed,
                "journal_status": s.journal_status,
                "output_dropped_chars": s.dropped_chars,
            }
            for s in outcome.steps
        ],
        "findings_before": list(outcome.findings_before),
        "findings_after": list(outcome.findings_after),
        "worst_before": outcome.worst_before,
        "worst_after": outcome.worst_after,
        "resolved": list(outcome.resolved),
        "unresolved": list(outcome.unresolved),
        "introduced": list(outcome.introduced),
        "contexts": [
            {
                "label": c.label,
                "before": dict(c.before),
                "after": dict(c.after),
                "verdict_before": c.verdict_before,
                "verdict_after": c.verdict_after,
            }
            for c in outcome.contexts
        ],
        "pending_restart": list(outcome.pending_restart),
        "current_shell": list(outcome.current_shell),
        "unit_problems": list(outcome.unit_problems),
        "not_running": list(outcome.not_running),
        "undo_record": outcome.record,
        "nothing_changed": outcome.nothing_changed,
        "stopped": outcome.stopped,
    }
