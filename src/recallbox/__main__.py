"""``python -m recallbox`` runs the CLI."""

from recallbox.cli import main

main()
