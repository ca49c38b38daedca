"""A batch's rows on this event loop: `concurrency` workers, each awaiting `acall` row by row.

Every row gets its envelope: a row's failure never stops the batch. Cancelling the batch
cancels the rows still running, starts no other, and waits for them to unwind (at most
`CANCEL_GRACE_S`: a tool ignoring the cancel is left behind).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolcaller.envelope import Envelope

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller

__all__ = ["CANCEL_GRACE_S", "run_rows"]

CANCEL_GRACE_S = 0.5


async def run_rows(caller: ToolCaller, tool_name: str, rows: list[Any], concurrency: int,
                   options: dict[str, Any] | None, option_kwargs: dict[str, Any],
                   advance: Callable[[bool], None]) -> list[Envelope]:
    """Call `tool_name` once per row, at most `concurrency` at once; envelopes in row order."""
    out: list[Envelope | None] = [None] * len(rows)
    todo = iter(range(len(rows)))  # shared by the workers: one loop, no race

    async def work() -> None:
        for index in todo:
            envelope = await caller.acall(tool_name, rows[index], options, **option_kwargs)
            out[index] = envelope
            advance(envelope.success)

    workers = [asyncio.ensure_future(work()) for _ in range(min(concurrency, len(rows)))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for worker in workers:
            worker.cancel()
        if workers:
            await asyncio.wait(workers, timeout=CANCEL_GRACE_S)
        raise
    return out  # type: ignore[return-value]
