"""A generated two-camera re-identification set: procedural pedestrians, no download needed.

Each person is a 128 x 48 figure with a head, a shirt and trousers of random colours, a shirt
texture (stripes of random frequency and phase) and a random bag patch. The two cameras see them
with different illumination (per-channel gain and gamma), viewpoint (mirror flip, horizontal and
vertical shift, small scale change), partial occlusion of the legs and sensor noise, so that plain
template matching works but is far from perfect, as on VIPeR.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
import pandas as pd
from pydantic import Field

from ..params import NonNegativeInt
from ..registry import datasets
from .base import Dataset, Loader, fingerprint_arrays

H, W = 128, 48


def _hsv_to_rgb(h, s, v):
    import colorsys

    return np.array(colorsys.hsv_to_rgb(h, s, v))


def _person(rng: np.random.Generator) -> dict:
    palette = lambda: _hsv_to_rgb(rng.random(), rng.uniform(0.2, 1.0), rng.uniform(0.25, 0.95))
    return {
        "skin": _hsv_to_rgb(rng.uniform(0.02, 0.1), rng.uniform(0.2, 0.6), rng.uniform(0.35, 0.9)),
        "hair": _hsv_to_rgb(rng.uniform(0.0, 0.12), rng.uniform(0.2, 0.8), rng.uniform(0.05, 0.5)),
        "shirt": palette(),
        "shirt2": palette(),
        "pants": palette(),
        "stripe_freq": rng.choice([0.0, 0.0, 0.15, 0.3, 0.5]),
        "stripe_phase": rng.uniform(0, 2 * np.pi),
        "shirt_end": rng.uniform(0.52, 0.62),
        "width": rng.uniform(0.8, 1.0),
        "bag": rng.random() < 0.3,
        "bag_colour": palette(),
    }


def _render(p: dict, cam_gain: np.ndarray, cam_gamma: float, rng: np.random.Generator) -> np.ndarray:
    yy, xx = np.mgrid[0:H, 0:W] / np.array([H, W])[:, None, None]
    shift_x = rng.uniform(-0.08, 0.08)
    shift_y = rng.uniform(-0.04, 0.04)
    scale = rng.uniform(0.92, 1.08)
    xx = (xx - 0.5 - shift_x) / scale
    yy = (yy - shift_y - 0.5) / scale + 0.5
    if rng.random() < 0.5:
        xx = -xx
    img = np.empty((H, W, 3))
    img[:] = rng.uniform(0.3, 0.7, size=3) * rng.uniform(0.6, 1.0)  # background
    img += rng.normal(0, 0.05, size=(H, W, 1)) * (np.sin(yy * rng.uniform(5, 30)) > 0)[..., None]
    half = p["width"] / 2
    head = ((xx / 0.13) ** 2 + ((yy - 0.1) / 0.07) ** 2) < 1
    hair = head & (yy < 0.075)
    torso = (np.abs(xx) < half * 0.6) & (yy >= 0.17) & (yy < p["shirt_end"])
    legs = (np.abs(xx) < half * 0.5) & (yy >= p["shirt_end"]) & (yy < 0.97) & (np.abs(xx) > 0.02)
    stripes = np.sin(2 * np.pi * p["stripe_freq"] * yy * H / 4 + p["stripe_phase"]) > 0
    img[head] = p["skin"]
    img[hair] = p["hair"]
    img[torso] = np.where(stripes[torso][:, None] & (p["stripe_freq"] > 0), p["shirt2"], p["shirt"])
    img[legs] = p["pants"]
    if p["bag"]:
        bag = (np.abs(xx - half * 0.55) < 0.12) & (yy > 0.35) & (yy < 0.55)
        img[bag] = p["bag_colour"]
    # occlusion of the legs by a random foreground bar in some images
    if rng.random() < 0.2:
        y0 = rng.uniform(0.6, 0.9)
        img[(yy > y0) & (yy < y0 + 0.1)] = rng.uniform(0, 1, size=3)
    img = np.clip(img * cam_gain * rng.uniform(0.8, 1.2), 0, 1) ** cam_gamma
    img += rng.normal(0, 0.04, size=img.shape)
    return (np.clip(img, 0, 1) * 255).astype(np.uint8)


@datasets.register("synthetic_reid")
class SyntheticReId(Loader):
    """Generated two-camera pedestrians (128x48 RGB), VIPeR-like; no download needed."""

    def __init__(self, n_people: Annotated[int, Field(ge=3)] = 120, random_state: NonNegativeInt = 0):
        self.n_people = n_people
        self.random_state = random_state

    def load(self, data_root=None) -> Dataset:
        rng = np.random.default_rng(self.random_state)
        cams = {"a": (rng.uniform(0.8, 1.2, 3), rng.uniform(0.8, 1.0)),
                "b": (rng.uniform(0.6, 1.3, 3), rng.uniform(1.0, 1.4))}
        images, rows = [], []
        for pid in range(self.n_people):
            person = _person(rng)
            for cam, (gain, gamma) in cams.items():
                images.append(_render(person, gain, gamma, rng))
                rows.append({"id": f"{pid:03d}_{cam}", "identity": pid, "cam": cam})
        arr = np.stack(images)
        return Dataset(name="synthetic_reid", items=pd.DataFrame(rows), arrays={"images": arr},
                       fingerprint=fingerprint_arrays(arr))
