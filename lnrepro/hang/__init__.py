"""Everything about a hang, in one package. Other packages come in through :mod:`.door` (the
readers, the dispatch timeout's rule); the run and explain records hold a hang's diagnosis as
data through :mod:`.model`, which loads none of the readers. This file imports nothing, so that
reaching the records costs no parser.

The rooms: :mod:`.model` (a hang's records, ``lnrepro.hang/2``), :mod:`.waypoints` (the words for
tt-metal's waypoints), :mod:`.rules` (which waiting processor is the cause), :mod:`.watcher`
(watcher.log and DPRINT lines), :mod:`.triage` (tt-triage's output and users' summaries),
:mod:`.dispatch` (tt-metal's dispatch timeout and the tt-triage command run on a hung attempt).
"""
