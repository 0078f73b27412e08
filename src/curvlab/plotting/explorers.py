"""Explorers: a figure under sliders, live in Jupyter and working without a kernel on the site.

An explorer is a function ``render(**values) -> matplotlib Figure`` and the sliders that feed it.
It is shown two ways from one object, so a page can say which one the reader has:

- **static** (``text/html``): every combination of the sliders' values is rendered once when
  the page is built and embedded in the page as a PNG; a few lines of JavaScript in the same
  output swap the picture when a slider moves. No kernel, no request outside the page.
- **live** (``ipywidgets``): in a running notebook the same sliders redraw the figure in the
  kernel, for any value in their range, not only the precomputed ones.

The book's site shows the static form (``nb_mime_priority_overrides`` in ``_config.yml`` puts
``text/html`` first); Jupyter shows the live one (its widget renderer ranks first there).

- :class:`Slider`          one control: a name, a label and its precomputed values.
- :class:`FrameExplorer`   the precomputed frames, the static HTML and the live widget.
"""

from __future__ import annotations

import base64
import io
import itertools
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

import matplotlib.pyplot as plt

__all__ = ["FrameExplorer", "Slider"]

STATIC_NOTE = (
    "<strong>Static explorer</strong>: {frames} frames were computed when this page was built; "
    "moving a slider swaps them in the page, with no kernel and no network. Open the chapter as "
    "a notebook (see the landing page) for live sliders that recompute any value."
)
LIVE_NOTE = (
    "<small><strong>Live explorer</strong>: the kernel redraws the figure for any value of the "
    "sliders.</small>"
)

# Swaps the frame when a slider moves. Runs once per explorer (its own <script> in the output).
_PLAYER = """(function () {
  var root = document.currentScript.parentElement;
  var data = JSON.parse(root.querySelector("script.curvlab-explorer-data").textContent);
  var image = root.querySelector("img.curvlab-explorer-frame");
  var caption = root.querySelector(".curvlab-explorer-caption");
  var inputs = root.querySelectorAll("input.curvlab-explorer-slider");
  function update() {
    var key = [];
    inputs.forEach(function (input) {
      var value = data.values[input.dataset.control][Number(input.value)];
      input.parentElement.querySelector("output").textContent = value;
      key.push(value);
    });
    var frame = data.frames[key.join(",")];
    image.src = frame.src;
    image.alt = frame.caption;
    caption.textContent = frame.caption;
  }
  inputs.forEach(function (input) { input.addEventListener("input", update); });
})();"""


@dataclass(frozen=True)
class Slider:
    """One control: ``name`` (the keyword of ``render``), ``label`` and the ``values`` it takes.

    ``start`` (a member of ``values``) is where it starts; the live slider ranges from the
    smallest to the largest value in steps of ``live_step`` (default: the values' smallest gap).

    >>> Slider("L", "depth L", (1, 2, 4)).start
    1
    """

    name: str
    label: str
    values: tuple[float, ...]
    start: float | None = None
    live_step: float | None = None

    def __post_init__(self):
        if not self.name.isidentifier():
            raise ValueError(f"name must be a Python identifier, got {self.name!r}")
        values = tuple(self.values)
        if len(values) < 2 or len(set(values)) != len(values):
            raise ValueError(f"values must hold at least two distinct numbers, got {values!r}")
        object.__setattr__(self, "values", values)
        if self.start is None:
            object.__setattr__(self, "start", values[0])
        elif self.start not in values:
            raise ValueError(f"start {self.start!r} is not one of the values {values!r}")

    @property
    def integer(self) -> bool:
        return all(isinstance(value, int) for value in self.values)


def _png(figure, dpi: int) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    plt.close(figure)
    return buffer.getvalue()


def _key(values: Sequence[float]) -> str:
    return ",".join(f"{value:g}" for value in values)


class FrameExplorer:
    """A figure ``render(**values)`` under ``sliders``, every combination rendered once.

    ``caption(**values)`` (optional) is the sentence under each frame, e.g. the number it shows.
    ``dpi`` sets the frames' resolution. Display the object as a cell's last expression.

    >>> import matplotlib.pyplot as plt
    >>> def render(a):
    ...     fig, ax = plt.subplots(figsize=(2, 2))
    ...     ax.plot([0, 1], [0, a])
    ...     return fig
    >>> explorer = FrameExplorer(render, [Slider("a", "slope a", (0, 1, 2))], dpi=30)
    >>> len(explorer.frames), explorer.to_html().count("data:image/png;base64")  # + the shown one
    (3, 4)
    """

    def __init__(
        self,
        render: Callable[..., object],
        sliders: Sequence[Slider],
        *,
        caption: Callable[..., str] | None = None,
        dpi: int = 72,
        title: str = "",
    ):
        if not callable(render):
            raise TypeError(f"render must be callable, got {type(render).__name__}")
        self.sliders = tuple(sliders)
        if not self.sliders or not all(isinstance(s, Slider) for s in self.sliders):
            raise TypeError("sliders must be a non-empty sequence of Slider")
        self.render = render
        self.caption = caption or (lambda **values: "")
        self.dpi = dpi
        self.title = title
        self.frames: dict[str, tuple[bytes, str]] = {}
        for combination in itertools.product(*(s.values for s in self.sliders)):
            values = {s.name: value for s, value in zip(self.sliders, combination, strict=True)}
            self.frames[_key(combination)] = (
                _png(render(**values), dpi),
                self.caption(**values),
            )

    def _start(self) -> dict[str, float]:
        return {s.name: s.start for s in self.sliders}

    def to_html(self) -> str:
        """The static explorer: sliders, the frames as data URIs, the player script."""
        frames = {
            key: {"src": "data:image/png;base64," + base64.b64encode(png).decode(), "caption": text}
            for key, (png, text) in self.frames.items()
        }
        values = {s.name: [f"{value:g}" for value in s.values] for s in self.sliders}
        start_key = _key([s.start for s in self.sliders])
        controls = "".join(
            f'<label class="curvlab-explorer-control" style="margin-right: 2em">{escape(s.label)} '
            f'<input type="range" class="curvlab-explorer-slider" data-control="{s.name}" '
            f'min="0" max="{len(s.values) - 1}" step="1" value="{s.values.index(s.start)}" '
            f'aria-label="{escape(s.label)}"> <output>{s.start:g}</output></label>'
            for s in self.sliders
        )
        data = json.dumps({"values": values, "frames": frames}).replace("</", "<\\/")
        start = frames[start_key]
        title = f"<p><strong>{escape(self.title)}</strong></p>" if self.title else ""
        return (
            f'<div class="curvlab-explorer" id="curvlab-explorer-{uuid.uuid4().hex[:8]}" '
            f'data-frames="{len(frames)}">{title}'
            f'<p class="curvlab-explorer-mode">{STATIC_NOTE.format(frames=len(frames))}</p>'
            f'<div class="curvlab-explorer-controls">{controls}</div>'
            f'<img class="curvlab-explorer-frame" src="{start["src"]}" '
            f'alt="{escape(start["caption"])}" style="max-width: 100%">'
            f'<p class="curvlab-explorer-caption">{escape(start["caption"])}</p>'
            f'<script type="application/json" class="curvlab-explorer-data">{data}</script>'
            f"<script>{_PLAYER}</script></div>"
        )

    def live_widget(self):
        """The live explorer: ipywidgets sliders over an Image the kernel redraws."""
        import ipywidgets as widgets

        start = self._start()
        png, text = self.frames[_key(list(start.values()))]
        image = widgets.Image(value=png, format="png", layout=widgets.Layout(max_width="100%"))
        caption = widgets.HTML(escape(text))
        controls = {}
        for s in self.sliders:
            low, high = min(s.values), max(s.values)
            gaps = [b - a for a, b in itertools.pairwise(sorted(s.values))]
            step = s.live_step or min(gaps)
            integer = s.integer and float(step).is_integer()
            kind = widgets.IntSlider if integer else widgets.FloatSlider
            controls[s.name] = kind(
                value=s.start,
                min=low,
                max=high,
                step=step,
                description=s.label,
                style={"description_width": "initial"},
                continuous_update=False,
            )

        def redraw(change=None):
            values = {name: control.value for name, control in controls.items()}
            key = _key(list(values.values()))
            if key in self.frames:
                image.value, text = self.frames[key]
            else:
                image.value, text = _png(self.render(**values), self.dpi), self.caption(**values)
            caption.value = escape(text)

        for control in controls.values():
            control.observe(redraw, names="value")
        return widgets.VBox([widgets.HTML(LIVE_NOTE), *controls.values(), image, caption])

    def _repr_mimebundle_(self, include=None, exclude=None) -> Mapping[str, object]:
        bundle = {
            "text/plain": f"<explorer: {', '.join(s.label for s in self.sliders)}>",
            "text/html": self.to_html(),
        }
        try:
            live = self.live_widget()
        except ImportError:  # no ipywidgets: the static form only
            return bundle
        live_bundle = live._repr_mimebundle_() or {}
        bundle.update({k: v for k, v in live_bundle.items() if k != "text/plain"})
        return bundle
