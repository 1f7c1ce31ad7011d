"""The names of the per-head scores the mechanism stage measures: a module without torch, so the
tables (and the workflow that imports them at parse time) name the scores without loading it."""

SCORES = ("previous_token", "duplicate", "induction", "anti_induction", "before_occurrence")
PER_PROMPT = ("induction", "anti_induction")  # the scores whose per-prompt values the tables compare
