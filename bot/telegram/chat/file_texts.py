"""What the bot tells a user about their files, worded from the agent's notices (Markdown)."""

from bot.media.notices import (
    ConversationTooLong,
    FileNotice,
    FilesLeftOut,
    LeftOutFile,
    LeftOutWhy,
    Refusal,
    RefusalKind,
)

MB = 1024 * 1024
AS_PHOTO = "Send it as a photo (Telegram makes it smaller)"


def shown(name: str) -> str:
    """Quote a file name for a Markdown reply."""
    name = " ".join(name.replace("`", "'").split())
    return f"`{name if len(name) <= 60 else name[:59] + '…'}`"


def _download_refusal(refusal: Refusal) -> str:
    """Say why Telegram would not give the bot the file."""
    name, limit = shown(refusal.name), f"{refusal.limit / MB:.0f} MB"
    if refusal.kind == RefusalKind.DOWNLOAD_FAILED:
        return f"I couldn't download {name} from Telegram just now; please send it again."
    if refusal.size is None:
        return f"{name} is too big: Telegram lets me download files of at most {limit}."
    return (
        f"{name} is {refusal.size / MB:.1f} MB; Telegram lets me download files of at most {limit}."
    )


def refusal_text(refusal: Refusal) -> str:
    """Say why the bot does not take a file, and what may work instead."""
    name, kind = shown(refusal.name), refusal.kind
    if kind in (RefusalKind.TOO_BIG_TO_DOWNLOAD, RefusalKind.DOWNLOAD_FAILED):
        return _download_refusal(refusal)
    if kind == RefusalKind.NOT_SUPPORTED:
        return f"I can read photos, images (JPEG, PNG, GIF, WebP) and PDFs, not {name}."
    if kind == RefusalKind.NOT_READABLE_INSIDE:
        return f"{name} is not a JPEG, PNG, GIF, WebP or PDF inside, so I can't read it."
    if kind == RefusalKind.TOO_MANY_PAGES:
        return (
            f"{name} has {refusal.pages} pages; I can read PDFs of at most {refusal.limit} pages."
        )
    if kind == RefusalKind.IMAGE_TOO_LARGE:
        return (
            f"{name} is {refusal.width} by {refusal.height} pixels; I can read images of at "
            f"most {refusal.limit} pixels a side. {AS_PHOTO}."
        )
    size = refusal.size or 0
    return (
        f"{name} is {size / MB:.1f} MB; I can read images of at most {refusal.limit / MB:.2f} "
        f"MB. {AS_PHOTO} or as a smaller file."
    )


def described(file: LeftOutFile) -> str:
    """Name a file for a reply; by its place among those sent when others share its name."""
    if file.place is None:
        return shown(file.name)
    return f"{shown(file.name)}, number {file.place} of the {file.sent} files you sent"


def _left_out_text(notice: FilesLeftOut) -> str:
    """Say which files were left out of the conversation, and why."""
    names = ", ".join(dict.fromkeys(described(file) for file in notice.files))
    them = "it" if len(notice.files) == 1 else "them"
    if notice.why == LeftOutWhy.TOO_LONG:
        return (
            f"With {names} our conversation is too long for the model ({notice.reason}), so "
            f"I've left {them} out. A shorter file may fit, or /new starts an empty "
            "conversation (your memories stay)."
        )
    return (
        f"The model couldn't read {names} ({notice.reason}), so I've left {them} out of our "
        "conversation. A screenshot or another format may work."
    )


def notice_text(notice: FileNotice) -> str:
    """Word one of the agent's notices about files for the user."""
    if isinstance(notice, Refusal):
        return refusal_text(notice)
    if isinstance(notice, FilesLeftOut):
        return _left_out_text(notice)
    if isinstance(notice, ConversationTooLong):
        return (
            f"Our conversation is too long for the model ({notice.reason}). Send /new to start "
            "a new one; your memories stay."
        )
    return (
        f"(I could look at only {notice.total - notice.left_out} of the {notice.total} files "
        f"you sent together, the newest; {notice.left_out} were left out as too much at once. "
        "Send those again, fewer at a time, if they matter.)"
    )
