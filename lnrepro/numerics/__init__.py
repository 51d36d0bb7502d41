"""Numerics tests of any Python project: the libraries' failure messages read as metrics
(:mod:`.messages`), the environment that changes numbers (:mod:`lnrepro.model.pyenv`)."""
