"""User-facing errors.

A :class:`RankbenchError` is a mistake in the user's input (config, data, paths). The CLI prints
its message as one line on stderr and exits non-zero, without a traceback. Anything else that
escapes is a bug in rankbench and keeps its traceback.
"""


class RankbenchError(Exception):
    """A user mistake, reported as one clear line."""


class ConfigError(RankbenchError):
    """A config file, key or value that is not what rankbench expects."""


class DataError(RankbenchError):
    """A dataset folder, file or image that is missing or not in the expected layout."""
