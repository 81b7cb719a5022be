"""`python -m services.cli` runs the command line."""

from services.cli.main import main

main()
