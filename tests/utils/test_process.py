"""utils/process.kept: the working directory and standard streams put back after a user's code."""

import io
import os
import sys
import warnings

import pytest

from rankbench.utils.process import kept


def test_nothing_changed_is_nothing_said():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with kept("the block"):
            pass


def test_every_change_is_put_back_and_said_in_one_warning(tmp_path, monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.chdir(tmp_path)
    with pytest.warns(RuntimeWarning) as said, kept("the block"):
        os.chdir("/")
        sys.stdout = io.StringIO()
        out.close()
    assert [str(w.message) for w in said] == ["the block changed the working directory to / and closed sys.stdout; "
                                              "rankbench put it back"]
    assert os.getcwd() == str(tmp_path) and not sys.stdout.closed and sys.stdout is not out


def test_what_a_users_code_prints_goes_to_stderr_and_closing_it_closes_nothing(capfd):
    """Before: a ranker's prints were mixed into the report on stdout (rankbench run CONFIG > report.md
    held fake table rows)."""
    with kept("the block"):
        print("| Fake | 99.00 |")
        sys.stdout.close()                       # closes only what the block was given
    print("the report")
    out, err = capfd.readouterr()
    assert out == "the report\n" and "| Fake | 99.00 |" in err
