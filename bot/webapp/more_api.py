"""The API of reminders (cancel, skip next), batches (Undo all, Redo all) and the export."""

from aiohttp import web

from bot.webapp import payloads
from bot.webapp.events import BatchReverted, ReminderChanged
from bot.webapp.services import services_of
from memory.batches.values import BatchKind
from memory.models import utcnow

UPCOMING_SHOWN = 100
routes = web.RouteTableDef()
NUMBER = "{number:[1-9][0-9]{0,17}}"


@routes.get("/reminders")
async def reminders(request: web.Request) -> web.Response:
    """Return the upcoming reminders with their next times in the owner's zone."""
    services, owner = services_of(request)
    zone = await services.zone(owner)
    upcoming = await services.reminders.store.upcoming(owner, UPCOMING_SHOWN)
    return web.json_response(
        {"zone": str(zone), "reminders": [payloads.reminder(r, zone) for r in upcoming]}
    )


@routes.post(f"/reminders/{NUMBER}/cancel")
async def cancel_reminder(request: web.Request) -> web.Response:
    """Cancel a reminder for good."""
    services, owner = services_of(request)
    store = services.reminders.store
    record = await store.cancel(owner, int(request.match_info["number"]))
    services.reminders.alarm.set()
    await services.announcer.tell(owner, ReminderChanged(record, cancelled=True))
    return web.json_response({"reminder": payloads.reminder(record, await services.zone(owner))})


@routes.post(f"/reminders/{NUMBER}/skip")
async def skip_reminder(request: web.Request) -> web.Response:
    """Skip a reminder's next time: a repeat moves to the one after, a one-off ends."""
    services, owner = services_of(request)
    store = services.reminders.store
    record = await store.get(owner, int(request.match_info["number"]))
    if record.next_fire_at is not None:
        following = record.schedule.next_after(record.next_fire_at)
        record = await store.move_next(owner, record.id, following.at if following else None)
        services.reminders.alarm.set()
        await services.announcer.tell(owner, ReminderChanged(record, cancelled=False))
    return web.json_response({"reminder": payloads.reminder(record, await services.zone(owner))})


@routes.get("/batches")
async def batches(request: web.Request) -> web.Response:
    """Return the tidy passes, imports and Undo alls applied, newest first, with their lines."""
    services, owner = services_of(request)
    applied = await services.batches.applied(owner)
    return web.json_response({"batches": [payloads.batch(summary) for summary in applied]})


@routes.post(f"/batches/{NUMBER}/revert")
async def revert_batch(request: web.Request) -> web.Response:
    """Undo all of a batch; for an Undo all's own batch, that is Redo all."""
    services, owner = services_of(request)
    batch_id = int(request.match_info["number"])
    redo = (await services.batches.find(owner, batch_id)).kind is BatchKind.REVERT
    result = await services.batches.revert(owner, batch_id)
    await services.memory_control.changed(owner)
    await services.announcer.tell(owner, BatchReverted(result, redo))
    return web.json_response(
        {
            "batch_id": result.batch_id,
            "restored": result.restored,
            "left_alone": [payloads.memory(item) for item in result.left_alone],
        }
    )


@routes.get("/export")
async def export(request: web.Request) -> web.Response:
    """Return every memory as a download: JSON with all versions, or Markdown (format=md)."""
    services, owner = services_of(request)
    markdown = request.query.get("format") == "md"
    data = await services.memory_control.export_download(owner, markdown)
    name = f"memories-{utcnow():%Y-%m-%d}.{'md' if markdown else 'json'}"
    return web.Response(
        body=data,
        content_type="text/markdown" if markdown else "application/json",
        charset="utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
