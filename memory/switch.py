"""The owner's memory switch: on by default, off keeps every memory but uses none."""

from sqlalchemy import ColumnElement, func, select, true
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memory.models import OwnerSettings, utcnow
from memory.retry import retry_lost_races


def memory_enabled_expression(owner_id: int | ColumnElement[int]) -> ColumnElement[bool]:
    """Return SQL telling whether an owner (an id or a column) has memory on (the default)."""
    setting = (
        select(OwnerSettings.memory_enabled)
        .where(OwnerSettings.owner_id == owner_id)
        .scalar_subquery()
    )
    return func.coalesce(setting, true())


async def load_memory_enabled(session: AsyncSession, owner_id: int) -> bool:
    """Tell whether this owner has memory on (the default), inside the caller's session."""
    return bool(await session.scalar(select(memory_enabled_expression(owner_id))))


class MemorySwitch:
    """Reads and flips each owner's memory switch."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]):
        self._sessionmaker = sessionmaker

    async def is_on(self, owner_id: int) -> bool:
        """Tell whether this owner has memory on (the default)."""
        async with self._sessionmaker() as session:
            return await load_memory_enabled(session, owner_id)

    async def turn(self, owner_id: int, enabled: bool) -> bool:
        """Turn this owner's memory on or off; tell whether that changed anything."""

        async def attempt() -> bool:
            async with self._sessionmaker.begin() as session:
                row = await session.get(OwnerSettings, owner_id)
                if row is None:
                    session.add(OwnerSettings(owner_id=owner_id, memory_enabled=enabled))
                    return not enabled
                if row.memory_enabled == enabled:
                    return False
                row.memory_enabled, row.updated_at = enabled, utcnow()
                return True

        async def row_created_meanwhile(_error: IntegrityError) -> bool:
            # Another writer inserted the row first; the next attempt updates it.
            return True

        return await retry_lost_races(attempt, row_created_meanwhile, attempts=2)
