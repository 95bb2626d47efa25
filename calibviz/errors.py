"""The one exception type users see for bad input."""


class InputError(ValueError):
    """Bad input: the message says what is wrong, where, and how to fix it.

    Subclass of :class:`ValueError`, so ``except ValueError`` keeps working.
    The CLI prints the message on one line and exits with status 2; the
    dashboard shows it with ``st.error`` and keeps the previously loaded data.
    """
