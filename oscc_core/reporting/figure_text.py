"""The smallest legend and tick text of a figure, written into every PNG made of it.

A figure's text is readable or not only where it is displayed: a 7-point legend saved at
100 dpi is 9.7 pixels tall in the PNG, and 6 pixels on a page that shows the PNG at 62% of
its width. The size in the PNG is known when the PNG is written, the display scale only in
the page. So `record_text_sizes(fig)` makes every PNG of `fig` (the notebook's inline image
that `glue` stores, and `savefig`'s file) carry a tEXt chunk `TEXT_SIZES_KEY` with the
smallest visible legend or tick-label text: its size in points, the dpi it was drawn at,
what it is and its first characters, as ASCII JSON. The book check
(scripts/check_book.py) reads it back from the image the page shows and multiplies its
size in pixels (points x dpi / 72) by the image's display scale.
"""
from __future__ import annotations

import functools
import json

#: The PNG tEXt keyword of the record.
TEXT_SIZES_KEY = "oscc:smallest-text"
#: Points per inch: a text of s points is s * dpi / POINTS_PER_INCH pixels tall at dpi.
POINTS_PER_INCH = 72.0


def _visible(artist) -> bool:
    return artist.get_visible() and bool(artist.get_text().strip())


def text_sizes(fig) -> list[tuple[str, float, str]]:
    """Every visible legend text (entries and title) and tick label of `fig`, as (kind, size in
    points, text); kind is "legend" or "tick". Axes switched off or hidden are left out."""
    out = []
    legends = list(fig.legends)
    for ax in fig.axes:
        if ax.get_legend() is not None:
            legends.append(ax.get_legend())
        if not (ax.get_visible() and ax.axison):
            continue
        for label in ax.get_xticklabels(which="both") + ax.get_yticklabels(which="both"):
            if _visible(label):
                out.append(("tick", float(label.get_fontsize()), label.get_text()))
    for legend in legends:
        if not legend.get_visible():
            continue
        for text in [*legend.get_texts(), legend.get_title()]:
            if _visible(text):
                out.append(("legend", float(text.get_fontsize()), text.get_text()))
    return out


def smallest_text_record(fig, dpi: float) -> dict | None:
    """The record of `fig`'s smallest legend or tick text drawn at `dpi` (dots per inch):
    {"pt", "dpi", "kind", "text"}; None for a figure without such text."""
    sizes = text_sizes(fig)
    if not sizes:
        return None
    kind, pt, text = min(sizes, key=lambda s: s[1])
    return {"pt": round(pt, 3), "dpi": round(float(dpi), 3), "kind": kind, "text": " ".join(text.split())[:40]}


def record_text_sizes(fig):
    """Make every PNG written of `fig` carry its smallest-text record (`TEXT_SIZES_KEY`); returns `fig`.

    Wraps the figure's canvas's `print_png`, which both `savefig` and IPython's inline
    display (and so `glue`) call, with the figure's dpi already set to the output's."""
    canvas = fig.canvas
    if getattr(canvas.print_png, "_records_text_sizes", False):
        return fig
    print_png = canvas.print_png

    # functools.wraps gives the wrapper the original's signature, by which matplotlib
    # decides which of savefig's keywords to pass on
    @functools.wraps(print_png)
    def print_png_with_record(filename_or_obj, *args, metadata=None, **kwargs):
        record = smallest_text_record(fig, fig.dpi)
        if record is not None:
            metadata = {**(metadata or {}), TEXT_SIZES_KEY: json.dumps(record, sort_keys=True, ensure_ascii=True)}
        return print_png(filename_or_obj, *args, metadata=metadata, **kwargs)

    print_png_with_record._records_text_sizes = True
    canvas.print_png = print_png_with_record
    return fig
