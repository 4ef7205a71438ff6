"""GET /api/trips/:tripId/agent/events?after=<latest> (nothing new) against
the floor answering the same bytes.

Every open planner page polls this every 12 s, so its cost is the agent's
steady-state load. AI is "on" with a dummy key and an unroutable base URL:
polling never calls the model, and nothing can reach a real provider.

    .venv/bin/python bench/agent_events.py [--rounds 3] [--seconds 2] [--connections 8]

Prints both throughputs and their ratio (target >= 0.8)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fixtures import Seed, migrate
from _loadgen import footer, header, parser, read_vs_floor, wayline

AI_ON = {"OPENAI_API_KEY": "dummy-key-never-sent", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--connections", type=int, default=8)
    args = p.parse_args()
    header("GET agent events, nothing new", args)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with Seed(migrate(tmp, args.root)) as seed:
            [(owner, cookie)] = seed.users(1)
            [trip] = seed.trips(owner, 1, 3, 0)
        with wayline(tmp, args.root, **AI_ON) as app:
            with httpx.Client(base_url=f"http://127.0.0.1:{app.port}", headers={"Cookie": cookie}) as c:
                for i in range(30):  # 30 timeline rows
                    c.post(f"/api/trips/{trip.id}/ops/update_day",
                           json={"dayId": trip.days[i % 3], "note": f"note {i}"}).raise_for_status()
                latest = c.get(f"/api/trips/{trip.id}/agent/events", params={"after": 0}).json()["data"]["latestSeq"]
                c.get(f"/api/trips/{trip.id}").raise_for_status()  # the page reads the trip, then polls
            read_vs_floor("GET events", args, app, f"/api/trips/{trip.id}/agent/events?after={latest}", cookie,
                          tmp, 0.8)
    footer()


if __name__ == "__main__":
    main()
