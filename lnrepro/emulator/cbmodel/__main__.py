"""``python -m lnrepro.emulator.cbmodel``: the model as a googletest binary."""

from .gtest import main

raise SystemExit(main())
