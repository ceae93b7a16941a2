"""Run the ramem CLI from a checkout: ``python cli.py --help``."""

from ramem_local.cli import main

if __name__ == "__main__":
    main()
