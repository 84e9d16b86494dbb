"""Recall: search_conversations measured on LoCoMo, beside a plain BM25 over the same turns.

Reads the LoCoMo files of a folder (never copied here: CC BY-NC 4.0), stores each
conversation through ConversationStore (one owner per conversation, a conversation per
session, a group member's turn per dialog turn, a photo as its caption), then asks each
question through ConversationSearch, the code search_conversations runs. R@k is the share of
a question's evidence turns among the first k found, averaged over questions (the paper's).
With the local embedding model installed, the turns' vectors are then computed as the bot's
background does and every question is asked again through the hybrid search.
"""

import json
import math
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import snowballstemmer

from bot.agent.user_turn import time_context
from bot.conversations.blocks import Content, text_block
from bot.conversations.said_by import SaidBy
from bot.conversations.search import ConversationSearch
from bot.conversations.snapshot import ChatThread, MessageRef
from bot.conversations.store import ConversationStore
from memory.db import create_engine, create_sessionmaker
from memory.embeddings import Embedder, local_embedder
from tests.perf.botrun import database, postgres_available
from tests.perf.common import Config, Row, command, percentile
from tests.perf.recall_vectors import CachedEmbedder, fill, hybrid_rows

DEFAULT_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo"
KS = (1, 5, 10, 25)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
LAST_LINE = "R@10 all categories, question as asked: {:.1f}%"
# The keyword form and the reference drop these (the usual English list, question words too).
STOPWORDS = frozenset(
    "a about above after again against all am an and any are as at be because been before "
    "being below between both but by can could did do does doing down during each few for "
    "from further had has have having he her here hers herself him himself his how i if in "
    "into is it its itself just me might more most my myself no nor not now of off on once "
    "only or other our ours ourselves out over own same she should so some such than that the "
    "their theirs them themselves then there these they this those through to too under until "
    "up very was we were what when where which while who whom why will with would you your "
    "yours yourself yourselves".split()
)
_WORD = re.compile(r"[^\W_]+")
_STEMMER = snowballstemmer.stemmer("english")


@dataclass
class Question:
    """One LoCoMo question: its words, category and evidence turns (dia ids)."""

    text: str
    category: int
    evidence: list[str]


@dataclass
class Dialog:
    """One LoCoMo conversation: its turns in order (dia id, speaker, words, when) and questions."""

    name: str
    turns: list[tuple[str, str, str, datetime]] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def _when(text: str) -> datetime:
    """Read a session's date, e.g. "1:56 pm on 8 May, 2023"."""
    return datetime.strptime(text.replace(",", ""), "%I:%M %p on %d %B %Y").replace(tzinfo=UTC)


def _evidence(ids: Iterable[str]) -> list[str]:
    """Normalise evidence ids: split joined ones, "D:11:26" and "D30:05" read as D11:26, D30:5."""
    found = []
    for raw in ids:
        for part in re.split(r"[;\s]+", raw):
            match = re.fullmatch(r"D:?(\d+):0*(\d+)", part.strip())
            if match:
                found.append(f"D{int(match.group(1))}:{match.group(2)}")
            elif part.strip():
                found.append(part.strip())
    return list(dict.fromkeys(found))


def read_dialog(path: Path) -> Dialog:
    """Read one LoCoMo file."""
    data = json.loads(path.read_text())
    conversation = data["conversation"] if "conversation" in data else data
    dialog = Dialog(path.stem)
    sessions = sorted(
        int(key.split("_")[1])
        for key in conversation
        if re.fullmatch(r"session_\d+", key) and conversation[key]
    )
    for number in sessions:
        start = _when(conversation[f"session_{number}_date_time"])
        for index, turn in enumerate(conversation[f"session_{number}"]):
            words = turn["text"]
            if turn.get("blip_caption"):
                words = f"{words}\n[shared a photo: {turn['blip_caption']}]".strip()
            at = start + timedelta(seconds=30 * index)
            dialog.turns.append((turn["dia_id"], turn["speaker"], words, at))
    for qa in data.get("qa", []):
        dialog.questions.append(
            Question(qa["question"], int(qa["category"]), _evidence(qa.get("evidence", [])))
        )
    return dialog


def keywords(question: str) -> str:
    """Return a question's keyword form: its words without stopwords."""
    return " ".join(w for w in _WORD.findall(question) if w.lower() not in STOPWORDS)


def _stems(text: str) -> list[str]:
    """Return text's words as the reference sees them: folded, stopwords out, stemmed."""
    kept = [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
    return list(_STEMMER.stemWords(kept))


class Bm25:
    """Plain BM25 (k1 1.2, b 0.75) over one conversation's turns."""

    def __init__(self, documents: Sequence[tuple[str, str]]):
        self._ids = [key for key, _ in documents]
        self._terms = [Counter(_stems(words)) for _, words in documents]
        self._lengths = [sum(terms.values()) for terms in self._terms]
        self._average = sum(self._lengths) / max(1, len(self._lengths))
        frequency: Counter[str] = Counter()
        for terms in self._terms:
            frequency.update(terms.keys())
        n = len(documents)
        self._idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in frequency.items()}

    def search(self, query: str, limit: int) -> list[str]:
        """Return the ids of the best turns for the query, best first."""
        words = set(_stems(query))
        scores = []
        for index, terms in enumerate(self._terms):
            score = 0.0
            for word in words & terms.keys():
                tf = terms[word]
                norm = 1.2 * (0.25 + 0.75 * self._lengths[index] / self._average)
                score += self._idf[word] * tf * 2.2 / (tf + norm)
            if score > 0:
                scores.append((-score, index))
        return [self._ids[index] for _, index in sorted(scores)[:limit]]


def recall(found: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """Return the share of the evidence among the first k found."""
    return len(set(found[:k]) & set(evidence)) / len(evidence) if evidence else math.nan


@dataclass
class Scores:
    """R@k per category of one retriever and query form."""

    by_category: dict[int, dict[int, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )

    def add(self, category: int, found: Sequence[str], evidence: Sequence[str]) -> None:
        """Score one question's results."""
        if evidence:
            for k in KS:
                self.by_category[category][k].append(recall(found, evidence, k))

    def mean(self, k: int, categories: Iterable[int]) -> float:
        """Return the mean R@k over the questions of the categories, in percent."""
        values = [v for c in categories for v in self.by_category[c][k]]
        return 100 * sum(values) / len(values) if values else math.nan


async def _load(url: str, dialogs: Sequence[Dialog]) -> dict[int, str]:
    """Store every dialog through the product's store; return each turn id's dia id."""
    clock_now: list[datetime] = [datetime.now(UTC)]
    engine = create_engine(url)
    dia_of: dict[int, str] = {}
    try:
        store = ConversationStore(
            create_sessionmaker(engine), timedelta(hours=2), clock=lambda: clock_now[0]
        )
        for owner, dialog in enumerate(dialogs, start=1000):
            for dia_id, speaker, words, at in dialog.turns:
                clock_now[0] = at
                content: Content = [text_block(f"{time_context(at, speaker)}\n{words}")]
                ref = MessageRef(said_by=SaidBy(speaker=speaker))
                snapshot = await store.store_user_message(ChatThread(-owner), -owner, content, ref)
                dia_of[snapshot.turns[-1].id] = dia_id
    finally:
        await engine.dispose()
    return dia_of


async def _ask(
    url: str,
    dialogs: Sequence[Dialog],
    dia_of: dict[int, str],
    form: Callable[[str], str],
    embedder: Embedder | None = None,
) -> tuple[Scores, list[float]]:
    """Ask every question in a form through ConversationSearch; score it and time it.

    With an embedder, the search fuses the words' ranking with the vectors' (hybrid).
    """
    engine = create_engine(url)
    scores, times = Scores(), []
    try:
        sessionmaker = create_sessionmaker(engine)
        vectors = None
        if embedder is not None:
            from bot.conversations.vectors import TurnVectors

            vectors = TurnVectors(sessionmaker, embedder)
        search = ConversationSearch(sessionmaker, vectors)
        for owner, dialog in enumerate(dialogs, start=1000):
            for question in dialog.questions:
                start = time.perf_counter()
                hits = await search.search(-owner, form(question.text), max(KS))
                times.append(time.perf_counter() - start)
                found = [dia_of.get(hit.turn_id, "") for hit in hits]
                scores.add(question.category, found, question.evidence)
    finally:
        await engine.dispose()
    return scores, times


def reference(dialogs: Sequence[Dialog]) -> Scores:
    """Score plain BM25 over `<speaker> said, "<text>"` turns, with the keyword form."""
    scores = Scores()
    for dialog in dialogs:
        bm25 = Bm25([(d, f'{s} said, "{w}"') for d, s, w, _ in dialog.turns])
        for question in dialog.questions:
            found = bm25.search(keywords(question.text), max(KS))
            scores.add(question.category, found, question.evidence)
    return scores


def table(title: str, scores: Scores) -> list[str]:
    """Lay out R@k per category, for categories 1-4 and for all five."""
    groups: list[tuple[str, tuple[int, ...]]]
    groups = [(f"{c} {name}", (c,)) for c, name in CATEGORIES.items()]
    groups += [("1-4", (1, 2, 3, 4)), ("all five", (1, 2, 3, 4, 5))]
    lines = [title, f"  {'category':<16}" + "".join(f"{'R@' + str(k):>8}" for k in KS)]
    for name, categories in groups:
        lines.append(f"  {name:<16}" + "".join(f"{scores.mean(k, categories):>7.1f}%" for k in KS))
    return lines


ALL = (1, 2, 3, 4, 5)


async def run(config: Config, workdir: Path) -> list[Row]:
    """Load the dialogs on each backend, ask every question both ways, score it all."""
    folder = config.recall_data or DEFAULT_DATA
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        print(f"recall: no LoCoMo files in {folder}: nothing measured")
        return []
    dialogs = [read_dialog(path) for path in files]
    questions = sum(len(d.questions) for d in dialogs)
    turns = sum(len(d.turns) for d in dialogs)
    print(f"recall: {len(dialogs)} conversations, {turns} turns, {questions} questions")
    bm25 = reference(dialogs)
    report = table("plain BM25 (reference), keyword form", bm25)
    local = local_embedder()
    embedder = CachedEmbedder(local) if local is not None else None
    if embedder is None:
        report.append("hybrid: no local embedding model installed (the embeddings extra)")
    rows: list[Row] = []
    for backend in config.backends:
        if backend == "postgres" and not await postgres_available(config.postgres_url):
            continue
        name = "SQLite" if backend == "sqlite" else "Postgres"
        async with database(backend, workdir, config.postgres_url) as url:
            report, found = await _measure(url, dialogs, name, embedder, report)
        rows += _rows(name, *found, bm25)
    print("\n".join(report))
    return rows


async def _measure(
    url: str,
    dialogs: Sequence[Dialog],
    name: str,
    embedder: CachedEmbedder | None,
    report: list[str],
) -> tuple[list[str], tuple[Scores, Scores, list[float], Scores | None, list[float]]]:
    """Load the dialogs into one database and ask every question: words only, then hybrid."""
    dia_of = await _load(url, dialogs)
    asked, times = await _ask(url, dialogs, dia_of, lambda q: q)
    keyed, _ = await _ask(url, dialogs, dia_of, keywords)
    report += table(f"search_conversations, {name}, words only, question as asked", asked)
    report += table(f"search_conversations, {name}, words only, keyword form", keyed)
    report.append(_times(times, f"{name}, words only"))
    hybrid, hybrid_times = None, list[float]()
    if embedder is not None:
        seconds = await fill(url, embedder)
        report.append(f"vectors of {len(dia_of)} turns computed in {seconds:.0f} s ({name})")
        questions = [q.text for dialog in dialogs for q in dialog.questions]
        start = time.perf_counter()
        await embedder.embed(questions)
        embedder.save()
        each = 1000 * (time.perf_counter() - start) / max(1, len(questions))
        report.append(f"a question's vector: {each:.1f} ms each in batches (0 if cached)")
        hybrid, hybrid_times = await _ask(url, dialogs, dia_of, lambda q: q, embedder)
        report += table(f"search_conversations, {name}, hybrid, question as asked", hybrid)
        report.append(_times(hybrid_times, f"{name}, hybrid, the question's vector cached"))
    return report, (asked, keyed, times, hybrid, hybrid_times)


def _times(times: list[float], what: str) -> str:
    """Say a search's p50 and p99."""
    return (
        f"search p50 {1000 * percentile(times, 50):.2f} ms, "
        f"p99 {1000 * percentile(times, 99):.2f} ms ({what}, {len(times)} searches)"
    )


def _rows(
    name: str,
    asked: Scores,
    keyed: Scores,
    times: list[float],
    hybrid: Scores | None,
    hybrid_times: list[float],
    bm25: Scores,
) -> list[Row]:
    """Return the table's rows of one backend."""
    again = command("recall", f"--backends {name.lower()}")
    p99 = 1000 * percentile(times, 99)
    rows = [] if hybrid is None else hybrid_rows(name, hybrid.mean(10, ALL), hybrid_times, again)
    return [
        *rows,
        Row(
            key="recall",
            figure=f"17. LoCoMo R@10, all categories, question as asked: {name}",
            value=f"{asked.mean(10, ALL):.1f}%",
            numbers=(asked.mean(10, ALL),),
            target=">= 60% (BM25 here: " + f"{bm25.mean(10, ALL):.1f}%)",
            met=asked.mean(10, ALL) >= 60,
            command=again,
        ),
        Row(
            key="recall",
            figure=f"17. LoCoMo R@10, all categories, keyword form: {name}",
            value=f"{keyed.mean(10, ALL):.1f}%",
            numbers=(keyed.mean(10, ALL),),
            command=again,
        ),
        Row(
            key="recall",
            figure=f"17. LoCoMo search p50 / p99: {name}",
            value=f"{1000 * percentile(times, 50):.2f} ms / {p99:.2f} ms",
            numbers=(1000 * percentile(times, 50), p99),
            target="p99 < 20 ms",
            met=p99 < 20,
            command=again,
        ),
    ]


def last_line(rows: Sequence[Row]) -> str | None:
    """Return the line the recall run ends with: the first backend's R@10, as asked."""
    for row in rows:
        if row.key == "recall" and "question as asked" in row.figure:
            return LAST_LINE.format(row.numbers[0])
    return None
