"""The client's address for a request, as far as we can trust it.

The TCP peer is the client unless the peer is a proxy listed in
WAYLINE_TRUSTED_PROXIES (IPs or CIDRs; none by default). Only then are
forwarded headers read: on Fly, `Fly-Client-IP` (Fly's proxy sets it from
the connection it accepted; elsewhere a proxy that does not set it passes a
client's own through, so it is read only when running on Fly), else
`X-Forwarded-For` walked from the right past our own trusted proxies. A
header sent by anyone else is ignored, so a client cannot pick the address
the sign-in limits count.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_networks(text: str | None) -> tuple[str, ...]:
    """WAYLINE_TRUSTED_PROXIES as normalized networks; ValueError names a bad entry."""
    entries = tuple(e.strip() for e in (text or "").split(",") if e.strip())
    for entry in entries:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ValueError(f"not an IP address or CIDR: {entry!r}") from None
    return entries


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(e, strict=False) for e in entries)


def _address(text: str) -> Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def _trusted(address: Address | None, networks: tuple[Network, ...]) -> bool:
    return address is not None and any(address in net for net in networks)


def address_key(address: str) -> str:
    """What the per-address limits count: an IPv4 address, or an IPv6 address's
    /64 (one network hands a customer a /64: counting whole addresses would
    give one host 2**64 fresh starts)."""
    parsed = _address(address)
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return address


def peer_is_trusted(scope, trusted_proxies: tuple[str, ...]) -> bool:
    """True when the TCP peer is one of our trusted proxies (its forwarded headers may be read)."""
    networks = _networks(trusted_proxies)
    return bool(networks) and _trusted(_address((scope.get("client") or ("", 0))[0]), networks)


def counted_address(scope, settings) -> str:
    """What the per-address limits (sign-in, sign-up) count for this request:
    the client's address, an IPv6 client's /64."""
    return address_key(client_address(scope, settings.trusted_proxies, fly=settings.fly_client_ip))


def client_address(scope, trusted_proxies: tuple[str, ...], *, fly: bool = False) -> str:
    """The client's address for this request, as far as we can trust it."""
    peer = (scope.get("client") or ("unknown", 0))[0]
    networks = _networks(trusted_proxies)
    if not networks or not _trusted(_address(peer), networks):
        return peer
    forwarded: list[str] = []
    for name, value in scope["headers"]:
        if name == b"fly-client-ip" and fly:
            client = _address(value.decode("latin-1"))
            if client is not None:
                return str(client)
        elif name == b"x-forwarded-for":
            forwarded.extend(value.decode("latin-1").split(","))
    for hop in reversed(forwarded):
        address = _address(hop)
        if address is None:
            break              # unreadable: nothing left of it can be trusted
        if not _trusted(address, networks):
            return str(address)
    return peer
