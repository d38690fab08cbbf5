"""``python -m engine``: the ``layout-advisor`` command line."""

import sys

from engine.cli import main

sys.exit(main())
