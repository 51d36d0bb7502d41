from lnrepro.emulator.gtest_main import main

raise SystemExit(main())
