"""`python -m @IMPORT_PACKAGE@`: what this wheel needs, what this machine has, and whether the EP offers a device
here (exit 0) or the first thing missing and what to do (exit 1, one line). `--json` prints the facts, `-q` only the
verdict, `--help` the usage."""

import sys

from ._report import main

sys.exit(main())
