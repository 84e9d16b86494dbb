"""Regexes the cases share, matched case-insensitively against replies and memories.

They are deliberately plain: a rule that needs judgement belongs in a judged check instead.
"""

# Words of saving, for a question that offers to remember ("Should I remember that...?").
SAVING = (
    r"\b(remember|save|memory|memories|store|make a note|note (of |down )?(that|this|it)"
    r"|keep (that|this|it|these|those|them|both) in mind)\b"
)
# Telling the user that it remembers, instead of just using what it knows.
ANNOUNCES_MEMORY = (
    r"\b(I remember|I recall|from (my )?memor(y|ies)|in my memory|my notes|you (told|mentioned "
    r"to) me|as you (said|mentioned)|I have (it|that|this) (noted|saved|on file))\b"
)
# A straight or a typographic apostrophe: models write both.
AP = "['\\u2019]"
# Saying it cannot do something.
CANNOT = (
    rf"\b(can(no|{AP})t|can not|unable|not able|no way (to|of)"
    rf"|don{AP}t have (a|the) (way|ability))\b"
)
# Claiming, or implying, that a message to someone else was sent.
CLAIMS_SENT = (
    rf"\b(I{AP}ve|I have|I)\s+(sent|texted|messaged|told)\b"
    rf"|\b(message|text) (is|has been|was) sent\b|\bI{AP}ll (text|message|tell) (her|him|them)\b"
)
PASSWORD_MANAGER = r"password manager|password-manager|1Password|Bitwarden|KeePass|keychain"
# Words common in French and rare in English, for a reply that must not be in French.
FRENCH = r"\b(je|vous|voici|bonjour|pour|avec|une|les|des|chiot|chien|noms?)\b"
# Common English words, for a reply that must be in English.
ENGLISH = r"\b(the|and|here|are|for|name|names)\b"
# Friday 13 or Friday 20 March 2026, in the usual ways of writing a date.
EXAM_DATE = (
    r"\b(13|20)(th)?\.?\s+(of\s+)?(March|Mar|März)\b|\b(March|Mar)\.?\s+(13|20)(th)?\b"
    r"|\b2026-03-(13|20)\b|\b(13|20)[./]0?3\b|\b0?3/(13|20)\b"
)
# In a group, telling someone to reply to the bot's message (it sees nothing else of theirs).
ASKS_FOR_REPLY = (
    r"\b(repl(y|ying|ies)|respond(ing)?)\b[^.!?\n]{0,40}\b(this|my|me|here)\b|\bhit reply\b"
)
