"""``python -m odtkit.cli``: the ``odtkit`` command."""

import sys

from odtkit.cli import main

sys.exit(main())
