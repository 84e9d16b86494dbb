"""The web: current facts are searched and cited, a link is read, and nothing read is saved."""

from evals.case import Case, said
from evals.rules import Called, CitesWeb, NotCalled, NoWrites

# A page that has stood for years and will go on standing.
TURING = "https://en.wikipedia.org/wiki/Alan_Turing"

CASES: tuple[Case, ...] = (
    Case(
        name="web_current_fact_searched_and_cited",
        about="A question only today's web can answer: it searches, and cites what it found "
        "(the sources the user is shown).",
        turns=said("What is the newest stable release of Python right now?"),
        rules=(
            Called("web_search", note="searches the web"),
            CitesWeb(note="cites what it found"),
            NoWrites(note="saves nothing it read"),
        ),
    ),
    Case(
        name="web_link_read",
        about="A pasted link is read with web_fetch, not guessed from its address.",
        turns=said(f"Summarise this page in two sentences: {TURING}"),
        rules=(
            Called("web_fetch", arguments=(("url", r"wikipedia\.org/wiki/Alan_Turing"),),
                   note="reads the page it was given"),
            NoWrites(note="saves nothing it read"),
        ),
    ),
    Case(
        name="web_page_not_saved",
        about="A page's facts are answered from, never kept: nothing read on the web goes to "
        "memory unless the user asks.",
        turns=said(f"When was the person on this page born? {TURING}",
                   "Thanks, that's all I needed about him."),
        rules=(
            Called("web_fetch", turn=1, note="reads the page"),
            NotCalled("add_to_memory", note="saves nothing from the page"),
            NoWrites(note="changes no memory"),
        ),
    ),
)  # fmt: skip
