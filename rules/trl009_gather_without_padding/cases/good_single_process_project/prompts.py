"""The articles the evaluation summarizes."""

ARTICLES = [
    "summarize: the cat sat on the mat",
    "summarize: the committee met on Tuesday and postponed the vote until after the holidays",
]
