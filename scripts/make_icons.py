"""Draws the installable app's icons (public/icons/*.png) from the favicon's
design in public/index.html: a teal rounded square with a white route line.
Run it again only when the design changes; the PNGs are committed.

    .venv/bin/python scripts/make_icons.py

numpy (a dependency already) does the drawing; the PNG is written by hand
(zlib), so no imaging library is needed.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "public" / "icons"
TEAL = np.array([0x0F, 0x76, 0x6E], dtype=float)
WHITE = np.array([255, 255, 255], dtype=float)
SUPERSAMPLE = 4


def coverage(size: int, *, rounded: bool, inset: float) -> tuple[np.ndarray, np.ndarray]:
    """(background, line) coverage in 0..1 for a size x size icon, on the
    favicon's 32-unit grid. `inset` shrinks the line toward the centre (the
    maskable icon keeps it inside the safe zone)."""
    n = size * SUPERSAMPLE
    unit = n / 32
    ys, xs = (np.mgrid[0:n, 0:n] + 0.5) / unit   # sample centres in favicon units
    if rounded:   # rx = 8, as the favicon
        r = 8.0
        cx = np.clip(xs, r, 32 - r)
        cy = np.clip(ys, r, 32 - r)
        background = ((xs - cx) ** 2 + (ys - cy) ** 2 <= r * r).astype(float)
    else:
        background = np.ones_like(xs)
    # The favicon's path: M8 22 c4-10 12-2 16-12, stroke 3, round caps.
    t = np.linspace(0, 1, 400)[:, None]
    p0, p1, p2, p3 = (np.array(p, dtype=float) for p in ((8, 22), (12, 12), (20, 20), (24, 10)))
    curve = (1 - t) ** 3 * p0 + 3 * (1 - t) ** 2 * t * p1 + 3 * (1 - t) * t ** 2 * p2 + t ** 3 * p3
    curve = 16 + (curve - 16) * (1 - inset)
    half = 1.5 * (1 - inset)
    line = np.zeros_like(xs, dtype=bool)
    reach = int(np.ceil(half * unit)) + 1
    for x, y in curve * unit:   # stamp a disc at each point of the curve, only around it
        x0, x1 = max(0, int(x) - reach), min(n, int(x) + reach + 1)
        y0, y1 = max(0, int(y) - reach), min(n, int(y) + reach + 1)
        d2 = (xs[y0:y1, x0:x1] - x / unit) ** 2 + (ys[y0:y1, x0:x1] - y / unit) ** 2
        line[y0:y1, x0:x1] |= d2 <= half * half
    down = lambda a: a.reshape(size, SUPERSAMPLE, size, SUPERSAMPLE).mean(axis=(1, 3))  # noqa: E731
    return down(background), down(line.astype(float) * background)


def rgba(size: int, *, rounded: bool, inset: float = 0.0) -> bytes:
    background, line = coverage(size, rounded=rounded, inset=inset)
    colour = TEAL * (1 - line[..., None]) + WHITE * line[..., None]
    alpha = background[..., None] * 255
    pixels = np.concatenate([colour, alpha], axis=-1).round().clip(0, 255).astype(np.uint8)
    return b"".join(b"\0" + row.tobytes() for row in pixels)


def png(size: int, raw: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)   # 8-bit RGBA
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for size in (192, 512):
        (OUT / f"icon-{size}.png").write_bytes(png(size, rgba(size, rounded=True)))
    # Maskable: full bleed, the line inside the central safe zone (a circle of 80%).
    (OUT / "icon-maskable-512.png").write_bytes(png(512, rgba(512, rounded=False, inset=0.25)))


if __name__ == "__main__":
    main()
