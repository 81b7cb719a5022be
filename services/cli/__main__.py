"""`python -m services.cli` runs the command line."""

import sys

from services.cli.main import main

sys.exit(main())
