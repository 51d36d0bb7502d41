"""A numpy emulator of tt-train's fused LayerNorm backward kernel that behaves as a gtest binary.

``python -m lnrepro.emulator`` (or ``lnrepro-emulator``) is a drop-in for ``ttml_tests`` as far
as the LayerNorm backward tests go; ``kernel`` holds the model and its defects, ``catalogue``
the tests, ``gtest_main`` the googletest front end.
"""
