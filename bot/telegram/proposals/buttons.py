"""The Remember and No buttons of the model's memory questions."""

from telegram import Update
from telegram.constants import ChatType, ParseMode

from bot.agent.proposal_answers import Member, Tap, TapResult
from bot.telegram.callbacks import AnswerProposal, ToggleFact
from bot.telegram.chat.delivery import send_notices
from bot.telegram.chat.reading import place_of, query_of
from bot.telegram.context import BotContext, owner_id
from bot.telegram.memories import texts
from bot.telegram.proposals import views
from bot.telegram.ui import edit_unless_unchanged, editable, show_in_place


async def _settle(update: Update, line: str | None) -> None:
    """Take the question's buttons away, adding how it was answered (if line) to its text."""
    message = query_of(update).message
    if not editable(message):
        return  # too old to edit: the buttons stay, and a tap on them says it was answered
    text = message.text_html if line is None else f"{message.text_html}\n{line}"
    # A second tap that changes nothing is fine.
    await edit_unless_unchanged(
        message.edit_text(text, parse_mode=ParseMode.HTML, reply_markup=None)
    )


def _member(update: Update) -> Member | None:
    """Return the group member who tapped, or None in a private chat (the owner taps)."""
    chat, user = update.effective_chat, update.effective_user
    if chat is None or chat.type == ChatType.PRIVATE or user is None:
        return None
    return Member(user.id, user.full_name)


async def _tap(update: Update, context: BotContext, action: AnswerProposal) -> Tap:
    """Answer the proposal as the button says."""
    answers, owner, member = context.services.proposal_answers, owner_id(update), _member(update)
    if action.remember:
        return await answers.remember(owner, action.proposal_id, member)
    return await answers.decline(owner, action.proposal_id, member)


async def proposal_button(update: Update, context: BotContext, action: AnswerProposal) -> None:
    """Save the proposed memory on Remember (with its notice), record a No, or say why not."""
    query = query_of(update)
    tap = await _tap(update, context, action)
    match tap.result:
        case TapResult.SAVED:
            await query.answer(views.SAVED_ALERT)
            await _settle(update, views.REMEMBERED_LINE)
            await send_notices(context.bot, place_of(update), list(tap.changes))
        case TapResult.DECLINED:
            await query.answer(views.DECLINED_ALERT)
            await _settle(update, views.DECLINED_LINE)
        case TapResult.GONE:
            await query.answer(texts.STALE_BUTTON, show_alert=True)
        case TapResult.ANSWERED:
            await query.answer(views.answered_alert(tap), show_alert=True)
            await _settle(update, None)
        case TapResult.SUBJECT_TAKEN:
            await query.answer(views.subject_taken_alert(tap), show_alert=True)
            await _settle(update, views.DECLINED_LINE)
        case TapResult.EXPIRED:
            await query.answer(views.TAP_ALERTS[tap.result], show_alert=True)
            await _settle(update, views.EXPIRED_LINE)
        case TapResult.SECRET:
            await query.answer(views.TAP_ALERTS[tap.result], show_alert=True)
            await _settle(update, views.DECLINED_LINE)
        case TapResult.NOT_YOURS:
            # The question stays for the member it is about.
            await query.answer(views.TAP_ALERTS[tap.result], show_alert=True)
        case TapResult.MEMORY_OFF | TapResult.FULL:
            # Nothing is lost: the question keeps its buttons for a tap that can save.
            await query.answer(views.TAP_ALERTS[tap.result], show_alert=True)
            await send_notices(context.bot, place_of(update), list(tap.changes))
        case TapResult.TOGGLED:
            await query.answer()


async def toggle_button(update: Update, context: BotContext, action: ToggleFact) -> None:
    """Flip one fact's toggle and show the question again, or say why not."""
    query = query_of(update)
    answers = context.services.proposal_answers
    tap = await answers.toggle(owner_id(update), action.fact_id, _member(update))
    if tap.result is TapResult.TOGGLED and tap.proposal is not None:
        await query.answer()
        await show_in_place(update, context.bot, views.question(tap.proposal))
    elif tap.result is TapResult.GONE:
        await query.answer(texts.STALE_BUTTON, show_alert=True)
    elif tap.result is TapResult.ANSWERED:
        await query.answer(views.answered_alert(tap), show_alert=True)
        await _settle(update, None)
    elif tap.result is TapResult.EXPIRED:
        await query.answer(views.TAP_ALERTS[tap.result], show_alert=True)
        await _settle(update, views.EXPIRED_LINE)
    else:
        await query.answer(views.TAP_ALERTS[tap.result], show_alert=True)
