"""The tidy case's owner: 10 near-duplicate pairs, 5 contradicting pairs, 5 expired, 40 to keep."""

from datetime import UTC, datetime

from memory.categories import Category

# The case's today: every dated fact below is before it, or has no date.
TODAY = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
C, P, PR, J = Category.CONTEXT, Category.PERSON, Category.PREFERENCE, Category.PROJECT

# (category, subject, content) pairs stating one fact twice, in other words.
DUPLICATES = [
    ((PR, "due dates", "The user prefers Friday due dates"),
     (PR, "deadlines", "The user prefers due dates on a Friday")),
    ((PR, "diet", "The user is vegetarian"), (PR, "food", "The user eats vegetarian food")),
    ((P, "Mia", "Mia is the user's daughter"), (P, "daughter", "The user's daughter is Mia")),
    ((C, "running", "The user runs three times a week"),
     (C, "exercise", "The user goes running three times each week")),
    ((C, "car", "The user drives a blue Volvo"), (C, "vehicle", "The user's car is a blue Volvo")),
    ((C, "work", "The user works at Kestrel Labs"),
     (C, "employer", "The user's employer is Kestrel Labs")),
    ((P, "Dr. Okafor", "Dr. Okafor is the user's dentist"),
     (P, "dentist", "The user's dentist is Dr. Okafor")),
    ((PR, "seats", "The user prefers window seats on flights"),
     (PR, "flights", "On flights the user prefers window seats")),
    ((P, "Pixel", "Pixel is the user's cat"), (P, "cat", "The user's cat is called Pixel")),
    ((PR, "tea", "The user likes green tea"), (PR, "drinks", "The user likes green tea a lot")),
]  # fmt: skip

# (older, newer): the newer fact must win, and the text keep the change.
CONTRADICTIONS = [
    ((C, "home", "The user lives in Oslo"),
     (C, "moving", "The user moved to Lisbon in October 2026")),
    ((PR, "editor", "The user's favourite editor is Vim"),
     (PR, "editor now", "The user switched to Helix as their editor in June 2026")),
    ((P, "team lead", "The user's team lead is Priya"),
     (P, "new lead", "Since September 2026 the user's team lead is Marco, not Priya")),
    ((C, "training", "The user is training for a half marathon"),
     (C, "race", "As of August 2026 the user trains for a full marathon instead")),
    ((C, "gym", "The user's gym is FitHub"),
     (C, "new gym", "In July 2026 the user left FitHub and joined Boulder Barn")),
]  # fmt: skip

# Dated facts whose date has passed: to the archive.
EXPIRED = [
    (C, "Rome trip", "The user flies to Rome on 12 March 2026"),
    (C, "appointment", "The user has a dentist appointment on 3 June 2026"),
    (C, "conference", "The user speaks at PyCon Lisbon on 20 April 2026"),
    (C, "move day", "The user moves flats on 15 September 2026"),
    (P, "sister's visit", "The user's sister Ana visits from 10 to 14 October 2026"),
]  # fmt: skip

# Different facts, undated: none may be lost or altered.
STAY = [
    (P, "Alec", "Alec is the user's boss"), (P, "Sam", "Sam is the user's brother in Porto"),
    (P, "Jo", "Jo is the user's accountant"), (P, "Lena", "Lena is the user's Japanese tutor"),
    (P, "Tom", "Tom is the user's neighbour and has a dog"),
    (P, "Grandma", "The user's grandmother bakes rye bread"),
    (P, "Nadia", "Nadia is the user's co-founder"), (P, "Ravi", "Ravi fixes the user's bike"),
    (PR, "colour", "The user's favourite colour is teal"),
    (PR, "music", "The user listens to jazz while working"),
    (PR, "style", "The user wants short answers with bullet points"),
    (PR, "language", "The user wants replies in English"),
    (PR, "coffee", "The user drinks oat flat whites"), (PR, "books", "The user reads sci-fi"),
    (PR, "meetings", "The user avoids meetings before 10am"),
    (PR, "units", "The user prefers metric units"), (PR, "travel", "The user prefers trains"),
    (PR, "news", "The user reads the news in the evening"),
    (PR, "shoes", "The user wears size 43 shoes"), (PR, "spice", "The user loves spicy food"),
    (C, "allergy", "The user is allergic to penicillin"),
    (C, "plants", "The user keeps twelve houseplants"), (C, "piano", "The user plays piano"),
    (C, "laptop", "The user uses a ThinkPad X1"), (C, "phone", "The user has an Android phone"),
    (C, "commute", "The user cycles to work"), (C, "sleep", "The user sleeps badly in heat"),
    (C, "garden", "The user grows tomatoes on the balcony"),
    (C, "languages", "The user speaks Portuguese and Norwegian"),
    (C, "degree", "The user studied physics"), (C, "chess", "The user plays chess online"),
    (C, "kitchen", "The user has an induction stove"),
    (J, "Atlas", "Atlas is the user's billing rewrite in Go"),
    (J, "Falcon", "Falcon is the user's side project, a bird-song app"),
    (J, "thesis", "The user supervises a thesis on solar panels"),
    (J, "podcast", "The user co-hosts a podcast about maps"),
    (J, "garden club", "The user runs the street's garden club"),
    (J, "blog", "The user writes a blog about sourdough"),
    (J, "Kestrel 12", "Kestrel 12 is the user's team's data pipeline"),
    (J, "budget app", "The user builds a budget app in Rust"),
]  # fmt: skip
