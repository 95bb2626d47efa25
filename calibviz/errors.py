"""The one exception type users see for bad input."""
from __future__ import annotations

__all__ = ["InputError"]


class InputError(ValueError):
    """Bad input: the message says what is wrong, where, and how to fix it.

    Subclass of :class:`ValueError`, so ``except ValueError`` keeps working.
    The CLI prints the message on one line and exits with status 2; the
    dashboard shows it with ``st.error`` and keeps the previously loaded data.

    The message (``str(exc)``) speaks the library's language (``probs=[...]``,
    ``encoding='latin-1'``): the library and the CLI show it. Where the fix is
    named differently on the dashboard, the raise site gives the dashboard's
    wording next to it, so both texts of one error live in one place:

    Parameters
    ----------
    message : str
        What is wrong, where, and how to fix it in Python / on the command line.
    ui_message : str, optional
        The same error in the dashboard's words (the controls of the column
        mapping panel instead of keyword arguments); defaults to ``message``.
    hint : dict, optional
        Machine-readable fix, ``{mapping control: suggested value}`` with the
        keyword names of :func:`calibviz.load_predictions` (``"encoding"``,
        ``"delimiter"``, ``"decimal"``, ``"positive"``, ``"label"``,
        ``"per_model"``, ...): the dashboard opens its mapping panel with
        these values preselected.

    Examples
    --------
    >>> e = InputError("pass encoding='latin-1'.", ui_message="choose Encoding: latin-1.", hint={"encoding": "latin-1"})
    >>> str(e), e.ui_message, e.hint
    ("pass encoding='latin-1'.", 'choose Encoding: latin-1.', {'encoding': 'latin-1'})
    >>> InputError("plain").ui_message
    'plain'
    """

    def __init__(self, message: str = "", *, ui_message: str | None = None, hint: dict | None = None):
        super().__init__(message)
        self.ui_message = ui_message if ui_message is not None else str(message)
        self.hint = dict(hint or {})

    def prefixed(self, prefix: str) -> "InputError":
        """The same error with ``prefix`` (e.g. a file name) before both texts; hint kept."""
        return InputError(f"{prefix}{self}", ui_message=f"{prefix}{self.ui_message}", hint=self.hint)
