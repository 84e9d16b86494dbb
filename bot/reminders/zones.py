"""Find an IANA time zone from what a user says: 'Europe/Berlin', 'Berlin', 'new york'."""

import functools
import zoneinfo

# Region prefixes of real places; the rest of the database (Etc/GMT+5, US/Eastern, Japan)
# is reachable only by its full name.
_REGIONS = (
    "Africa",
    "America",
    "Antarctica",
    "Asia",
    "Atlantic",
    "Australia",
    "Europe",
    "Indian",
    "Pacific",
)
# Full names with a folder that stand for places (old country folders) or for UTC itself.
_FOLDERS = (*_REGIONS, "Arctic", "Brazil", "Canada", "Chile", "Etc", "Mexico", "US")
# Names zoneinfo accepts that are no person's zone: the server's own zone (never used for a
# user), tzdata's placeholder "-00", and POSIX-style rule names a person would take for their
# own (EST has no summer time; New York's does). A city or a region name says it instead.
_NOT_PLACES = frozenset(
    {
        "localtime",
        "factory",
        "posixrules",
        "est",
        "mst",
        "hst",
        "cet",
        "eet",
        "met",
        "wet",
        "est5edt",
        "cst6cdt",
        "mst7mdt",
        "pst8pdt",
    }
)


@functools.cache
def _by_city() -> dict[str, str]:
    """Map each city's name (lower case, spaces for underscores) to its zone, when unique."""
    found: dict[str, set[str]] = {}
    for name in zoneinfo.available_timezones():
        if name.split("/", 1)[0] in _REGIONS:
            city = name.rsplit("/", 1)[-1].replace("_", " ").lower()
            found.setdefault(city, set()).add(name)
    return {city: names.pop() for city, names in found.items() if len(names) == 1}


@functools.cache
def _by_lower_name() -> dict[str, str]:
    """Map every zone name that stands for a place (or UTC), in lower case, to the name."""
    return {
        name.lower(): name
        for name in zoneinfo.available_timezones()
        if (name.split("/", 1)[0] in _FOLDERS if "/" in name else name.lower() not in _NOT_PLACES)
    }


def find_zone(text: str) -> zoneinfo.ZoneInfo | None:
    """Return the zone a name or a city names, or None when it names none (or several)."""
    wanted = " ".join(text.strip().replace("_", " ").split()).lower()
    if not wanted or len(wanted) > 64:
        return None
    name = _by_lower_name().get(wanted.replace(" ", "_")) or _by_city().get(wanted)
    if wanted in ("utc", "gmt", "z"):
        name = "UTC"
    return zoneinfo.ZoneInfo(name) if name else None
