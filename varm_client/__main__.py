"""`python -m varm_client ...`: the same as the `varm` console script."""

import sys

from .cli import main

sys.exit(main())
