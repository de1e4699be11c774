"""``python -m neardup`` runs the command line."""

from neardup.cli import main

if __name__ == "__main__":
    main()
