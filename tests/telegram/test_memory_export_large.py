"""/memory export of thousands of memories with versions: read in batches, zipped, complete."""

import io
import json
import zipfile
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert

from memory.export_rows import EXPORT_BATCH
from memory.models import Memory, MemoryVersion
from tests.harness import FRIEND, OWNER

COUNT = 25 * EXPORT_BATCH + 7  # many batches, the last one short
VERSIONS = 3
T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def plant(engine, owner: int, count: int, prefix: str) -> list[str]:
    """Insert count memories of VERSIONS versions each straight into the tables; return ids."""
    ids = [f"{prefix}{n:06d}" for n in range(count)]
    # Created in the reverse order of their ids, so the export's order is checked too.
    created = {memory_id: T0 + timedelta(seconds=count - n) for n, memory_id in enumerate(ids)}
    text = "The user told me a long story about a project, a person and a place. " * 6
    async with engine.begin() as connection:
        await connection.execute(
            insert(Memory),
            [
                {"id": i, "owner_id": owner, "category": "context", "subject": None,
                 "created_at": created[i], "changed_at": created[i], "tokens": 100}
                for i in ids
            ],
        )  # fmt: skip
        await connection.execute(
            insert(MemoryVersion),
            [
                {"memory_id": i, "version_number": v, "content": f"{text}{i} v{v}",
                 "created_at": created[i] + timedelta(minutes=v)}
                for i in ids
                for v in range(1, VERSIONS + 1)
            ],
        )  # fmt: skip
    return ids


@pytest.mark.engines
async def test_an_export_of_thousands_of_memories_is_one_zip_with_all_of_them(harness):
    engine = harness.services.engine
    ids = await plant(engine, OWNER, COUNT, "m")
    await plant(engine, FRIEND, 3, "f")
    assert await harness.say(OWNER, "/memory export") == []
    [upload] = harness.tg.documents
    assert upload["filename"].endswith(".zip") and len(upload["data"]) < 2 * 1024 * 1024
    assert upload["result"]["caption"].startswith(f"{COUNT} memories with every version")
    with zipfile.ZipFile(io.BytesIO(upload["data"])) as archive:
        [name] = archive.namelist()
        document = json.loads(archive.read(name))
    memories = document["memories"]
    assert [m["id"] for m in memories] == ids[::-1]  # oldest first, none twice, no other owner
    assert all(len(m["versions"]) == VERSIONS for m in memories)
    assert memories[0]["content"].endswith(f"{ids[-1]} v{VERSIONS}")
