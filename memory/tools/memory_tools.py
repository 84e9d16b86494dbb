"""The model's memory tools: save, change, forget, and search memories and past conversations."""

from memory.budget import MemoryFull
from memory.items import AddMemory, ForgetMemory, MemoryItem, MemoryNotFound, UpdateMemory
from memory.proposals import AskingBound, NewFact
from memory.secret_text import secret_in
from memory.tools.args import (
    AddToMemoryArgs,
    ForgetMemoryArgs,
    ProposedFactArgs,
    ProposeMemoryArgs,
    SearchArgs,
    SearchConversationsArgs,
    UpdateMemoryArgs,
)
from memory.tools.base import FoundMemory, Tool, ToolContext, ToolOutcome
from memory.tools.proposal_texts import (
    MIXED_MEMBERS,
    fact_refused,
    not_proposed,
    proposed,
    same_subjects,
)
from memory.tools.subjects import lacks_person, person_of, someone_elses
from memory.tools.texts import (
    ADD_DESCRIPTION,
    FORGET_DESCRIPTION,
    PROPOSE_DESCRIPTION,
    SEARCH_CONVERSATIONS_DESCRIPTION,
    SEARCH_MEMORY_DESCRIPTION,
    UPDATE_DESCRIPTION,
    forgot,
    found_memories,
    found_title,
    found_turns,
    memory_full,
    needs_person,
    not_found,
    same_subject,
    saved,
    secret_refused,
    updated,
)

SEARCH_RESULTS = 10


async def _not_addable(ctx: ToolContext, args: AddToMemoryArgs) -> ToolOutcome | None:
    """Return why a new memory cannot be saved as given, or None when it can."""
    if (secret := secret_in(args.content, args.subject)) is not None:
        return ToolOutcome(secret_refused(secret), is_error=True)
    existing = await ctx.store.find_subject(ctx.owner_id, args.subject)
    if existing is not None:
        return ToolOutcome(same_subject(existing, someone_elses(existing.subject, ctx.speaker)))
    count = await ctx.store.count_active(ctx.owner_id)
    if count >= ctx.memory_limit:
        refusal = MemoryFull(args.content, count, ctx.memory_limit)
        return ToolOutcome(memory_full(refusal), is_error=True, refusal=refusal)
    return None


async def add_to_memory(ctx: ToolContext, args: AddToMemoryArgs) -> ToolOutcome:
    """Save a new memory unless one with the same subject exists or the cap is reached."""
    if (refused := await _not_addable(ctx, args)) is not None:
        return refused
    edit = AddMemory(args.content, args.category, args.subject)
    change = await ctx.store.apply_undoable(ctx.owner_id, edit, ctx.conversation_id)
    if ctx.proposals is not None and ctx.conversation_id is not None:
        # A yes in words answers the question the buttons asked.
        await ctx.proposals.saved_in_words(
            ctx.owner_id, ctx.conversation_id, args.subject, change.item.id
        )
    return ToolOutcome(saved(change), change=change)


async def _proposable(ctx: ToolContext, fact: ProposedFactArgs, about: str | None) -> NewFact | str:
    """Return a fact as it can be asked about, or why it cannot (a sentence for the model)."""
    if fact.memory_id is None:
        if about is not None and lacks_person(fact.category, fact.subject, about):
            return needs_person(fact.subject, about)
        refused = await _not_addable(ctx, fact)
        return (
            NewFact(fact.content, fact.category, fact.subject)
            if refused is None
            else (refused.content)
        )
    if (secret := secret_in(fact.content, fact.subject)) is not None:
        return secret_refused(secret)
    try:
        target = await ctx.store.find(ctx.owner_id, fact.memory_id)
    except MemoryNotFound:
        target = None
    if target is None or target.deleted_at is not None:
        return not_found(fact.memory_id, "or leave memory_id out")
    subject = target.subject or fact.subject
    return NewFact(fact.content, target.category, subject, target.id, target.content)


async def propose_memory(ctx: ToolContext, args: ProposeMemoryArgs) -> ToolOutcome:
    """Ask about up to MAX_FACTS facts in one question, within the bounds on asking."""
    if ctx.proposals is None or ctx.conversation_id is None:
        return ToolOutcome("propose_memory is not available here.", is_error=True)
    # Whom it is about matters only in a group: in a private chat it is the user's.
    about = " ".join(args.about.split()) or None if args.about and ctx.speaker else None
    named = {n.casefold(): n for f in args.facts if (n := person_of(f.subject))}
    if ctx.speaker and (len(named) > 1 or (about and set(named) - {about.casefold()})):
        return ToolOutcome(MIXED_MEMBERS, is_error=True)
    if ctx.speaker and about is None and named:
        # "Ann: diet" is Ann's even when about is left out: only Ann answers it.
        [about] = named.values()
    facts: list[NewFact] = []
    for number, fact in enumerate(args.facts, 1):
        checked = await _proposable(ctx, fact, about)
        if isinstance(checked, str):
            # Nothing was asked, so the user gets no notice for it.
            return ToolOutcome(fact_refused(number, len(args.facts), checked), is_error=True)
        facts.append(checked)
    if clash := same_subjects(facts):
        return ToolOutcome(clash, is_error=True)
    proposal = await ctx.proposals.propose(
        ctx.owner_id, ctx.conversation_id, ctx.turn_id, facts, about
    )
    if isinstance(proposal, AskingBound):
        return ToolOutcome(not_proposed(proposal, ctx.proposals.limit), is_error=True)
    return ToolOutcome(proposed(proposal), proposal=proposal)


async def update_memory(ctx: ToolContext, args: UpdateMemoryArgs) -> ToolOutcome:
    """Append a new version to an existing memory."""
    if (secret := secret_in(args.content)) is not None:
        return ToolOutcome(secret_refused(secret), is_error=True)
    edit = UpdateMemory(args.memory_id, args.content)
    try:
        change = await ctx.store.apply_undoable(ctx.owner_id, edit, ctx.conversation_id)
    except MemoryNotFound:
        return ToolOutcome(not_found(args.memory_id, "or call add_to_memory"), is_error=True)
    if ctx.proposals is not None and ctx.conversation_id is not None:
        # A yes in words answers a question that proposed this update.
        await ctx.proposals.saved_in_words(ctx.owner_id, ctx.conversation_id, None, change.item.id)
    return ToolOutcome(updated(change), change=change)


async def forget_memory(ctx: ToolContext, args: ForgetMemoryArgs) -> ToolOutcome:
    """Soft-delete a memory; the user can undo it or restore it."""
    edit = ForgetMemory(args.memory_id)
    try:
        change = await ctx.store.apply_undoable(ctx.owner_id, edit, ctx.conversation_id)
    except MemoryNotFound:
        return ToolOutcome(not_found(args.memory_id), is_error=True)
    return ToolOutcome(forgot(change.item), change=change)


async def search_memory(ctx: ToolContext, args: SearchArgs) -> ToolOutcome:
    """Find the owner's memories, in the block or archived, best first."""
    found: list[MemoryItem] = await ctx.store.search(ctx.owner_id, args.query, SEARCH_RESULTS)
    in_block = set((await ctx.store.block(ctx.owner_id)).memory_ids) if found else set()
    results = tuple(
        FoundMemory(item.id, found_title(item, item.id in in_block, ctx.zone), item.content)
        for item in found
    )
    return ToolOutcome(found_memories(args.query, len(found)), found=results)


async def search_conversations(ctx: ToolContext, args: SearchConversationsArgs) -> ToolOutcome:
    """Find what was said in the owner's earlier conversations, best matches (or newest) first."""
    if ctx.conversations is None:
        return ToolOutcome("Past conversations cannot be searched here.", is_error=True)
    hits = await ctx.conversations.search(
        ctx.owner_id,
        args.query,
        SEARCH_RESULTS,
        skip_conversation=ctx.conversation_id,
        order=args.order,
    )
    return ToolOutcome(found_turns(args.query, hits, ctx.zone, args.order))


MEMORY_TOOLS: tuple[Tool, ...] = (
    Tool("add_to_memory", ADD_DESCRIPTION, AddToMemoryArgs, add_to_memory),
    Tool("update_memory", UPDATE_DESCRIPTION, UpdateMemoryArgs, update_memory),
    Tool("forget_memory", FORGET_DESCRIPTION, ForgetMemoryArgs, forget_memory),
    Tool("search_memory", SEARCH_MEMORY_DESCRIPTION, SearchArgs, search_memory),
    Tool(
        "search_conversations",
        SEARCH_CONVERSATIONS_DESCRIPTION,
        SearchConversationsArgs,
        search_conversations,
    ),
    # Last, so the definitions before it (and their cached prefix) stay as they were.
    Tool("propose_memory", PROPOSE_DESCRIPTION, ProposeMemoryArgs, propose_memory),
)
