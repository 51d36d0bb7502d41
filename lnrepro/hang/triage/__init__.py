"""tt-triage's output read back: box tables (:mod:`.tables`), the scripts' rows of every era
(:mod:`.output`), users' condensed summaries (:mod:`.summary`), and the hang they show
(:mod:`.diagnose`). Pure: text in, records out. The door for callers is :mod:`lnrepro.hang`.
"""
