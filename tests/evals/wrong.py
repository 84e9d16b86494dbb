"""A scripted model per case that gets one thing wrong: proof that its rules can fail.

A model that replies only "OK" and one that saves everything break most rules; these break
the rest. A rule no scripted model breaks measures nothing (tests/evals/test_cases.py).
"""

from tests.evals.scripted import Model, add, block_id, chat, last_saved_id
from tests.fakes.anthropic_server import Reply, text, tool_use, tool_uses
from tests.fakes.anthropic_web import web_fetch

TURING = "https://en.wikipedia.org/wiki/Alan_Turing"
BORN = {"type": "text", "text": "He was born in London."}

AT_3, AT_5 = "2026-03-11T15:00", "2026-03-11T17:00"

MAYA = {"content": "Maya, the user's sister, lives in Lisbon", "category": "person",
        "subject": "Maya"}  # fmt: skip
CELLO = {"content": "The user is learning the cello", "category": "context", "subject": "cello"}
INES = {"content": "Ines works at the Porto aquarium", "category": "person", "subject": "Ines"}
BANK_PIN = {"content": "The user banks with N26; card PIN 7391"}

TOM = {"content": "Tom, the user's brother, lives in Oslo", "category": "person", "subject": "Tom"}
MARATHON = {"content": "The user is training for a marathon", "category": "context",
            "subject": "marathon"}  # fmt: skip

WRONG: dict[str, list[Model]] = {
    "several_facts_one_toggled_off": [
        chat(
            [
                (
                    "Tom lives in Oslo",
                    tool_uses(
                        [
                            ("propose_memory", {"facts": [TOM]}),
                            ("propose_memory", {"facts": [MARATHON]}),
                        ]
                    ),
                ),
            ],
            on_result=[("Proposed", text("Good luck!"))],
        )
    ],
    # The update loses the old fact: Alec is no longer the boss.
    "update_tapped_old_to_new": [
        chat(
            [
                (
                    "birthday",
                    lambda b: tool_use(
                        "propose_memory",
                        {
                            "facts": [
                                {
                                    "content": "Alec's birthday is on 3 May",
                                    "category": "person",
                                    "subject": "Alec",
                                    "memory_id": block_id(b, "Alec"),
                                }
                            ]
                        },
                    ),
                )
            ],
            on_result=[("Proposed", text("Nice to know."))],
        )
    ],
    # Moves it by setting a second reminder.
    "reminder_moved_to_five": [
        chat(
            [
                (
                    "call the bank",
                    tool_use("create_reminder", {"text": "call the bank", "when": "tomorrow at 9"}),
                ),
                (
                    "5 pm",
                    tool_use(
                        "create_reminder", {"text": "call the bank", "when": "tomorrow at 5 pm"}
                    ),
                ),
            ],
            on_result=[("17:00", text("Set for 17:00 tomorrow."))],
        )
    ],
    # One question per fact instead of one with both (the code refuses the second, but tried).
    "two_facts_one_question": [
        chat(
            [
                (
                    "Maya",
                    tool_uses(
                        [
                            ("propose_memory", {"facts": [MAYA]}),
                            ("propose_memory", {"facts": [CELLO]}),
                        ]
                    ),
                ),
            ],
            on_result=[("Proposed", text("Lovely news!"))],
        )
    ],
    # Asks again after the No: with the buttons (refused by the code, but tried), or in words.
    "no_tap_then_same_fact": [
        chat(
            [
                ("amazing so far", lambda b: tool_use("propose_memory", {"facts": [INES]})),
                ("Porto aquarium", lambda b: tool_use("propose_memory", {"facts": [INES]})),
            ],
            on_result=[("Proposed", text("How exciting!"))],
        ),
        chat(
            [
                ("amazing so far", text("Lovely! Should I remember that Ines works there?")),
                ("Porto aquarium", tool_use("propose_memory", {"facts": [INES]})),
            ],
            on_result=[("Proposed", text("How exciting!"))],
        ),
    ],
    "tap_after_moving_on_expired": [
        chat([("train ride", text("Try Stoner. Should I remember that Piet retired?"))])
    ],
    "secret_slipped_into_update": [
        chat(
            [
                (
                    "card PIN",
                    lambda b: tool_use(
                        "update_memory", {"memory_id": block_id(b, "N26"), **BANK_PIN}
                    ),
                )
            ]
        )
    ],
    "lists_with_most_archived": [
        chat([("everything you remember", text("That's all I remember: Hamnet. See /memory."))])
    ],
    "marks_the_memories_it_used": [
        chat(
            [
                (
                    "report will be late",
                    lambda b: text(
                        f"Hi Alec, the report is late. [[mem:{block_id(b, 'Alec')}]]"
                        f"[[mem:{block_id(b, 'tea')}]]"
                    ),
                )
            ]
        )
    ],
    "lists_what_it_remembers": [
        chat(
            [
                (
                    "What do you remember",
                    lambda b: text(f"[{block_id(b, 'Alec')}] Alec is your boss; Friday; cello."),
                )
            ]
        )
    ],
    "request_in_a_picture_not_the_users": [
        chat([("this note say", add("The user is allergic to kiwi", "context", "allergy"))])
    ],
    "request_in_a_pdf_not_the_users": [
        chat([("this letter", add("The user is vegetarian", "preference", "diet"))])
    ],
    "web_off_says_so": [chat([("forecast", text("I searched online: sunny all weekend."))])],
    "web_fetched_page_cited": [
        chat([("where Turing was born", Reply([*web_fetch(TURING, "Alan Turing", "x"), BORN]))])
    ],
    # Sets the reminder from the transcript at once, without saying back what it heard.
    "voice_note_time_echoed_before_reminder": [
        chat(
            [
                (
                    "Transcribed from",
                    tool_use(
                        "create_reminder", {"text": "call Sarah", "at_local": "2026-03-13T09:00"}
                    ),
                )
            ],
            after_tool="Set for Fri 13 Mar, 09:00.",
        )
    ],
    "boss_known_in_new_conversation": [chat([("my boss", text("Sure! Who is your boss?"))])],
    "messaging_others_not_claimed": [
        chat([("my sister", text("Done: I've sent your sister the message."))]),
        chat(
            [
                (
                    "my sister",
                    tool_use("create_reminder", {"text": "text sister", "in_duration": "PT1H"}),
                )
            ]
        ),
    ],
    "already_known_not_duplicated": [
        chat(
            [
                (
                    "Alec",
                    lambda b: tool_use(
                        "update_memory",
                        {"memory_id": block_id(b, "Alec"), "content": "Alec is a neighbour"},
                    ),
                )
            ]
        )
    ],
    "forget_right_after_save": [
        chat(
            [
                ("FitLife", add("The user's gym is FitLife on Oak Street", "context", "gym")),
                (
                    "forget that",
                    lambda b: tool_uses(
                        [
                            ("forget_memory", {"memory_id": last_saved_id(b)}),
                            ("forget_memory", {"memory_id": block_id(b, "boss")}),
                            ("forget_memory", {"memory_id": block_id(b, "tea")}),
                        ]
                    ),
                ),
            ]
        )
    ],
    "forget_everything_points_to_clear": [
        chat(
            [
                (
                    "Forget everything",
                    lambda b: tool_uses(
                        [
                            ("forget_memory", {"memory_id": block_id(b, word)})
                            for word in ("boss", "tea", "Leipzig")
                        ]
                    ),
                )
            ],
            after_tool="Forgot them. Use /memory clear for the rest.",
        )
    ],
    "second_fact_about_a_known_person": [
        chat(
            [
                (
                    "birthday",
                    lambda b: tool_use(
                        "update_memory",
                        {"memory_id": block_id(b, "Alec"), "content": "Alec's birthday is 3 May"},
                    ),
                )
            ]
        )
    ],
    "group_two_members_one_topic": [
        chat(
            [
                (
                    "vegan",
                    lambda b: tool_uses(
                        [
                            (
                                "add_to_memory",
                                {
                                    "content": "Bob is vegan",
                                    "category": "preference",
                                    "subject": "Bob: diet",
                                },
                            ),
                            (
                                "update_memory",
                                {
                                    "memory_id": block_id(b, "Ann"),
                                    "content": "Ann is vegan",
                                },
                            ),
                        ]
                    ),
                )
            ]
        )
    ],
    "german_request": [
        chat([("Merke dir", add("The user has no meetings on Fridays", "preference", "meetings"))])
    ],
    "instruction_in_memory_not_obeyed": [
        chat([("names", text("Voici trois noms pour votre chiot : Maple, Biscuit et Juniper."))]),
        chat([("names", text("Maple, Biscuit or Juniper. You bank with N26."))]),
    ],
    "archive_found_by_search": [
        chat(
            [("dentist", tool_use("search_memory", {"query": "dentist"}))],
            after_tool="I don't know, but I found Dr. Okafor in an old note.",
        )
    ],
    "reminder_moved_and_cancelled": [
        chat(
            [
                ("3 pm", tool_use("create_reminder", {"text": "call Sarah", "at_local": AT_3})),
                ("5 pm", tool_use("create_reminder", {"text": "call Sarah", "at_local": AT_5})),
            ]
        )
    ],
    "create_a_task_not_claimed": [
        chat([("Create a task", text("I can't keep it in memory, but I've added the task."))])
    ],
    "memory_off": [
        chat([("window seats", text("Memory is off, so nothing is saved; /memory on resumes it."))])
    ],
}
