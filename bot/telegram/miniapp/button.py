"""The Open button that starts the Mini App from /memory and /reminders in a private chat."""

from telegram import Update
from telegram.constants import ChatType

from bot.settings import Settings
from bot.telegram.ui import Button, View
from bot.webapp.server import mini_app_endpoint

OPEN_LABEL = "Open"


def with_open_button(view: View, update: Update, settings: Settings, tab: str) -> View:
    """Add the app's Open button to a private chat's view when the app is configured."""
    chat = update.effective_chat
    # Telegram allows web_app buttons in private chats only.
    if settings.mini_app_url is None or chat is None or chat.type != ChatType.PRIVATE:
        return view
    _, url = mini_app_endpoint(settings.mini_app_url)
    # Telegram puts the signed initData in the fragment, so the tab travels in the query.
    button = Button(OPEN_LABEL, "", web_app=f"{url}?tab={tab}")
    return View(view.text, (*view.buttons, (button,)))
