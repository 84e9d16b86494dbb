"""How many web searches and page reads each owner's turns made, a day: the daily cap's count."""

import functools
from datetime import date

from sqlalchemy import BigInteger, Date, Integer, Label, Select, bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from bot.conversations.snapshot import WebDay
from bot.conversations.statements import NamedRow
from bot.reminders.models import OwnerZone
from memory.models import Base


class WebUse(Base):
    """One owner's web uses on one day (in the bot's TIMEZONE), as the API counted them."""

    __tablename__ = "web_uses"

    owner_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    searches: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    fetches: Mapped[int] = mapped_column(Integer, nullable=False, default=0)


WEB_USED, WEB_ZONE = "web_used", "web_zone"


def web_day_columns() -> tuple[Label[int | None], Label[str | None]]:
    """Return an owner's web uses of a day and their zone, for :owner and :day."""
    used = select(WebUse.searches + WebUse.fetches).where(
        WebUse.owner_id == bindparam("owner"), WebUse.day == bindparam("day")
    )
    zone = select(OwnerZone.zone).where(OwnerZone.owner_id == bindparam("owner"))
    return used.scalar_subquery().label(WEB_USED), zone.scalar_subquery().label(WEB_ZONE)


def web_day_of(row: NamedRow, day: date) -> WebDay:
    """Read the web uses and zone of a row that selected web_day_columns() for day."""
    values = row._mapping
    return WebDay(day, values[WEB_USED] or 0, values[WEB_ZONE])


@functools.cache
def _uses_and_zone_statement() -> Select[int | None, str | None]:
    """Select an owner's uses of a day and their zone: built once, as web_day_columns are."""
    return select(*web_day_columns())


class WebUses:
    """Counts each owner's web searches and fetches per day, in the database."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]):
        self._sessionmaker = sessionmaker

    async def day_of(self, owner_id: int, day: date) -> WebDay:
        """Return the owner's uses of that day and their IANA zone, in one read.

        For a turn they did not come with (Snapshot.web): a new conversation, or a new day.
        """
        parameters = {"owner": owner_id, "day": day}
        async with self._sessionmaker() as session:
            row = (await session.execute(_uses_and_zone_statement(), parameters)).one()
        return web_day_of(row, day)

    async def add(self, owner_id: int, day: date, searches: int, fetches: int) -> None:
        """Add one model call's searches and fetches to the owner's count of that day."""
        if not searches and not fetches:
            return
        for _ in range(2):  # a first row of the day may race another turn of the same owner
            try:
                async with self._sessionmaker.begin() as session:
                    if await self._bump(session, owner_id, day, searches, fetches):
                        return
                    session.add(
                        WebUse(owner_id=owner_id, day=day, searches=searches, fetches=fetches)
                    )
                return
            except IntegrityError:
                continue

    @staticmethod
    async def _bump(
        session: AsyncSession, owner_id: int, day: date, searches: int, fetches: int
    ) -> bool:
        """Add to the day's row in one statement; tell whether there was one."""
        result = await session.execute(
            update(WebUse)
            .where(WebUse.owner_id == owner_id, WebUse.day == day)
            .values(searches=WebUse.searches + searches, fetches=WebUse.fetches + fetches)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]
