"""``python -m pyconnect``: the ``pyconnect`` command line."""

import sys

from pyconnect.cli import main

sys.exit(main())
