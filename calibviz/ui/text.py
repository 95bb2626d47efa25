"""Text from data or the address bar, made inert before Streamlit renders it as Markdown.

File names, column names, class labels, categorical levels, model names and URL values are the user's data:
``![t](http://host/x.png)`` in a label must not make the browser fetch from that host, ``[text](url)`` must not
become a link, ``$...$`` must not become LaTeX and ``:red[...]`` must not change colours. Every ASCII
punctuation character gets a backslash (CommonMark renders an escaped punctuation character as itself), which
and an invisible word joiner breaks bare-URL autolinks (``http://``, ``www.``, ``user@host``), which the
Markdown renderer makes even from escaped text.
"""
from __future__ import annotations

import re

__all__ = ["md"]

_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
_AUTOLINK = re.compile(r"://|www\.|@", flags=re.IGNORECASE)
_JOINER = "\u2060"


def md(text) -> str:
    """``text`` as inert Markdown: shown exactly as written, never as a link, image, formula or format.

    Examples
    --------
    >>> md("![t](http://host/x.png)").replace("\\u2060", "<WJ>")
    '\\\\!\\\\[t\\\\]\\\\(http\\\\:\\\\/<WJ>\\\\/host\\\\/x\\\\.png\\\\)'
    >>> md("age_years")
    'age\\\\_years'
    """
    text = " ".join(str(text).splitlines())  # a newline could open a new Markdown block
    # GFM autolinks bare URLs (http://, www., user@host) in the rendered text, escapes or not: an invisible
    # word joiner (U+2060) inside each pattern breaks them
    text = _AUTOLINK.sub(lambda m: m.group(0)[:-1] + _JOINER + m.group(0)[-1], text)
    return _PUNCTUATION.sub(r"\\\1", text)
