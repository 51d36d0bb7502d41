"""Python op tests run by pytest: tt-metal's PCC messages, pytest's JUnit XML, pytest's argv.

* :mod:`lnrepro.pytests.pcc` reads the numbers tt-metal's comparison helpers print
  (``assert_with_pcc``, ``comp_pcc``, ``comp_allclose``, ...) into per-tensor metrics;
* :mod:`lnrepro.pytests.junit` reads ``pytest --junitxml`` into the same
  :class:`~lnrepro.model.gtest.TestResult` records a googletest run produces;
* :mod:`lnrepro.pytests.argv` builds the command line of one comparable pytest attempt.
"""
