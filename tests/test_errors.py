"""The user-error types (errors.py) on their own: what each is for Python callers, how ErrorList
gathers independent mistakes, and the spelling hint."""

import pytest

from rankbench.errors import (ConfigError, ConfigErrors, DataError, ErrorList, InputError, JobsFailed,
                              ParameterError, RankbenchError, RankerFault, Terminated, did_you_mean)


def test_types_a_python_caller_can_catch():
    for kind in (ConfigError, DataError, InputError, RankerFault, ParameterError, JobsFailed, ConfigErrors):
        assert issubclass(kind, RankbenchError)
    for kind in (ParameterError, InputError, RankerFault):      # scikit-learn's checks expect ValueError
        assert issubclass(kind, ValueError)
    assert not issubclass(DataError, ValueError) and not issubclass(ConfigError, ValueError)
    assert issubclass(Terminated, KeyboardInterrupt) and not issubclass(Terminated, Exception)


def test_jobs_failed_keeps_what_was_computed():
    failed = [("s", 0, "l1", "fit", "boom")]
    err = JobsFailed("1 job failed", failed, trials="T", summary="S", folder="run")
    assert str(err) == "1 job failed"
    assert (err.failed, err.trials, err.summary, err.folder) == (failed, "T", "S", "run")
    assert JobsFailed("x", []).trials is None


def test_error_list_keeps_each_mistake_once_and_raises_them_together():
    errors = ErrorList()
    errors.raise_any()                                  # nothing found: nothing raised
    for k in range(3):
        with errors.check():
            if k != 1:
                raise ConfigError(f"methods[{k}]: unknown ranker")
    with errors.check():
        raise ConfigError("methods[0]: unknown ranker")  # the same line again is not repeated
    errors.add("dataset: no such folder")
    errors.add(ConfigErrors(["methods[2]: unknown ranker", "protocol: unknown"]))
    assert errors.messages == ["methods[0]: unknown ranker", "methods[2]: unknown ranker",
                               "dataset: no such folder", "methods[2]: unknown ranker", "protocol: unknown"]
    with pytest.raises(ConfigErrors) as info:
        errors.raise_any()
    assert info.value.messages == errors.messages
    assert str(info.value) == "\n".join(errors.messages)


def test_error_list_re_raises_a_single_mistake_as_it_was():
    errors = ErrorList()
    first = ParameterError("rankers.l1: bad")
    with errors.check():
        raise first
    with pytest.raises(ParameterError) as info:
        errors.raise_any()
    assert info.value is first


def test_error_list_lets_other_errors_through():
    errors = ErrorList()
    with pytest.raises(DataError):
        with errors.check():
            raise DataError("not a config mistake")
    assert errors.found == []


@pytest.mark.parametrize("word, hint", [
    ("prsvn", "did you mean 'prsvm'? "), ("rankbost", "did you mean 'rankboost'? "),
    ("Euclidean", "did you mean 'euclidean'? "), ("l2", ""), ("zzzzzz", ""), ("elf", "did you mean 'elf'? "),
])
def test_did_you_mean_names_the_closest_choice_only_when_close(word, hint):
    assert did_you_mean(word, ["prsvm", "rankboost", "l1", "euclidean", "elf"]) == hint
    assert did_you_mean(word, []) == ""
