# ruff: noqa: RUF001 (the Russian words are Cyrillic on purpose)
"""Words too common to find anything by: a search leaves them out of its query.

Folded as memory/search_terms.py folds words (so "чьё" is "чье", "й" is "и"). English is
the usual list with the question words; German and Russian only their unambiguous function
words, so no word another language searches by is lost. Only queries lose them: the index
keeps every word, so a query of stopwords alone still finds its words.
"""

ENGLISH = (
    "a about above after again against all am an and any are as at be because been before "
    "being below between both but by can could did do does doing down during each few for "
    "from further had has have having he her here hers herself him himself his how i if in "
    "into is it its itself just me might more most my myself no nor not now of off on once "
    "only or other our ours ourselves out over own same she should so some such than that "
    "the their theirs them themselves then there these they this those through to too under "
    "until up very was we were what when where which while who whom whose why will with "
    "would you your yours yourself yourselves ever also yet let lets s t d ll m re ve"
)
GERMAN = (
    "der das und ist nicht ein eine einen einem einer ich du er wir ihr mit von zu auf fur "
    "den dem des im wie was wer wo wann sich auch noch aber oder wenn dass sind bin bist "
    "hat habe haben uber nach bei aus"
)
RUSSIAN = (
    "и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только "
    "ее мне было вот от меня еще нет о из ему когда даже ну ли если уже или ни быть был него "
    "до вас там ей они тут где есть ней для мы тебя их чем была сам чтобы без чего себе под "
    "будет кто этот того этого какои ним здесь этом мои тем нее были куда зачем всех можно "
    "при об про какая эту моя свою этои это"
)
STOPWORDS = frozenset(" ".join((ENGLISH, GERMAN, RUSSIAN)).split())
