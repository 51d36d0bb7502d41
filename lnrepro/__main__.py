from lnrepro.cli import main

raise SystemExit(main())
