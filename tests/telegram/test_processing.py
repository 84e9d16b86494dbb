"""The update processor: chats in parallel, each chat in order, a chat's backlog in one slot."""

import asyncio
from datetime import UTC, datetime

from telegram import Chat, Message, Update

from bot.telegram.runtime.processing import PerChatUpdateProcessor

WHEN = datetime(2025, 1, 1, tzinfo=UTC)


def update_in(chat_id: int, update_id: int) -> Update:
    """Return a text message update in a private chat."""
    chat = Chat(chat_id, Chat.PRIVATE)
    return Update(update_id, message=Message(update_id, WHEN, chat, text="hi"))


async def test_a_chats_backlog_holds_one_slot_so_other_chats_go_on():
    processor = PerChatUpdateProcessor(2)
    gate = asyncio.Event()
    done: list[tuple[int, int]] = []

    async def handle(chat_id: int, n: int, wait: bool) -> None:
        if wait:
            await gate.wait()
        done.append((chat_id, n))

    busy = [
        asyncio.create_task(processor.process_update(update_in(1, n), handle(1, n, True)))
        for n in range(10)
    ]
    other = processor.process_update(update_in(2, 99), handle(2, 99, False))
    # Before: chat 1's first two updates held both slots, one of them only waiting for chat 1.
    await asyncio.wait_for(other, timeout=5)
    assert done == [(2, 99)]
    gate.set()
    await asyncio.gather(*busy)
    assert done[1:] == [(1, n) for n in range(10)]


async def test_a_flood_across_many_chats_leaves_no_state_behind():
    processor = PerChatUpdateProcessor(4)

    async def handle() -> None:
        await asyncio.sleep(0)  # the scenario: a handler that gives way once

    floods = [processor.process_update(update_in(chat, chat), handle()) for chat in range(1, 1001)]
    await asyncio.gather(*floods)
    assert processor.active_chats == 0 and processor.unfinished == 0


async def test_drain_cancels_what_outlives_the_grace_period_and_closes_what_never_ran():
    processor = PerChatUpdateProcessor(4)
    never = asyncio.Event()
    coroutines = [never.wait() for _ in range(3)]
    tasks = [
        asyncio.create_task(processor.process_update(update_in(1, n), coroutine))
        for n, coroutine in enumerate(coroutines)
    ]
    await asyncio.sleep(0)  # one step of the loop: the tasks start and queue for chat 1
    assert processor.unfinished == 3 and processor.active_chats == 1
    await processor.drain(0.05)
    assert all(task.cancelled() for task in tasks)
    # Closed, so none of them warns "coroutine was never awaited" when collected.
    assert all(coroutine.cr_frame is None for coroutine in coroutines)
    assert processor.unfinished == 0 and processor.active_chats == 0


async def test_wait_idle_returns_once_every_update_and_turn_has_ended():
    processor = PerChatUpdateProcessor(2)
    await processor.wait_idle()  # nothing queued: at once
    gate = asyncio.Event()
    update = asyncio.create_task(processor.process_update(update_in(1, 1), gate.wait()))
    turn = asyncio.create_task(processor.run_exclusive(2, gate.wait()))
    await asyncio.sleep(0)  # one step of the loop: both start
    idle = asyncio.create_task(processor.wait_idle())
    await asyncio.sleep(0)
    assert processor.unfinished == 2 and not idle.done()
    gate.set()
    await asyncio.wait_for(idle, timeout=5)
    assert update.done() and turn.done() and processor.unfinished == 0
