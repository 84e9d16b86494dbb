"""Fill a database fast for a benchmark: the rows the real writes leave, in bulk."""

import random
from datetime import timedelta
from functools import lru_cache

import numpy as np
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from bot.conversations.blocks import Content, Role, text_block
from bot.conversations.content import search_text
from bot.conversations.models import Conversation, Turn
from memory.block import line_tokens
from memory.db import create_engine, create_sessionmaker
from memory.ids import new_memory_id
from memory.items import MemoryItem, normalize_subject, subject_key
from memory.models import Memory, MemoryVersion
from memory.search_index import index_items
from tests.perf.data import START, model_reply, sample_memories, user_message

BATCH = 2000
TURNS_PER_CONVERSATION = 40
# Seeded turns carry vectors of this made-up model, the local model's size: random unit
# vectors (a search by meaning costs the same whatever they mean).
SEEDED_MODEL = "seeded-vectors"
DIMENSIONS = 384


def seeded_vector(rng: np.random.Generator) -> bytes:
    """Return a random unit vector as a turn's vector is stored (float16)."""
    vector = rng.standard_normal(DIMENSIONS).astype(np.float32)
    return (vector / np.linalg.norm(vector)).astype(np.float16).tobytes()


def _memory_rows(owner_id: int, count: int, seed: int) -> list[MemoryItem]:
    """Return count plausible memories of the owner as the store would hold them."""
    items = []
    for i, (content, category, subject) in enumerate(sample_memories(count, seed)):
        at = START + timedelta(minutes=i)
        items.append(
            MemoryItem(
                new_memory_id(), owner_id, category, normalize_subject(subject), content, 1, at, at
            )
        )
    return items


async def _insert_memories(session: AsyncSession, items: list[MemoryItem]) -> None:
    """Insert memories, their first versions and their index rows."""
    await session.execute(
        insert(Memory),
        [
            {
                "id": i.id,
                "owner_id": i.owner_id,
                "category": i.category.value,
                "subject": i.subject,
                "subject_key": subject_key(i.subject),
                "created_at": i.created_at,
                "changed_at": i.updated_at,
                "tokens": line_tokens(i.id, i.subject, i.content),
            }
            for i in items
        ],
    )
    await session.execute(
        insert(MemoryVersion),
        [
            {
                "memory_id": i.id,
                "version_number": 1,
                "content": i.content,
                "created_at": i.created_at,
            }
            for i in items
        ],
    )
    await index_items(session, items)


async def seed_memories(url: str, owner_id: int, count: int, seed: int = 7) -> None:
    """Store count plausible memories for the owner, as the real store leaves them."""
    engine = create_engine(url)
    try:
        sessionmaker = create_sessionmaker(engine)
        items = _memory_rows(owner_id, count, seed)
        for start in range(0, len(items), BATCH):
            async with sessionmaker.begin() as session:
                await _insert_memories(session, items[start : start + BATCH])
    finally:
        await engine.dispose()


def _turn(
    conversation_id: int, owner_id: int, i: int, vectors: np.random.Generator | None = None
) -> dict:
    """Return the i-th stored turn of a plausible chat: the user's, then the model's."""
    role: Role = "user" if i % 2 == 0 else "assistant"
    words = user_message(i // 2) if role == "user" else model_reply(i // 2)
    said = f"[Monday, 06 January 2025, 09:00 UTC]\n{words}" if role == "user" else words
    content: Content = [text_block(said)]
    return {
        "conversation_id": conversation_id,
        "role": role,
        "content": content,
        "tokens": 40,
        "created_at": START + timedelta(minutes=i),
        "search_text": _search_text(role, said, owner_id),
        "owner_id": owner_id,
        "embedding": seeded_vector(vectors) if vectors is not None else None,
        "embedding_model": SEEDED_MODEL if vectors is not None else None,
    }


@lru_cache(maxsize=8192)
def _search_text(role: Role, said: str, owner_id: int) -> str | None:
    """Return a seeded turn's index text (the seeding repeats its turns' words: made once)."""
    return search_text(role, [text_block(said)], owner_id)


async def seed_turns(
    url: str, owner_id: int, count: int, seed: int = 7, vectors: bool = False
) -> None:
    """Store count turns of the owner's past conversations, TURNS_PER_CONVERSATION each.

    vectors: each turn with a vector of SEEDED_MODEL, as the background would leave it.
    """
    engine = create_engine(url)
    rng = random.Random(seed)
    made = np.random.default_rng(seed) if vectors else None
    try:
        sessionmaker = create_sessionmaker(engine)
        for start in range(0, count, TURNS_PER_CONVERSATION):
            async with sessionmaker.begin() as session:
                at = START + timedelta(minutes=start)
                result = await session.execute(
                    insert(Conversation).returning(Conversation.id),
                    {
                        "chat_id": owner_id,
                        "owner_id": owner_id,
                        "memory_block": "",
                        "started_at": at,
                        "last_activity_at": at,
                        "ended_at": at,
                    },
                )
                conversation_id = result.scalar_one()
                size = min(TURNS_PER_CONVERSATION, count - start)
                offset = rng.randrange(1000)
                rows = [_turn(conversation_id, owner_id, offset + i, made) for i in range(size)]
                await session.execute(insert(Turn), rows)
    finally:
        await engine.dispose()
