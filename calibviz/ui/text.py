"""Text from data or the address bar, made inert before Streamlit renders it as Markdown.

File names, column names, class labels, categorical levels, model names and URL values are the user's data:
``![t](http://host/x.png)`` in a label must not make the browser fetch from that host, ``[text](url)`` must not
become a link, ``$...$`` must not become LaTeX and ``:red[...]`` must not change colours. Every ASCII
punctuation character gets a backslash (CommonMark renders an escaped punctuation character as itself), which
also breaks bare-URL autolinks (``http\\://``).
"""
from __future__ import annotations

import re

__all__ = ["md"]

_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character


def md(text) -> str:
    """``text`` as inert Markdown: shown exactly as written, never as a link, image, formula or format.

    Examples
    --------
    >>> md("![t](http://host/x.png)")
    '\\\\!\\\\[t\\\\]\\\\(http\\\\:\\\\/\\\\/host\\\\/x\\\\.png\\\\)'
    >>> md("age_years")
    'age\\\\_years'
    """
    text = " ".join(str(text).splitlines())  # a newline could open a new Markdown block
    return _PUNCTUATION.sub(r"\\\1", text)
