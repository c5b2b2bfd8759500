"""``python -m xcorrstat`` runs the command line.

Importing the package has already made Ctrl-C and SIGTERM print one line (see
``xcorrstat._signals``); :func:`xcorrstat._cli.main` handles them from then on.
"""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
