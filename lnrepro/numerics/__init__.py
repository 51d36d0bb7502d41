"""Numerics tests of any Python project: the libraries' failure messages read as metrics
(:mod:`.messages`), and the pytest plugin that records each comparison's share of its tolerance,
on a pass too (:mod:`.plugin`)."""
