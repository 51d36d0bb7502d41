"""Reading googletest output: streaming console parser, JSON/XML reports, merging."""
