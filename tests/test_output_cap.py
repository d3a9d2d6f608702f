"""Remote output is bounded (issue 19): a command keeps and streams at most its cap, and what
it printed past the cap is counted and said (a note with the exact number), never dropped
unsaid — for any script and for a fix's step."""

from __future__ import annotations

from tui.core.fixes.plan import FixPlan, Step
from tui.core.hosts import Host
from tui.core.run.fix_executor import STEP_OUTPUT_CHARS, run_steps
from tui.core.run.runner import Session

LINE = "abcdefghi"  # 10 characters with its newline
LINES = 200_000  # 2,000,000 characters


async def test_a_scripts_output_past_its_cap_is_counted_and_noted() -> None:
    host = Host(name="local", local=True)
    seen: list[str] = []
    async with Session() as session:
        res = await session.run_script(
            host, f"yes {LINE} | head -n {LINES}", on_line=seen.append, max_output_chars=10_000
        )
    assert res.exit_status == 0
    kept = res.output.splitlines()
    assert kept[:-1] == [LINE] * 1000  # 10,000 characters, the cap
    assert res.dropped_chars == (LINES - 1000) * 10
    assert kept[-1] == (
        "[detective-tui: 1990000 more characters not kept (over the 10000-character cap)]"
    )
    assert seen == [LINE] * 1000 + [
        "[detective-tui: output over 10000 characters; the rest not kept]"
    ]


async def test_a_fix_steps_output_is_capped_and_its_result_says_how_much_was_dropped() -> None:
    host = Host(name="local", local=True)
    step = Step(title="noisy", command=f"yes {LINE} | head -n {LINES}", undo=None, changes="-",
                needs_root=False)  # fmt: skip
    plan = FixPlan(fix_id="noisy", host=host, params={}, steps=(step,), verify_gone=())
    shown: list[str] = []
    async with Session() as session:
        (result,), error = await run_steps(session, host, plan, shown.append)
    assert error is None
    assert result.dropped_chars > 0
    assert (
        result.dropped_chars + len(result.output) - 100
        < LINES * 10
        < (result.dropped_chars + len(result.output))
    )
    assert len(result.output) < STEP_OUTPUT_CHARS + 100
    assert (
        f"more characters not kept (over the {STEP_OUTPUT_CHARS}-character cap)"
        in (result.output.splitlines()[-1])
    )
    assert len(shown) < STEP_OUTPUT_CHARS // 10 + 5  # the terminal got the cap, not 2 MB
