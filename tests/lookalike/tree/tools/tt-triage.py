#@if triage-framework
#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The look-alike's tt-triage (tenstorrent/tt-metal tools/tt-triage.py, the entry point of the
# framework in tools/triage/, read at 02c321d69d06): it runs tools/triage/triage.py's main().
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "triage"))

from triage import main  # noqa: E402

if __name__ == "__main__":
    main()
#@end
