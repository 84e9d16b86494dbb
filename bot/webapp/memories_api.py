"""The API of memories: list, search, one with its versions, edit, delete, restore, pin, Undo."""

import json
from typing import Annotated, TypeVar

from aiohttp import web
from pydantic import BaseModel, StringConstraints, ValidationError

from bot.webapp import payloads
from bot.webapp.events import Changed, Pinned, Restored, Undone
from bot.webapp.list_cache import EncodedList
from bot.webapp.services import LIST_CACHE, services_of
from memory.tools.args import MemoryContent

MAX_QUERY_CHARS = 200
# The newest replies shown under one memory; the chat's "Based on" button shows each reply's.
REPLIES_SHOWN = 10
JSON = "application/json"
routes = web.RouteTableDef()
Body = TypeVar("Body", bound=BaseModel)


class EditBody(BaseModel):
    """A new content for a memory, held to the model's own rules for content."""

    content: MemoryContent


class SearchQuery(BaseModel):
    """Words to search for."""

    q: Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_QUERY_CHARS)]


def bad_request(error: ValidationError) -> web.HTTPBadRequest:
    """Return a 400 naming what was wrong with the input, never echoing it."""
    problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
    return web.HTTPBadRequest(text=json.dumps({"error": problems}), content_type=JSON)


async def read_body(request: web.Request, model: type[Body]) -> Body:
    """Parse a JSON body into model, or raise 400."""
    try:
        return model.model_validate_json(await request.read())
    except ValidationError as error:
        raise bad_request(error) from None


@routes.get("/memories")
async def list_memories(request: web.Request) -> web.Response:
    """Return every active memory, short, with which are in the prompt, and the recently deleted.

    Read and encoded once per change to the owner's memories (bot.webapp.list_cache); in
    between, one small read tells the kept list still holds.
    """
    services, owner = services_of(request)
    cache, control = request.app[LIST_CACHE], services.memory_control
    encoded = cache.get(owner, await control.list_stamp(owner))
    if encoded is None:
        listing = await control.listing(owner)
        encoded = cache.put(owner, listing.stamp, payloads.listing(listing).encode())
    return _list_response(request, encoded)


def _list_response(request: web.Request, encoded: EncodedList) -> web.Response:
    """Send a list: 304 if the page holds it already, gzipped if the page takes gzip."""
    headers = {"ETag": encoded.etag, "Vary": "Accept-Encoding"}
    if request.headers.get("If-None-Match") == encoded.etag:
        return web.Response(status=304, headers=headers)
    body = encoded.body
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        headers["Content-Encoding"], body = "gzip", encoded.gzipped
    return web.Response(body=body, content_type=JSON, headers=headers)


@routes.get("/search")
async def search(request: web.Request) -> web.Response:
    """Return the ids of the active memories matching the words, best first."""
    services, owner = services_of(request)
    try:
        query = SearchQuery.model_validate({"q": request.query.get("q", "")})
    except ValidationError as error:
        raise bad_request(error) from None
    found = await services.memory_control.search(owner, query.q) if query.q else []
    return web.json_response({"ids": [item.id for item in found]})


@routes.get("/memories/{memory_id}")
async def one_memory(request: web.Request) -> web.Response:
    """Return one memory with every version, what made it, and the replies that drew on it."""
    services, owner = services_of(request)
    memory_id = request.match_info["memory_id"]
    # First: another owner's id (or nobody's) is 404 before anything else is read.
    record = await services.memory_control.history(owner, memory_id)
    notes = {note.version: note for note in await services.batches.notes(owner, memory_id)}
    replies = await services.citations.citing(owner, memory_id, REPLIES_SHOWN)
    return web.json_response(
        {
            "memory": payloads.memory(record.item),
            "versions": [payloads.version(v, notes) for v in record.versions],
            "replies": [payloads.citing(reply) for reply in replies],
        }
    )


@routes.post("/memories/{memory_id}/edit")
async def edit(request: web.Request) -> web.Response:
    """Give a memory new content as a new version, with an Undo."""
    services, owner = services_of(request)
    body = await read_body(request, EditBody)
    change = await services.memory_control.edit(
        owner, request.match_info["memory_id"], body.content
    )
    await services.announcer.tell(owner, Changed(change))
    return web.json_response(
        {"memory": payloads.memory(change.item), "change_id": change.change_id}
    )


@routes.post("/memories/{memory_id}/delete")
async def delete(request: web.Request) -> web.Response:
    """Forget a memory, with an Undo."""
    services, owner = services_of(request)
    change = await services.memory_control.forget(owner, request.match_info["memory_id"])
    await services.announcer.tell(owner, Changed(change))
    return web.json_response(
        {"memory": payloads.memory(change.item), "change_id": change.change_id}
    )


@routes.post("/memories/{memory_id}/restore")
async def restore(request: web.Request) -> web.Response:
    """Bring back a deleted memory."""
    services, owner = services_of(request)
    item = await services.memory_control.restore(owner, request.match_info["memory_id"])
    await services.announcer.tell(owner, Restored(item))
    return web.json_response({"memory": payloads.memory(item)})


async def _pin(request: web.Request, pinned: bool) -> web.Response:
    """Pin or unpin a memory."""
    services, owner = services_of(request)
    item = await services.memory_control.pin(owner, request.match_info["memory_id"], pinned)
    await services.announcer.tell(owner, Pinned(item, pinned))
    return web.json_response({"memory": payloads.memory(item)})


@routes.post("/memories/{memory_id}/pin")
async def pin(request: web.Request) -> web.Response:
    """Keep a memory in the prompt before unpinned ones."""
    return await _pin(request, True)


@routes.post("/memories/{memory_id}/unpin")
async def unpin(request: web.Request) -> web.Response:
    """Let a pinned memory take its turn again."""
    return await _pin(request, False)


@routes.post(r"/undo/{change_id:[1-9][0-9]{0,17}}")
async def undo(request: web.Request) -> web.Response:
    """Undo one logged change, once."""
    services, owner = services_of(request)
    result = await services.memory_control.undo(owner, int(request.match_info["change_id"]))
    await services.announcer.tell(owner, Undone(result))
    return web.json_response({"memory": payloads.memory(result.after)})
