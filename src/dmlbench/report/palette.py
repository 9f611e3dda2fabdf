"""One look for every figure and page: a colour per method family, a marker per method within
its family, the same in every figure of every report.

Colours are Okabe & Ito's eight (colour-blind safe; "Color Universal Design", 2008): one per
family of the package's methods (the `family` attribute of each method class, recorded with the
runs), black for the reference metric (Euclidean), and for any other family (a plug-in's) one of
the remaining colours chosen by a hash of its name, so it is the same on every page. Within a
family, methods differ by marker (and line style in line plots), in the order of their labels.

A figure of one family only (the NCA variants, the boosted metrics) colours by registered
method name instead (`by="method_name"`), in the same palette, and marks each label within it.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import pandas as pd
from matplotlib.lines import Line2D

BLACK, ORANGE, SKY_BLUE, GREEN = "#000000", "#E69F00", "#56B4E9", "#009E73"
YELLOW, BLUE, VERMILLION, PURPLE = "#F0E442", "#0072B2", "#D55E00", "#CC79A7"
#: Okabe & Ito's palette without black, in their order
OKABE_ITO = [ORANGE, SKY_BLUE, GREEN, YELLOW, BLUE, VERMILLION, PURPLE]
#: the colour of each family of the package's methods
FAMILY_COLOURS = {"baseline": BLUE, "nca": ORANGE, "move": GREEN, "boost": PURPLE,
                  "local": VERMILLION}
#: colours left for other families (plug-ins), chosen by a hash of the family's name
OTHER_COLOURS = [SKY_BLUE, "#999999", YELLOW]
#: the registered name of the reference metric, drawn in black
REFERENCE = "euclidean"
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">", "p", "d", "8"]
LINESTYLES = ["-", "--", ":", "-."]


@dataclass(frozen=True)
class Style:
    """How one method is drawn."""

    colour: str
    marker: str
    linestyle: str

    def points(self) -> dict:
        """Keyword arguments of `ax.scatter`."""
        return {"color": self.colour, "marker": self.marker}

    def line(self) -> dict:
        """Keyword arguments of `ax.plot`."""
        return {"color": self.colour, "marker": self.marker, "linestyle": self.linestyle}


def family_colour(family: str | None) -> str:
    """The colour of a method family (`FAMILY_COLOURS`, else a hash into `OTHER_COLOURS`)."""
    family = str(family or "")
    if family in FAMILY_COLOURS:
        return FAMILY_COLOURS[family]
    return OTHER_COLOURS[zlib.crc32(family.encode()) % len(OTHER_COLOURS)]


def _keys(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per method label with its family and registered name."""
    columns = [c for c in ("method", "family", "method_name") if c in runs]
    frame = runs[columns].drop_duplicates("method").set_index("method")
    for column in ("family", "method_name"):
        if column not in frame:
            frame[column] = ""
    return frame.fillna("")


def styles(runs: pd.DataFrame, by: str = "family") -> dict[str, Style]:
    """{method label: Style} of the runs (columns `method`, `family`, `method_name`).

    `by="family"`: the family's colour (black for the reference metric); `by="method_name"`:
    a colour per registered name, in the order of the names (for figures of one family).
    Markers and line styles number the labels within their colour, in label order."""
    keys = _keys(runs)
    if by == "family":
        colour = {m: BLACK if row["method_name"] == REFERENCE else family_colour(row["family"])
                  for m, row in keys.iterrows()}
    elif by == "method_name":
        names = sorted(set(keys["method_name"]))
        palette = {n: OKABE_ITO[i % len(OKABE_ITO)] for i, n in enumerate(names)}
        colour = {m: palette[row["method_name"]] for m, row in keys.iterrows()}
    else:
        raise ValueError(f"styles: by must be 'family' or 'method_name', got {by!r}")
    out, seen = {}, {}
    for method in sorted(keys.index, key=str):
        i = seen.get(colour[method], 0)
        seen[colour[method]] = i + 1
        out[method] = Style(colour[method], MARKERS[i % len(MARKERS)],
                            LINESTYLES[i // len(MARKERS) % len(LINESTYLES)])
    return out


def family_of(runs: pd.DataFrame) -> dict[str, str]:
    """{method label: family} of the runs."""
    return _keys(runs)["family"].to_dict()


def legend_handles(style: dict[str, Style], methods: list[str], line: bool = False) -> list:
    """Legend entries for `methods`, in that order."""
    return [Line2D([], [], label=m, markersize=6,
                   **(style[m].line() if line else {**style[m].points(), "linestyle": ""}))
            for m in methods if m in style]
