"""Figure 4: what the memory block costs in tokens per memory and in time to render."""

import time
from pathlib import Path

from memory.block import BLOCK_HEADER, render_memory_block
from memory.tokens import count_tokens
from tests.perf.common import Config, Row, command, median, ms
from tests.perf.data import memory_items

TOKENS_TARGET = 15


def overhead_per_memory(count: int) -> tuple[float, int, int]:
    """Return the block's tokens per memory beyond content and subject, the block, the data."""
    items = memory_items(count)
    block = count_tokens(render_memory_block(items))
    data = sum(count_tokens(i.content) + count_tokens(i.subject or "") for i in items)
    return (block - count_tokens(BLOCK_HEADER) - data) / count, block, data


def render_time(count: int, repeats: int) -> float:
    """Return the median time to render the block of count memories."""
    items = memory_items(count)
    render_memory_block(items)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        render_memory_block(items)
        times.append(time.perf_counter() - start)
    return median(times)


async def run(config: Config, workdir: Path) -> list[Row]:
    """Count the block's tokens and time its rendering at each size."""
    per_memory, block, data = overhead_per_memory(config.token_memories)
    result = [
        Row(
            key="prompt",
            figure=(
                f"4. Memory block: tokens per memory beyond content and subject "
                f"({config.token_memories:,} memories, cl100k)"
            ),
            value=f"{per_memory:.1f} tokens",
            numbers=(per_memory,),
            target=f"<= {TOKENS_TARGET}",
            met=per_memory <= TOKENS_TARGET,
            command=command("prompt"),
            details=(f"block {block} tokens, of which content and subjects {data}",),
        )
    ]
    for size in config.render_sizes:
        seconds = render_time(size, config.render_repeats)
        result.append(
            Row(
                key="prompt",
                figure=f"4. Memory block render time, {size:,} memories",
                value=ms(seconds),
                numbers=(seconds * 1000,),
                command=command("prompt"),
            )
        )
    return result
