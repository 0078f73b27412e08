"""Laws of curvlab.plotting.explorers: one frame per combination, static and live agree."""

import base64
import json
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from curvlab.plotting.explorers import FrameExplorer, Slider  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _line(a, b=0):
    fig, ax = plt.subplots(figsize=(1.5, 1.5))
    ax.plot([0, 1], [b, a])
    return fig


def _explorer():
    sliders = [
        Slider("a", "slope a", (0, 1, 2), start=1, live_step=0.5),
        Slider("b", "offset b", (0, 5)),
    ]
    return FrameExplorer(_line, sliders, caption=lambda a, b: f"a = {a}, b = {b}", dpi=20)


def _data(html):
    return json.loads(re.search(r'class="curvlab-explorer-data">(.*?)</script>', html).group(1))


def test_static_explorer_embeds_one_frame_per_combination_of_values():
    explorer = _explorer()
    html = explorer.to_html()
    frames = _data(html)["frames"]
    assert sorted(frames) == ["0,0", "0,5", "1,0", "1,5", "2,0", "2,5"]
    assert frames["2,5"]["caption"] == "a = 2, b = 5"
    assert len({frame["src"] for frame in frames.values()}) == 6  # every frame differs
    assert base64.b64decode(frames["0,0"]["src"].split(",", 1)[1]).startswith(PNG_MAGIC)
    assert html.count('type="range"') == 2 and 'value="1"' in html  # starts at a = 1
    assert "Static explorer" in html and "6 frames" in html


def test_static_explorer_requests_nothing_outside_the_page():
    html = _explorer().to_html()
    assert not re.search(r'(src|href)\s*=\s*"(?!data:)', html)
    assert "://" not in html.replace("data:image/png;base64,", "")


def test_live_explorer_redraws_any_value_and_reuses_the_precomputed_frames():
    explorer = _explorer()
    live = explorer.live_widget()
    note, slope, offset, image, caption = live.children
    assert "Live explorer" in note.value
    assert bytes(image.value) == explorer.frames["1,0"][0]
    slope.value = 2
    assert bytes(image.value) == explorer.frames["2,0"][0] and caption.value == "a = 2, b = 0"
    slope.value = 1.5  # between the precomputed values: drawn by the kernel
    assert bytes(image.value).startswith(PNG_MAGIC)
    assert bytes(image.value) not in {png for png, _ in explorer.frames.values()}
    assert caption.value == "a = 1.5, b = 0"


def test_the_cell_output_offers_the_static_page_and_the_live_widget():
    bundle = _explorer()._repr_mimebundle_()
    assert "curvlab-explorer" in bundle["text/html"]
    assert WIDGET_VIEW in bundle and bundle[WIDGET_VIEW]["model_id"]


def test_bad_sliders_are_refused_naming_the_problem():
    with pytest.raises(ValueError, match="at least two"):
        Slider("a", "a", (1,))
    with pytest.raises(ValueError, match="start"):
        Slider("a", "a", (1, 2), start=3)
    with pytest.raises(ValueError, match="identifier"):
        Slider("a b", "a", (1, 2))
    with pytest.raises(TypeError, match="Slider"):
        FrameExplorer(_line, [("a", (1, 2))])
