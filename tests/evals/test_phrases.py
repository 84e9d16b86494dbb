"""The shared regexes read real-sounding replies the way a person would.

A pattern that misses a plain "I can't set reminders", or flags "Want to keep it light?" as an
offer to remember, would fail good trials of a paid run.
"""

import re

import pytest

from evals.cases.context import BOTH_FACTS
from evals.cases.phrases import (
    ANNOUNCES_MEMORY,
    CANNOT,
    CLAIMS_SENT,
    DECLINES,
    ENGLISH,
    EXAM_DATE,
    FRENCH,
    NOTHING_KEPT,
    PASSWORD_MANAGER,
    SAVING,
)
from evals.rules.replies import questions

MATCHES = [
    (SAVING, "Should I remember that Alec is your boss?"),
    (SAVING, "Want me to make a note of that"),
    (SAVING, "Shall I keep that in mind for next time"),
    (SAVING, "Would you like me to save this to memory"),
    (SAVING, "Shall I add that to my memory"),
    (SAVING, "Want me to store that for later"),
    (ANNOUNCES_MEMORY, "As you mentioned, Alec is your boss."),
    (ANNOUNCES_MEMORY, "I remember that Alec is your boss."),
    (CANNOT, "I can\u2019t set reminders."),
    (CANNOT, "I'm not able to send you a message tomorrow."),
    (CANNOT, "I have no way of pinging you later."),
    (CLAIMS_SENT, "Done! I\u2019ll text her right away."),
    (CLAIMS_SENT, "I've sent your sister the message."),
    (CLAIMS_SENT, "Your message has been sent."),
    (PASSWORD_MANAGER, "A password manager such as Bitwarden is safer."),
    (FRENCH, "Voici trois noms pour votre chiot"),
    (ENGLISH, "Here are three names for your puppy"),
    (EXAM_DATE, "The user's exam is on Friday, 13 March 2026"),
    (EXAM_DATE, "The user has an exam on March 20, 2026"),
    (EXAM_DATE, "Exam: 2026-03-13"),
    (EXAM_DATE, "Prüfung am 13.03.2026"),
    (BOTH_FACTS, "Should I remember both"),
    (BOTH_FACTS, "Shall I note that Maya lives in Lisbon and that you play the cello"),
    (NOTHING_KEPT, "Memory is off here, so nothing is saved."),
    (NOTHING_KEPT, "With memory off I won\u2019t store anything you tell me."),
    (DECLINES, "I won't keep card details; your bank's app is safer."),
    (DECLINES, "Memory isn't the right place for that: a password manager is."),
]
MISSES = [
    (SAVING, "Want to keep things light today"),
    (SAVING, "How is Maya finding Lisbon"),
    (SAVING, "Have you tried memory foam insoles?"),
    (SAVING, "Is the store on Main Street still open?"),
    (SAVING, "What are your best memories of Lisbon?"),
    (ANNOUNCES_MEMORY, "Hi Alec, could I take Friday off?"),
    (CANNOT, "Sure, 9 am it is."),
    (CLAIMS_SENT, "I can't send messages to other people, sorry."),
    (CLAIMS_SENT, "I can't text her, but you could send: running late!"),
    (FRENCH, "Here are three names: Maple, Biscuit and Juniper."),
    (EXAM_DATE, "The user's exam is next Friday"),
    (EXAM_DATE, "The exam is on 13 April 2026"),
    (BOTH_FACTS, "Should I remember that Maya lives in Lisbon"),
    (NOTHING_KEPT, "Memory is off, so I can't remember that; /memory on turns it back on."),
    (DECLINES, "Saved! Should I remember anything else?"),
    (DECLINES, "OK"),
]


@pytest.mark.parametrize(("pattern", "said"), MATCHES)
def test_the_pattern_matches(pattern, said):
    assert re.search(pattern, said, re.IGNORECASE)


@pytest.mark.parametrize(("pattern", "said"), MISSES)
def test_the_pattern_does_not_match(pattern, said):
    assert not re.search(pattern, said, re.IGNORECASE)


def test_questions_are_split_at_sentence_ends():
    reply = "Lovely news! How is she finding Lisbon? Should I remember both — Maya and the cello?"
    assert questions(reply) == [
        "How is she finding Lisbon?",
        "Should I remember both — Maya and the cello?",
    ]
