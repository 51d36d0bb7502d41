"""One root exception; each expected failure knows its exit code and its fix.

The CLI turns a :class:`LnreproError` into a single line on stderr::

    lnrepro: error: <what went wrong> — fix: <what to do>

and exits with :attr:`LnreproError.exit_code`.  Nothing below the CLI calls
``sys.exit``; everything raises one of these.  The table of exit codes is
documented in README.md ("Exit codes") and checked by a test.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Documented process exit codes of every lnrepro command."""

    OK = 0
    FAILED = 1  # what was examined is bad: tests failed, a check failed
    USAGE = 2  # bad arguments, or a command that is not built yet
    INTERNAL = 3  # a bug in lnrepro itself
    INPUT = 4  # a file is missing, unreadable, empty or not what it claims
    ENVIRONMENT = 5  # Docker, a device, a tool or a directory is missing or unusable
    GIT = 6  # not a repository, bad ref, dirty tree
    TIMEOUT = 7  # something ran longer than its limit
    HANGUP = 129  # SIGHUP: the terminal went away (128 + 1)
    INTERRUPTED = 130  # Ctrl-C (128 + 2)
    TERMINATED = 143  # SIGTERM (128 + 15)


class LnreproError(Exception):
    """Root of every error lnrepro expects. ``fix`` says what the user should do."""

    exit_code: ExitCode = ExitCode.INTERNAL

    def __init__(self, message: str, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def one_line(self) -> str:
        text = " ".join(self.message.split())
        if self.fix:
            text += " — fix: " + " ".join(self.fix.split())
        return text


class UsageError(LnreproError):
    exit_code = ExitCode.USAGE


class InputError(LnreproError):
    """A file lnrepro was asked to read is missing, unreadable or malformed."""

    exit_code = ExitCode.INPUT


class MalformedLog(InputError):
    """Input that holds no googletest output at all."""


class MalformedReport(InputError):
    """A --gtest_output JSON/XML report that cannot be read."""


class MalformedRecord(InputError):
    """A record or state file lnrepro wrote that is damaged: wrong types, cut off, not JSON."""


class EnvironmentProblem(LnreproError):
    """Docker, a device, a tool or a directory lnrepro needs is missing or unusable."""

    exit_code = ExitCode.ENVIRONMENT


class DockerUnavailable(EnvironmentProblem):
    pass


class EngineLost(DockerUnavailable):
    """A Docker engine lnrepro was using stopped answering (a card host went down): the work on
    it is lost, not judged; a bisect's other jobs go on without it."""


class GitError(LnreproError):
    exit_code = ExitCode.GIT


class CommandTimeout(LnreproError):
    exit_code = ExitCode.TIMEOUT


class DiskFull(EnvironmentProblem):
    """No space left where lnrepro writes (records, logs, its own output)."""


# Expected outcomes of running tests: each its own type, so that a caller (bisect) can map
# them to "skip" by type, never by message text. Exit 5: nothing was examined.
class OutcomeError(LnreproError):
    exit_code = ExitCode.ENVIRONMENT


class NoGtestOutput(OutcomeError):
    """The test command ran but printed nothing googletest prints."""


class BuildFailed(OutcomeError):
    """Building the code under test failed."""


class EndpointsDoNotSeparate(LnreproError):
    """A bisect's good endpoint fails or its bad endpoint passes: there is nothing to find.
    ``record`` is the bisect's record, which says so too."""

    exit_code = ExitCode.FAILED
    record: object = None


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) as lnrepro's handler raises it. A KeyboardInterrupt, so every handler of
    Ctrl-C catches it; of its own type because CPython 3.11 remembers a plain KeyboardInterrupt
    that left code run by ``exec`` of a string (dataclasses make their methods so, and a lazy
    import may be doing that when Ctrl-C comes) and, under ``python -m lnrepro``, ends the process
    by SIGINT however lnrepro handled it, instead of with exit code 130."""


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwind like Ctrl-C (kill children, keep records), exit 128+N."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Stopped(BaseException):
    """Raised in a worker thread that tries to start a process or container after the work was
    stopped (a bisect's answer is in, or a signal came): nothing new may start."""
