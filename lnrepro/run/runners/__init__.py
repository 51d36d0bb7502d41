"""Runners: where a tt-metal backend's commands run. One protocol, one module per runner:

* :mod:`.base` — the protocol (:class:`~.base.Runner`), what every command is given
  (:class:`~.base.Place`: its directory, environment and mounts) and the hang hook
  (:class:`~.base.OnHang`);
* :mod:`.local` — this host (or the container lnrepro itself runs in);
* :mod:`.docker` — a fresh container of lnrepro's per command, on an engine that sees this
  machine's paths;
* :mod:`.remote` — a Docker engine that shares no path with this machine (a card host): the
  checkout is shipped there, the record copied back.

The docker runners start a container per command — each build step and each test attempt — so a
hang or crash takes nothing else with it, and the timeout is the container's. The checkout, the
run's record directory and a persistent ccache directory are mounted at the same path, so paths in
logs and reports mean the same inside and out; files are written as the invoking user.
"""
