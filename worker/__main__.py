"""`python -m worker`: see worker/cli.py."""

import logging
import sys

from worker.cli import main

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
sys.exit(main())
