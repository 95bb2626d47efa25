"""Re-render the gallery images: run every python block of docs/figures.md in order.

A block ending with ``# image: NAME`` saves its ``fig`` to docs/img/NAME.png
(kaleido + a Chrome/Chromium). Run: python docs/img/make_gallery.py
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import kaleido

HERE = Path(__file__).resolve().parent
WIDTH = 860


def _shrink(path: Path) -> None:
    """256-colour palette PNG: about a third of the size, no visible change for flat plots."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - optional
        return
    with Image.open(path) as im:
        im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def main():
    warnings.filterwarnings("ignore")
    kaleido.start_sync_server(silence_warnings=True)
    text = (HERE.parent / "figures.md").read_text()
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", text, flags=re.S):
        exec(compile(block, "figures.md", "exec"), namespace)
        m = re.search(r"# image: (\w+)", block)
        if m:
            fig = namespace["fig"]
            path = HERE / f"{m.group(1)}.png"
            width = fig.layout.width or WIDTH  # a slide layout keeps its own 1600x900
            fig.write_image(path, width=width, height=fig.layout.height, scale=1 if width <= WIDTH else 0.6)
            _shrink(path)
            print("wrote", m.group(1))


if __name__ == "__main__":
    main()
