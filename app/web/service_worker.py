"""GET /sw.js: the page's service worker (public/sw.js) with the app shell it
caches at install written in front of it:

    const SHELL = {"version": "<hash of every shell file>", "files": ["/", "/app.js", ...]};

The shell is every file the page itself loads (public/, but for the admin
page and the cards gallery, plus Leaflet's files), so nothing needs listing
by hand. The version hashes their bytes: any change to the page changes
/sw.js, the browser installs the new worker beside the old one, and it takes
over at the next start (public/sw.js explains why never sooner). No build
step: the list is read from the files on disk, again only when one of them
changed (their sizes and times).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from xstatic.pkg import leaflet as xstatic_leaflet

# Other pages, and the worker itself (it is not part of what it caches).
NOT_SHELL = {"sw.js", "admin.html", "admin.js", "admin.css", "cards-gallery.html", "cards-gallery.js",
             "cards-gallery.json"}
LEAFLET_FILES = ("leaflet.css", "leaflet-src.esm.js")


class ShellWorker:
    def __init__(self, public_dir: Path, leaflet_dir: Path = Path(xstatic_leaflet.BASE_DIR)):
        self.public_dir, self.leaflet_dir = public_dir, leaflet_dir
        self._stamp: tuple | None = None
        self._script = b""

    def files(self) -> list[tuple[str, Path]]:
        """(URL, file) for every file of the shell, in a stable order."""
        out = [("/", self.public_dir / "index.html")]
        for path in sorted(self.public_dir.rglob("*")):
            relative = path.relative_to(self.public_dir).as_posix()
            if path.is_file() and relative not in NOT_SHELL and not relative.startswith("."):
                out.append((f"/{relative}", path))
        for name in LEAFLET_FILES:
            out.append((f"/vendor/leaflet/{name}", self.leaflet_dir / name))
        for path in sorted((self.leaflet_dir / "images").glob("*.png")):
            out.append((f"/vendor/leaflet/images/{path.name}", path))
        return out

    def script(self) -> bytes:
        files = self.files()
        source = self.public_dir / "sw.js"
        stamp = tuple((url, p.stat().st_mtime_ns, p.stat().st_size) for url, p in [*files, ("", source)])
        if stamp != self._stamp:
            digest = hashlib.sha256()
            for url, path in [*files, ("/sw.js", source)]:
                digest.update(url.encode() + b"\0" + path.read_bytes() + b"\0")
            shell = {"version": digest.hexdigest()[:16], "files": [url for url, _ in files]}
            self._script = b"const SHELL = " + json.dumps(shell).encode() + b";\n" + source.read_bytes()
            self._stamp = stamp
        return self._script


async def service_worker(request: Request) -> Response:
    """The app's ShellWorker (`app.state.shell_worker`, set by create_app)."""
    worker: ShellWorker = request.app.state.shell_worker
    # no-cache: the browser asks each time it checks for an update (every start).
    return Response(await run_in_threadpool(worker.script), media_type="text/javascript",
                    headers={"Cache-Control": "no-cache"})
