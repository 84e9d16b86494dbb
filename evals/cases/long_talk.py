"""The filler of the compaction case: a user sends an essay draft in parts for quick feedback.

Each part is about 180 tokens, so the ten of them outgrow a history budget of 2,000 tokens on
their own: the history is compacted even when the replies are short.
"""

ASK = "Here is part {number} of my essay draft. Two sentences of feedback, please, no more.\n\n"

ESSAY = (
    "Our town has had a community garden behind the library for nine years now, and most people "
    "who walk past it have no idea how it started. It began with a single complaint at a council "
    "meeting about an empty lot that collected broken glass and shopping trolleys. A retired "
    "teacher stood up and said that if the council would lend her the lot for one summer, she "
    "would turn it into something the neighbourhood could be proud of. Nobody expected much. She "
    "had no budget, no volunteers, and a lot full of rubble. What she did have was a list of "
    "everyone she had ever taught, and a habit of calling people until they said yes. By June "
    "there were twelve raised beds built from donated pallets, a water butt borrowed from the "
    "fire station, and a rota pinned to the library noticeboard.",
    "The first harvest was modest: lettuce that bolted in the heat, beans that the slugs found "
    "before we did, and a surprising number of courgettes that nobody quite knew what to do "
    "with. But something else grew that summer that mattered more than the vegetables. People "
    "who had lived on the same street for twenty years without speaking started arguing, "
    "cheerfully, about the right way to stake tomatoes. Children who had never seen a carrot "
    "come out of the ground dug them up with the delight of finding treasure. An old man who "
    "lived alone above the chemist came every morning to water, and told anyone who would "
    "listen about the allotment his father had kept during the war. By the autumn the council "
    "quietly extended the loan of the lot for another year, and nobody asked for it back.",
    "The second year brought problems that the first had hidden. With success came more people "
    "than beds, and the rota that had worked for a dozen families broke down at forty. Some "
    "plots were tended every day and others were abandoned by July. There were disputes about "
    "whose turn it was to use the shared tools, and a painful week when someone took the whole "
    "strawberry crop before it was ripe. The teacher, who by then was called the chair of the "
    "garden committee whether she liked it or not, called a meeting in the library's back room. "
    "It lasted three hours. At the end of it there was a constitution of sorts, written on two "
    "sheets of paper, that set out who could have a bed, what they owed in return, and how "
    "arguments would be settled before they turned into feuds.",
    "That piece of paper turned out to be the most important thing the garden ever produced. "
    "It said that every bed holder would give two hours a month to the common areas, that "
    "half of every harvest of fruit would be shared at a Saturday stall by the gate, and that "
    "any bed left untended for six weeks would pass to the next name on the waiting list. It "
    "also said, in a line added near midnight after a long argument, that nobody would ever be "
    "charged to join. The waiting list became a way of meeting new neighbours rather than a "
    "source of resentment, because everyone on it was invited to the Saturday stall and to the "
    "work mornings, and most of them ended up helping long before they had a bed of their own. "
    "The rules were strict, but they were the same for everyone.",
    "By the fifth year the garden had outgrown the lot behind the library. The council offered "
    "a strip of land along the old railway cutting, which was long, thin and steep, and which "
    "everyone agreed was impossible to garden. The younger members saw it differently. They "
    "borrowed a design for terraces from a book about hill farms, cut steps into the bank with "
    "spades and a great deal of swearing, and shored them up with railway sleepers that a "
    "salvage yard sold them for almost nothing. It took two winters. When the terraces were "
    "finished they held thirty more beds, a small orchard of apple and plum trees, and a bench "
    "at the top from which you could see the whole town, the church spire, the river and the "
    "hills behind it on a clear evening in late summer.",
    "Not everything went well. A dry summer in the seventh year emptied the water butts by "
    "June, and the garden depended on volunteers carrying cans from the library tap in the "
    "early mornings before the heat. Half the orchard was lost to a disease that nobody "
    "recognised until it was too late. A grant application that would have paid for a proper "
    "irrigation system was turned down because the garden had no legal status and no bank "
    "account. That refusal forced a decision that many members had put off for years: whether "
    "to become a registered charity, with trustees and accounts and annual reports, or to stay "
    "an informal group held together by goodwill and a two-page constitution. The debate was "
    "long, and at times bitter, and it split old friends.",
    "In the end the garden chose a middle way. It became a small charity with the lightest "
    "structure the law allowed, and it wrote into its new rules that the original two pages "
    "would stay pinned by the gate and would still settle any argument about beds, work and "
    "sharing. The irrigation grant came through the following spring. The teacher stepped down "
    "as chair that year, at eighty-one, and handed the keys to a woman who had first come to "
    "the garden as a nine-year-old digging up carrots. At the handover, held on the terraces "
    "with a trestle table of cakes made from the garden's own fruit, she said that she had "
    "only ever wanted an empty lot to stop being ugly, and that everything else had been the "
    "neighbours' idea, which was not quite true.",
    "The charity's first annual report was a strange document to read for anyone who had been "
    "there from the start. It counted things that had never been counted before: four hundred "
    "and twelve volunteer hours in a year, ninety-one households with a bed or a share of one, "
    "two tonnes of produce, of which a little under half had gone across the Saturday stall to "
    "people who had never set foot in the garden. It listed the schools that visited, the "
    "care home that sent residents every Thursday in summer, and the food bank that took the "
    "surplus courgettes without complaint. Some members were proud of the numbers. Others felt "
    "that something had been lost when the garden had to explain itself in a table, and one of "
    "them pinned a handwritten note beside the report at the gate that simply said: we grew "
    "more than this.",
    "The children who had dug carrots in the first summer were grown by then, and some of them "
    "came back with children of their own. The garden had become the kind of place that people "
    "describe to strangers when they want to explain what the town is like. Estate agents "
    "mentioned it in their listings, which caused a small row at the annual meeting, since the "
    "garden's rules said nothing about being used to sell houses. The committee decided, after "
    "a shorter argument than usual, that there was nothing to be done about it, and that the "
    "best answer was to keep the waiting list open to everyone, including the people who had "
    "moved to town because of a sentence in a brochure. Several of them turned out to be the "
    "most faithful volunteers the garden ever had, and one now runs the Saturday stall.",
    "What the garden shows, I think, is that a shared place needs two things that pull against "
    "each other: rules firm enough that people trust them, and enough looseness that people "
    "feel it is theirs to change. Too many rules and it becomes a service that people consume "
    "and complain about; too few and it is captured by whoever shouts loudest or turns up most "
    "often. Our garden found its balance by accident, through a midnight argument and two sheets "
    "of paper, and kept it by refusing to let the paper grow. Other towns have asked how to copy "
    "it. The honest answer is that you cannot copy the garden, only the habit of sitting in a "
    "back room until everyone has been heard, and then writing down as little as possible.",
)


def essay_turns() -> tuple[str, ...]:
    """Return the essay's parts as the user's messages, each with its request for feedback."""
    return tuple(ASK.format(number=n) + part for n, part in enumerate(ESSAY, 1))
