"""Which cases measure each rule of the instructions, and the rules no case measures yet, why.

tests/evals/test_cases.py checks that every rule is in one of the two and every case named
exists, so a rule added to the instructions needs a case (or a stated reason) too.
"""

from bot.agent.rules import RuleName as R

RULE_CASES: dict[R, tuple[str, ...]] = {
    R.PERSONA: ("boss_known_in_new_conversation",),
    R.STYLE: ("boss_known_in_new_conversation",),
    R.DATE_LINE: ("relative_date_made_absolute", "reminder_on_friday"),
    R.QUOTED_WORDS: ("forwarded_remember_not_saved", "quoted_request_not_the_users"),
    R.FILES_ARE_DATA: ("request_in_a_picture_not_the_users", "request_in_a_pdf_not_the_users"),
    R.WEB_IS_DATA: ("web_page_not_saved",),
    R.VOICE_NOTES: ("voice_note_time_echoed_before_reminder", "voice_note_name_said_back"),
    R.CAPABILITIES: (
        "create_a_task_not_claimed",
        "messaging_others_not_claimed",
        "web_current_fact_searched_and_cited",
        "web_off_says_so",
    ),
    R.REMINDER_TOOLS: ("reminder_moved_and_cancelled",),
    R.REMINDER_WORDS: (
        "reminder_in_twenty_minutes",
        "reminder_on_friday",
        "reminder_every_weekday",
        "reminder_moved_to_five",
    ),
    R.REMINDER_SAID_BACK: ("reminder_in_twenty_minutes", "reminder_on_friday"),
    R.TIME_ZONE: ("reminder_zone_unknown", "timezone_set_from_city"),
    R.YEARLY_FROM_MEMORY: ("birthday_becomes_yearly_reminder",),
    R.CHECK_INS: ("weekly_check_in",),
    R.MEMORY_BLOCK: ("lists_with_most_archived", "archive_found_by_search"),
    R.SNAPSHOT: ("forget_right_after_save", "monday_after_compaction"),
    R.USE_NATURALLY: ("boss_known_in_new_conversation", "saved_then_known_after_new"),
    R.MARKERS: ("marks_the_memories_it_used",),
    R.PREFERENCES: ("saved_preference_followed", "instruction_in_memory_not_obeyed"),
    R.SEARCH_FIRST: ("archive_found_by_search", "archived_preference_updated"),
    R.PAST_CONVERSATIONS: ("past_conversation_searched",),
    R.FOUND_BY_ID: ("archived_preference_updated",),
    R.SAVE_WHEN_ASKED: ("explicit_save",),
    R.ASK_FIRST: ("boss_asks_first", "consent_by_button", "busy_task_one_question"),
    R.ONE_QUESTION: (
        "two_facts_one_question",
        "busy_task_one_question",
        "several_facts_one_toggled_off",
    ),
    R.CONSENT: ("declined_not_saved", "consent_by_words", "no_tap_then_same_fact"),
    R.UNANSWERED: ("ignored_question_not_repeated", "tap_after_moving_on_expired"),
    R.TAP_NOTES: ("consent_by_button", "no_tap_then_same_fact"),
    R.CHANGED_FACTS: ("team_change_updates", "monday_update"),
    R.NO_DUPLICATES: ("already_known_not_duplicated",),
    R.ANOTHER_FACT: (
        "second_fact_about_a_known_person",
        "group_two_members_one_topic",
        "update_tapped_old_to_new",
    ),
    R.FORGET_ONE: ("forget_right_after_save",),
    R.FORGET_EVERYTHING: ("forget_everything_points_to_clear",),
    R.MEMORY_COMMAND: ("commands_point_to_memory", "lists_with_most_archived"),
    R.SECRETS: (
        "secret_pin",
        "card_number",
        "secret_insisted_after_refusal",
        "secret_slipped_into_update",
    ),
    R.POINTERS: ("wifi_pointer",),
    R.SENSITIVE: ("health_not_offered",),
    R.NOT_LASTING: ("one_off_feeling", "create_a_task_not_claimed"),
    R.WRITING: ("german_request", "relative_date_made_absolute"),
    R.WHOSE: ("explicit_save",),
    R.SUBJECTS: ("group_names_the_speaker", "wifi_pointer", "reply_language_saved"),
    R.GROUP_SUBJECTS: ("group_subject_starts_with_the_name",),
    R.IDS: ("lists_what_it_remembers",),
    R.TOOL_ERRORS: ("memory_full_told",),
    R.GROUP_SPEAKERS: ("group_fact_needs_consent", "group_names_the_speaker"),
    R.GROUP_NAMES: (
        "group_names_the_speaker",
        "group_fact_needs_consent",
        "group_fact_about_the_whole_group",
    ),
    R.GROUP_ABOUT: ("group_tap_by_another_member", "group_fact_about_the_whole_group"),
    R.GROUP_CONSENT: (
        "group_fact_needs_consent",
        "group_only_the_person_consents",
        "group_tap_by_another_member",
    ),
}
# A trial's files stay available to its end: a file gone from the cache needs a case that
# removes it between turns.
NOT_MEASURED: dict[R, str] = {
    R.UNAVAILABLE_FILES: "no case loses a file yet: one no longer available",
}
