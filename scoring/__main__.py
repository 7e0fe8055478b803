"""`python -m scoring ...`: see scoring/cli.py."""

import sys

from .cli import main

sys.exit(main())
