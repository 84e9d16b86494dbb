"""Give the Application the updater that serves the webhook, and the Mini App when it is on."""

import time

from bot.settings import Settings
from bot.telegram.context import BotApplication
from bot.telegram.miniapp.announce import TelegramAnnouncer
from bot.telegram.miniapp.updater import AppSite, WebServerUpdater
from bot.telegram.runtime.cooldown import Clock
from bot.webapp.access import Access, RateLimit
from bot.webapp.initdata import secret_key
from bot.webapp.server import mini_app, mini_app_endpoint
from bot.webapp.services import AppServices
from memory.models import utcnow

# Search as you type sends a request a keystroke or so: a minute's worth, then 429.
REQUESTS_PER_MINUTE = 300
# Failed sign-ins per address a minute; a forger gets no further.
REFUSALS_PER_MINUTE = 20
MINUTE = 60.0


def app_site(application: BotApplication, settings: Settings, clock: Clock) -> AppSite | None:
    """Build the Mini App on the Application's services, or None when MINI_APP_URL is unset."""
    if settings.mini_app_url is None:
        return None
    services = application.bot_data.services
    app_services = AppServices(
        memory_control=services.memory_control,
        batches=services.tidy.batches,
        reminders=services.reminders,
        default_zone=settings.timezone,
        announcer=TelegramAnnouncer(application),
        citations=services.chat.sources,
    )
    access = Access(
        key=secret_key(settings.telegram_bot_token.get_secret_value()),
        allowed=settings.allowed_user_ids,
        now=utcnow,
        per_user=RateLimit(REQUESTS_PER_MINUTE, MINUTE, clock),
        refused=RateLimit(REFUSALS_PER_MINUTE, MINUTE, clock),
    )
    path, _ = mini_app_endpoint(settings.mini_app_url)
    app = mini_app(app_services, access)
    return AppSite(path, app, settings.mini_app_listen, settings.mini_app_port)


def install(application: BotApplication, settings: Settings, clock: Clock = time.monotonic) -> None:
    """Receive updates through our server (webhook) or PTB's polling, the app beside them."""
    site = app_site(application, settings, clock)
    application.updater = WebServerUpdater(application.bot, application.update_queue, site)
