"""`python -m kernelsmith` is the `kernelsmith` command."""

import sys

from kernelsmith.cli import main

sys.exit(main())
