"""Live trip pages: one server-sent event stream per open page.

`hub.LiveHub` follows the database's after-commit change signal and tells
every open stream of a trip what changed (versions and ids, never content),
keeps a short replay buffer per trip for reconnects, and tracks who has the
trip open on which day (presence). `stream` holds one connection's queue and
its ASGI response. See docs/architecture.md ("Live pages").
"""
