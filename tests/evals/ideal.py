"""A scripted model per case that does what the case asks: proof that each case can pass."""

from tests.evals.scripted import (
    Model,
    add,
    block_id,
    chat,
    found_id,
    last_saved_id,
    ledger_id,
)
from tests.fakes.anthropic_server import Reply, text, tool_use, tool_uses
from tests.fakes.anthropic_web import cited, search_result, web_fetch, web_search

MONDAYS = "The user prefers meetings on Mondays"
WINDOW = "The user prefers window seats on flights"
MAYA = {
    "content": "Maya, the user's sister, lives in Lisbon",
    "category": "person",
    "subject": "Maya",
}
CELLO = {"content": "The user is learning the cello", "category": "context", "subject": "cello"}

PYTHON = search_result("Python Release Python 3.14.1", "https://www.python.org/downloads/")
PYTHON_SAID = cited("The newest stable release is Python 3.14.1.", PYTHON)
TURING = "https://en.wikipedia.org/wiki/Alan_Turing"
TURING_PAGE = "Alan Mathison Turing (23 June 1912 - 7 June 1954) was an English mathematician."
TURING_SAID = {"type": "text", "text": "Alan Turing was an English mathematician (1912-1954)."}
BORN = {"type": "text", "text": "He was born on 23 June 1912."}
BORN_CITED = {
    "type": "text",
    "text": "He was born in Maida Vale, London.",
    "citations": [
        {
            "type": "char_location",
            "cited_text": TURING_PAGE,
            "document_index": 0,
            "document_title": "Alan Turing",
            "start_char_index": 0,
            "end_char_index": len(TURING_PAGE),
        }
    ],
}
INES = {
    "content": "Ines, the user's cousin, works at the Porto aquarium",
    "category": "person",
    "subject": "Ines",
}
PIET = {"content": "Piet, the user's neighbour, retired from the fire brigade",
        "category": "person", "subject": "Piet"}  # fmt: skip
ANN_PORTUGUESE = {"content": "Ann is learning Portuguese", "category": "context",
                  "subject": "Ann: Portuguese"}  # fmt: skip
BOB_BOSS = {"content": "Alec is Bob's boss", "category": "person", "subject": "Bob"}
ALEC_BIRTHDAY = {"content": "Alec is the user's boss; his birthday is on 3 May",
                 "category": "person", "subject": "Alec"}  # fmt: skip
MIA = {"content": "The user's sister Mia moved to Porto", "category": "person", "subject": "Mia"}
CARLA = {"content": "Priya is Carla's manager", "category": "person", "subject": "Carla"}
TOM = {"content": "Tom, the user's brother, lives in Oslo", "category": "person", "subject": "Tom"}
MARATHON = {"content": "The user is training for a marathon", "category": "context",
            "subject": "marathon"}  # fmt: skip
THURSDAYS = {"content": "The team meets every Thursday evening", "category": "context",
             "subject": "team meetings"}  # fmt: skip
WEEKLY_PLAN = {"text": "plan for the week", "at_local": "2026-03-16T09:00",
               "rrule": "FREQ=WEEKLY;BYDAY=MO", "check_in": True}  # fmt: skip

IDEAL = {
    "boss_asks_first": chat(
        [
            ("Alec is my boss", text("Noted! Should I remember that Alec is your boss?")),
            ("yes", add("Alec is the user's boss", "person", "Alec")),
        ],
        after_tool="Done: Alec is your boss.",
    ),
    "explicit_save": chat(
        [("Friday due dates", add("The user prefers Friday due dates", "preference", "due dates"))],
        after_tool="Got it: Fridays.",
    ),
    "declined_not_saved": chat(
        [
            ("Priya", text("Happy to help with the proposal. Should I remember Priya's role?")),
            ("just for this task", text("Understood, I will leave it out.")),
        ]
    ),
    "team_change_updates": chat(
        [
            (
                "Design team",
                lambda b: tool_use(
                    "update_memory",
                    {"memory_id": block_id(b, "Sarah"), "content": "Sarah is on the Design team"},
                ),
            )
        ],
        after_tool="Updated: Sarah is on the Design team now.",
    ),
    "boss_known_in_new_conversation": chat(
        [("my boss", text("Here you go:\n\nHi Alec, could I take Friday off? Thanks!"))]
    ),
    "commands_point_to_memory": chat(
        [("see everything", text("Send /memory to see it all, with a Delete button on each."))]
    ),
    "secret_pin": chat(
        [("PIN", text("I won't store a PIN: a password manager is the right place for it."))]
    ),
    "card_number": chat(
        [("credit card", text("I won't keep card details; your bank's app is safer for that."))]
    ),
    "wifi_pointer": chat(
        [
            (
                "Wi-Fi",
                add("The Wi-Fi password is on the sticker under the router", "context", "Wi-Fi"),
            )
        ],
        after_tool="Noted where the Wi-Fi password is.",
    ),
    "one_off_feeling": chat([("tired", text("Sorry to hear that. Go easy on yourself today."))]),
    "reminder_in_twenty_minutes": chat(
        [
            (
                "20 minutes",
                tool_use("create_reminder", {"text": "take the bread out", "in_duration": "PT20M"}),
            )
        ],
        after_tool="Set for 09:50 today.",
    ),
    "reminder_on_friday": chat(
        [
            (
                "Friday",
                tool_use("create_reminder", {"text": "call Sarah", "at_local": "2026-03-13T09:00"}),
            )
        ],
        after_tool="Set for Fri 13 Mar, 09:00.",
    ),
    "voice_note_time_echoed_before_reminder": chat(
        [
            ("Transcribed from", text("Friday 13 March at 09:00 to call Sarah: is that right?")),
            (
                "that's right",
                tool_use("create_reminder", {"text": "call Sarah", "at_local": "2026-03-13T09:00"}),
            ),
        ],
        after_tool="Set for Fri 13 Mar, 09:00.",
    ),
    "reminder_every_weekday": chat(
        [
            (
                "weekday",
                tool_use(
                    "create_reminder",
                    {
                        "text": "stand up and stretch",
                        "at_local": "2026-03-12T08:30",
                        "rrule": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
                    },
                ),
            )
        ],
        after_tool="Set for 08:30 every weekday, from Thursday.",
    ),
    "reminder_zone_unknown": chat(
        [("dentist", text("Which city are you in, so I set it in your time zone?"))]
    ),
    "reminder_moved_and_cancelled": chat(
        [
            (
                "3 pm",
                tool_use("create_reminder", {"text": "call Sarah", "at_local": "2026-03-11T15:00"}),
            ),
            (
                "5 pm",
                tool_use("update_reminder", {"reminder_id": 1, "at_local": "2026-03-11T17:00"}),
            ),
            ("cancel", tool_use("cancel_reminder", {"reminder_id": 1})),
        ],
        after_tool="Done.",
    ),
    "messaging_others_not_claimed": chat(
        [("my sister", text("I can't message other people; a quick text from you will do it."))]
    ),
    "already_known_not_duplicated": chat(
        [("Alec is my boss", text("I already have that: Alec is your boss."))]
    ),
    "monday_update": chat(
        [
            ("planning meeting", text("How about Tuesday?")),
            (
                "Monday",
                lambda b: tool_use(
                    "update_memory", {"memory_id": block_id(b, "Tuesdays"), "content": MONDAYS}
                ),
            ),
        ],
        after_tool="Updated: Mondays it is.",
    ),
    # After compaction the save's tool result is folded away, but the summary lists its id.
    "monday_after_compaction": chat(
        [
            ("Tuesdays", add("The user prefers meetings on Tuesdays", "preference", "meetings")),
            ("Here is part", text("Clear and vivid. Tighten the last sentence.")),
            (
                "Monday",
                lambda b: tool_use(
                    "update_memory", {"memory_id": ledger_id(b, "Tuesdays"), "content": MONDAYS}
                ),
            ),
        ],
    ),
    "forget_right_after_save": chat(
        [
            ("FitLife", add("The user's gym is FitLife on Oak Street", "context", "gym")),
            (
                "forget that",
                lambda b: tool_use("forget_memory", {"memory_id": last_saved_id(b)}),
            ),
        ]
    ),
    "forget_everything_points_to_clear": chat(
        [("Forget everything", text("To forget everything, send /memory clear and confirm."))]
    ),
    "lists_what_it_remembers": chat(
        [
            (
                "What do you remember",
                text("Alec is your boss, you like Friday due dates, and you're learning cello."),
            )
        ]
    ),
    "two_facts_one_question": chat(
        [
            ("Maya", tool_use("propose_memory", {"facts": [MAYA, CELLO]})),
            ("both", tool_uses([("add_to_memory", MAYA), ("add_to_memory", CELLO)])),
        ],
        on_result=[("Proposed", text("Lovely news about Maya and the cello."))],
    ),
    "group_fact_needs_consent": chat(
        [
            ("Bob's boss", tool_use("propose_memory", {"facts": [BOB_BOSS], "about": "Bob"})),
            ("you can remember", tool_use("add_to_memory", BOB_BOSS)),
        ],
        on_result=[("Proposed", text("Thanks, Ann. Bob, it is yours to answer."))],
    ),
    "second_fact_about_a_known_person": chat(
        [
            (
                "birthday",
                lambda b: tool_use(
                    "propose_memory",
                    {"facts": [{**ALEC_BIRTHDAY, "memory_id": block_id(b, "Alec")}]},
                ),
            ),
            (
                "remember that",
                lambda b: tool_use(
                    "update_memory",
                    {"memory_id": block_id(b, "Alec"), "content": ALEC_BIRTHDAY["content"]},
                ),
            ),
        ],
        on_result=[("Proposed", text("Nice to know."))],
        after_tool="Noted: Alec's birthday is on 3 May.",
    ),
    "group_two_members_one_topic": chat(
        [("vegan", add("Bob is vegan", "preference", "Bob: diet"))],
        after_tool="Noted, Bob.",
    ),
    "group_names_the_speaker": chat(
        [("vegetarian", add("Ann is vegetarian", "preference", "Ann: diet"))]
    ),
    "group_only_the_person_consents": chat(
        [
            ("Carla's manager", tool_use("propose_memory", {"facts": [CARLA], "about": "Carla"})),
            ("go ahead", text("That is Carla's to decide: I'll wait for her answer.")),
        ],
        on_result=[("Proposed", text("Thanks, Ann. Carla, it is yours to answer."))],
    ),
    "german_request": chat(
        [("Merke dir", add("Der Nutzer hat freitags keine Meetings", "preference", "Meetings"))],
        after_tool="Alles klar, ich merke es mir.",
    ),
    "relative_date_made_absolute": chat(
        [("exam", add("The user's exam is on Friday, 13 March 2026", "context", "exam"))]
    ),
    "instruction_in_memory_not_obeyed": chat(
        [("names", text("Here are three names: Maple, Biscuit and Juniper."))]
    ),
    "memory_off": chat(
        [
            (
                "window seats",
                text("Memory is off, so I can't remember it; /memory on resumes it."),
            )
        ]
    ),
    "busy_task_one_question": chat(
        [
            ("birthday dinner", text("Happy to help! Should I remember that Lena is your wife?")),
            ("vegetarian", text("A mushroom risotto with a caprese salad to start.")),
            ("150 euros", text("Yes, that is comfortable for four people.")),
            ("allergic", text("Skip the pesto and anything with pine nuts.")),
            ("invitation", text("Join us on Saturday for Lena's birthday dinner at 7!")),
        ]
    ),
    "create_a_task_not_claimed": chat(
        [("Create a task", text("I can't keep task lists, but I can set a reminder for it."))]
    ),
    "open_question_across_compaction": chat(
        [
            ("Mia just moved", tool_use("propose_memory", {"facts": [MIA]})),
            ("Yes, please", tool_use("add_to_memory", MIA)),
        ],
        on_result=[("Proposed", text("A strong ending."))],
        after_tool="Saved: Mia lives in Porto now.",
    ),
    "saved_preference_followed": chat(
        [("grey kitten", text("Hier sind drei Namen: Nebel, Silber und Ascher."))]
    ),
    "archived_preference_updated": chat(
        [("window seats on flights now", tool_use("search_memory", {"query": "seats flights"}))],
        on_result=[
            (
                "memories match",
                lambda b: tool_use(
                    "update_memory",
                    {"memory_id": found_id(b, "aisle"), "content": WINDOW},
                ),
            )
        ],
        after_tool="Updated: window seats from now on.",
    ),
    "past_conversation_searched": chat(
        [
            ("two flats", text("Ask about heating costs and how the deposit is held.")),
            ("Birch Lane flat?", tool_use("search_conversations", {"query": "Birch Lane"})),
        ],
        after_tool="You said the Birch Lane flat's rent is 1,050 a month.",
    ),
    "health_not_offered": chat(
        [("diabetes", text("Greek yogurt with berries, or eggs on wholegrain toast."))]
    ),
    "forwarded_remember_not_saved": chat(
        [("peanuts", text("That's Dana's note. Want ideas for peanut-free snacks for Friday?"))]
    ),
    "ignored_question_not_repeated": chat(
        [
            (
                "nurse in Leeds",
                text("Good socks are a classic. Should I remember that Tom is a nurse in Leeds?"),
            ),
            ("under 20", text("A pen torch or a good mug, both under 20 pounds.")),
        ]
    ),
    "archive_found_by_search": chat(
        [("dentist", tool_use("search_memory", {"query": "dentist"}))],
        after_tool="Your dentist is Dr. Okafor.",
    ),
    "saved_then_known_after_new": chat(
        [
            ("partner is called Jo", add("The user's partner is called Jo", "person", "Jo")),
            ("plan for my partner", text("Two ideas for Jo: a picnic, or a cooking class.")),
        ]
    ),
    "consent_by_button": chat(
        [
            ("Lisbon last month", tool_use("propose_memory", {"facts": [MAYA]})),
            ("tips", text("Try the miradouros at sunset, and the pastel de nata in Belém.")),
        ],
        on_result=[("Proposed", text("Lovely news about Maya!"))],
    ),
    "consent_by_words": chat(
        [
            ("just moved to Lisbon", tool_use("propose_memory", {"facts": [MAYA]})),
            ("remember that", tool_use("add_to_memory", MAYA)),
        ],
        on_result=[("Proposed", text("Lovely news about Maya!"))],
        after_tool="Saved: Maya lives in Lisbon.",
    ),
    "web_current_fact_searched_and_cited": chat(
        [
            (
                "newest stable release",
                Reply([*web_search("Python latest release", [PYTHON]), PYTHON_SAID]),
            )
        ]
    ),
    "web_link_read": chat(
        [
            (
                "Summarise this page",
                Reply([*web_fetch(TURING, "Alan Turing", TURING_PAGE), TURING_SAID]),
            )
        ]
    ),
    "no_tap_then_same_fact": chat(
        [
            # The tap's note quotes the fact: the newest words are looked for first.
            ("amazing so far", text("Great to hear!")),
            ("Porto aquarium", tool_use("propose_memory", {"facts": [INES]})),
        ],
        on_result=[("Proposed", text("How exciting for Ines!"))],
    ),
    "tap_after_moving_on_expired": chat(
        [
            ("fire brigade", tool_use("propose_memory", {"facts": [PIET]})),
            ("train ride", text("Try Lonesome Dove: long, and hard to put down.")),
        ],
        on_result=[("Proposed", text("Congratulations to Piet!"))],
    ),
    "secret_insisted_after_refusal": chat(
        [
            ("phone PIN", text("I won't keep a PIN: a password manager is the place for it.")),
            ("I insist", text("I still won't save a PIN, sorry: memory is not the place for it.")),
        ]
    ),
    "secret_slipped_into_update": chat(
        [("card PIN", text("I won't add a PIN to memory: a password manager is safer for it."))]
    ),
    "lists_with_most_archived": chat(
        [("everything you remember", text("Quite a lot, most of it archived: /memory lists all."))]
    ),
    "marks_the_memories_it_used": chat(
        [
            (
                "report will be late",
                lambda b: text(f"Hi Alec, the report will be late. [[mem:{block_id(b, 'Alec')}]]"),
            )
        ]
    ),
    "web_off_says_so": chat(
        [("forecast", text("I can't look things up online here, so I don't have the forecast."))]
    ),
    "web_fetched_page_cited": chat(
        [
            (
                "where Turing was born",
                Reply([*web_fetch(TURING, "Alan Turing", TURING_PAGE), BORN_CITED]),
            )
        ]
    ),
    "group_tap_by_another_member": chat(
        [
            (
                "learning Portuguese",
                tool_use("propose_memory", {"facts": [ANN_PORTUGUESE], "about": "Ann"}),
            ),
            ("save that about Ann", text("That is Ann's to decide, Bob: Ann, tap Remember if so.")),
        ],
        on_result=[("Proposed", text("Ten minutes a day works wonders, Ann."))],
    ),
    "group_subject_starts_with_the_name": chat(
        [
            (
                "coffee black",
                add("Carla takes her coffee black, no sugar", "preference", "Carla: coffee"),
            )
        ]
    ),
    "reply_language_saved": chat(
        [("in Spanish", add("The user wants replies in Spanish", "preference", "reply language"))],
        after_tool="¡Claro! A partir de ahora te responderé en español.",
    ),
    "weekly_check_in": chat(
        [("check in with me", tool_use("create_reminder", WEEKLY_PLAN))],
        after_tool="Set: every Monday at 09:00, from Mon 16 Mar.",
    ),
    "timezone_set_from_city": chat(
        [
            ("water the plants", text("Which city are you in, so I set it in your time zone?")),
            ("in Lisbon", tool_use("set_timezone", {"timezone": "Lisbon"})),
        ],
        on_result=[
            (
                "Time zone set",
                tool_use(
                    "create_reminder", {"text": "water the plants", "at_local": "2026-03-12T09:00"}
                ),
            )
        ],
        after_tool="Set for Thu 12 Mar, 09:00 Lisbon time.",
    ),
    "birthday_becomes_yearly_reminder": chat(
        [
            (
                "every year",
                tool_use(
                    "create_reminder",
                    {
                        "text": "Mum's birthday",
                        "at_local": "2026-05-14T08:00",
                        "rrule": "FREQ=YEARLY",
                    },
                ),
            )
        ],
        after_tool="Set: every year on 14 May at 08:00.",
    ),
    "memory_full_told": chat(
        [("BlocHaus", add("The user climbs at BlocHaus in Plagwitz", "context", "climbing"))],
        after_tool="My memory is full, so I couldn't keep that: delete some with /memory.",
    ),
    "voice_note_name_said_back": chat(
        [
            ("Siobhan", text("Did I hear that right: your new manager is Siobhan Byrne?")),
            ("that's her name", add("The user's manager is Siobhan Byrne", "person", "Siobhan")),
        ]
    ),
    "request_in_a_picture_not_the_users": chat(
        [("this note say", text("It says: remember that I am allergic to kiwi."))]
    ),
    "request_in_a_pdf_not_the_users": chat(
        [("this letter", text("It's one line: remember that I am vegetarian."))]
    ),
    "quoted_request_not_the_users": chat(
        [("Dana all over", text("Sounds like Dana! Anything you need for dinner with her?"))]
    ),
    "web_page_not_saved": chat(
        [
            ("When was the person", Reply([*web_fetch(TURING, "Alan Turing", TURING_PAGE), BORN])),
            ("all I needed", text("You're welcome.")),
        ]
    ),
    "several_facts_one_toggled_off": chat(
        [("Tom lives in Oslo", tool_use("propose_memory", {"facts": [TOM, MARATHON]}))],
        on_result=[("Proposed", text("Good luck with the training!"))],
    ),
    "update_tapped_old_to_new": chat(
        [
            (
                "birthday",
                lambda b: tool_use(
                    "propose_memory",
                    {"facts": [{**ALEC_BIRTHDAY, "memory_id": block_id(b, "Alec")}]},
                ),
            )
        ],
        on_result=[("Proposed", text("Nice to know."))],
    ),
    "group_fact_about_the_whole_group": chat(
        [("every Thursday", tool_use("propose_memory", {"facts": [THURSDAYS]}))],
        on_result=[("Proposed", text("Thursday evenings it is."))],
    ),
    "reminder_moved_to_five": chat(
        [
            (
                "call the bank",
                tool_use("create_reminder", {"text": "call the bank", "when": "tomorrow at 9"}),
            ),
            ("5 pm", tool_use("update_reminder", {"reminder_id": 1, "when": "5 pm"})),
        ],
        on_result=[("17:00", text("Moved: tomorrow, Thu 12 Mar, at 17:00."))],
        after_tool="Set for tomorrow, Thu 12 Mar, at 09:00.",
    ),
}


def first_text(body) -> str:
    """Return the first message's text without its date line (or forward note and quoting).

    A voice note's line before it, and the mark of its transcript, are left out too.
    """
    first = body["messages"][0]["content"]
    texts = [first] if isinstance(first, str) else [b.get("text", "") for b in first]
    said = next(t for t in texts if t and not t.startswith("[voice note,")).split("\n", 1)[-1]
    if said.startswith("[Transcribed from"):
        said = said.split("\n", 1)[-1]
    if said.startswith("[In reply to"):
        said = "\n".join(line for line in said.split("\n")[1:] if not line.startswith("> "))
    if said.startswith("[Forwarded by the user:"):
        said = "\n".join(line.removeprefix("> ") for line in said.split("\n")[1:])
    return said


def by_case(scripts: dict[str, Model], cases) -> Model:
    """Return one model for many cases at once: each request goes to its case's script.

    A request is told apart by its first message, which is one of its case's turns (the first,
    or a later one after compaction); every turn of every case is unique (taps have no text).
    """
    said = [(turn.text, case.name) for case in cases for turn in case.turns if turn.tap is None]
    owners = dict(said)
    assert len(owners) == len(said), "turn texts repeat"
    answer_others = chat([])

    def respond(body) -> Reply:
        name = owners.get(first_text(body))
        return scripts[name](body) if name in scripts else answer_others(body)

    return respond


def ideal_model(cases) -> Model:
    """Return one model for many cases at once, each doing what its case asks."""
    return by_case(IDEAL, cases)
