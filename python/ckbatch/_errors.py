"""The exceptions of ckbatch: one per family of the library's CK_E_* status codes."""

__all__ = ["Error", "InputError", "WeightsError", "UsageError", "StateError"]


class Error(Exception):
    """A ckbatch library error.

    Attributes:
        code: the library's status code, a negative int (``ckbatch.CK_E_INPUT`` ...).
        status: its stable name, e.g. ``"CK_E_INPUT"``.
        message: the library's message, naming the file, line and field.
    """

    def __init__(self, code, status, message):
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message

    def __str__(self):
        return f"{self.message} [{self.status}]"


class InputError(Error, ValueError):
    """A bad line or sequence: invalid UTF-8, an unknown symbol (strict), an id out of range,
    a sequence too long (CK_E_INPUT, CK_E_RANGE, CK_E_SIZE, CK_E_NONFINITE)."""


class WeightsError(Error):
    """Weights that do not fit the circuit or the config, or fail their manifest
    (CK_E_WEIGHTS, CK_E_HASH)."""


class UsageError(Error, ValueError):
    """A bad argument or option value, a closed model, an option this build lacks (CK_E_ARG)."""


class StateError(Error):
    """``run(..., resume=True)`` refused: the output's progress record belongs to another run (a
    differing input, option or weights; the message names the field). The progress is kept: run
    the same job again, or start over with ``resume=False`` (CK_E_STATE)."""


_CLASS_OF_CODE = {-11: InputError, -4: InputError, -2: InputError, -3: InputError,
                  -13: WeightsError, -9: WeightsError, -1: UsageError, -15: StateError}


def _make(code, status, message):
    """The exception instance for a library error (called by the C extension)."""
    return _CLASS_OF_CODE.get(code, Error)(code, status, message)
