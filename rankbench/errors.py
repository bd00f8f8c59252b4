"""User-facing errors.

A :class:`RankbenchError` is a mistake in the user's input (config, data, paths). The CLI prints
its message as one line on stderr and exits non-zero, without a traceback. Anything else that
escapes is a bug in rankbench and keeps its traceback.
"""


class RankbenchError(Exception):
    """A user mistake, reported as one clear line."""


class ConfigError(RankbenchError):
    """A config file, key or value that is not what rankbench expects."""


class ParameterError(ConfigError, ValueError):
    """A component's parameter outside its declared constraints (a ``ValueError`` for Python
    callers, as scikit-learn raises for invalid parameters; one line in the CLI)."""


class DataError(RankbenchError):
    """A dataset folder, file or image that is missing or not in the expected layout."""


class InputError(RankbenchError, ValueError):
    """Data handed to a component that does not suit its parameters (e.g. a feature length that is
    not a multiple of a histogram size). A ``ValueError`` for Python callers, one line in the CLI."""
