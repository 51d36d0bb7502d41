"""lnrepro: reproduce, measure and bisect numerical bugs in accelerator kernels.

The package is a library first: every command of the ``lnrepro`` CLI is a thin
layer over a module here (``gtest``, ``pipeline``, ``envcheck``, ``emulator``).
Importing the package is cheap; heavy dependencies (numpy, docker, git) are
imported only by the modules that need them.
"""

__version__ = "0.1.0"
