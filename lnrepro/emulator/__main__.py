from lnrepro.emulator import main

raise SystemExit(main())
