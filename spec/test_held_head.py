"""app/web/uvicorn_server.py's HeldHead: a response's head and body leave in one send."""

from __future__ import annotations

import asyncio

from app.web.uvicorn_server import HeldHead


class Recorder:
    def __init__(self):
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data):
        self.writes.append(bytes(data))

    def is_closing(self):
        return self.closed

    def close(self):
        self.closed = True

    def get_write_buffer_size(self):
        return 0

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 1) if name == "peername" else default


def test_head_and_body_go_out_in_one_write():
    async def main():
        t = Recorder()
        held = HeldHead(t)
        held.write(b"HTTP/1.1 200 OK\r\n\r\n")
        assert t.writes == []
        held.write(b"x" * HeldHead.HOLD)
        assert t.writes == [b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * HeldHead.HOLD]
        held.write(b"")
        await asyncio.sleep(0)
        assert len(t.writes) == 1
        assert held.get_extra_info("peername") == ("127.0.0.1", 1)   # the rest is the transport's
    asyncio.run(main())


def test_a_small_answer_goes_out_with_its_body_or_its_end_not_later():
    async def main():
        t = Recorder()
        held = HeldHead(t)
        held.write(b"head ")
        assert held.get_write_buffer_size() == len(b"head ")
        held.write(b"body")
        assert t.writes == [b"head body"]   # at once: the next write sends what waits
        held.write(b"HTTP/1.1 304 Not Modified\r\n\r\n")
        held.write(b"")   # the end of an answer with a Content-Length: h11 writes nothing
        assert t.writes == [b"head body", b"HTTP/1.1 304 Not Modified\r\n\r\n"]
    asyncio.run(main())


def test_a_write_nothing_follows_goes_out_by_the_end_of_the_turn():
    async def main():
        t = Recorder()
        held = HeldHead(t)
        held.write(b"a stream's head")
        assert t.writes == []
        await asyncio.sleep(0)
        assert t.writes == [b"a stream's head"]
        held.write(b"event")
        await asyncio.sleep(0)
        assert t.writes == [b"a stream's head", b"event"]
    asyncio.run(main())


def test_close_sends_what_waits_and_a_closed_transport_gets_nothing():
    async def main():
        t = Recorder()
        held = HeldHead(t)
        held.write(b"last")
        held.close()
        assert t.writes == [b"last"] and t.closed
        held.write(b"late")
        await asyncio.sleep(0)
        assert t.writes == [b"last"]   # the transport was closing: dropped, as asyncio would
    asyncio.run(main())
