"""User-facing errors.

A :class:`RankbenchError` is a mistake in the user's input (config, data, paths). The CLI prints
its message as one line on stderr and exits non-zero, without a traceback. Anything else that
escapes is a bug in rankbench and keeps its traceback. :class:`ErrorList` gathers the mistakes of
independent checks, so that ``rankbench validate`` reports every one of them at once.
"""

import contextlib
import difflib


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


class RankerFault(InputError):
    """A ranker returned something its protocol cannot score: non-finite values, the wrong shape,
    not numbers, or nothing. The engine records the job as failed, naming the setting, the method
    and the trial, and goes on with the other jobs."""


class JobsFailed(RankbenchError):
    """Jobs of an evaluation failed (their ranker raised, called ``sys.exit``, or returned what its
    protocol refuses): the message names the method, the trial and the fault of the first, and
    counts the others. Nothing computed is lost: ``trials`` and ``summary`` hold the finished
    jobs' results (the frames ``app.load_results`` returns, empty when every job failed),
    ``failed`` one ``(setting, trial, method, phase, error)`` per failed job, and ``folder`` the
    run folder when one was kept."""

    def __init__(self, message: str, failed: list[tuple], trials=None, summary=None, folder=None):
        super().__init__(message)
        self.failed, self.trials, self.summary, self.folder = failed, trials, summary, folder


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill PID``), handled as Ctrl-C is: what was kept is saved and said (exit 143)."""


class ConfigErrors(ConfigError):
    """Several independent mistakes of one config, found together; each is one line of
    ``messages`` (the CLI prints one ``rankbench: error:`` line per message)."""

    def __init__(self, messages: list[str]):
        self.messages = list(messages)
        super().__init__("\n".join(self.messages))


class ErrorList:
    """Runs independent checks and keeps each one's :class:`ConfigError`, so that every mistake of
    a config is reported at once::

        errors = ErrorList()
        for r in rankers:
            with errors.check():
                check_ranker(r)        # a ConfigError here is kept; the next ranker is checked
        errors.raise_any()             # the one error as it was raised, or ConfigErrors for several
    """

    def __init__(self):
        self.found: list[ConfigError] = []

    @property
    def messages(self) -> list[str]:
        return [m for e in self.found for m in getattr(e, "messages", [str(e)])]

    def add(self, error: ConfigError | str) -> None:
        """Keep a mistake (a message is kept as a ConfigError); one already kept is not repeated."""
        error = ConfigError(error) if isinstance(error, str) else error
        if not set(getattr(error, "messages", [str(error)])) <= set(self.messages):
            self.found.append(error)

    @contextlib.contextmanager
    def check(self):
        try:
            yield
        except ConfigError as exc:
            self.add(exc)

    def raise_any(self) -> None:
        if len(self.found) == 1:
            raise self.found[0]
        if self.found:
            raise ConfigErrors(self.messages)


def did_you_mean(word: str, choices: list[str]) -> str:
    """``"did you mean 'prsvm'? "`` for the closest of ``choices`` to a misspelt ``word``, else ``""``."""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else ""


def os_error_line(exc: OSError) -> str:
    """A file-system error as one line naming the path: ``<path>: <what the system says>``. Files
    are written atomically, so whatever was written before it is intact."""
    what = exc.strerror or str(exc) or type(exc).__name__
    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    return f"{' -> '.join(paths)}: {what}" if paths else what
