"""A user's module that calls sys.exit while it is imported (loaded by file path in the tests)."""

import sys

sys.exit(3)
