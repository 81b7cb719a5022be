"""Where webhook calls may go: the guard against server-side request forgery.

Whoever registers a webhook bot chooses where the workers POST its turns. Left alone, that
reaches whatever the workers reach: cloud metadata (169.254.169.254), the cluster's private
networks, Redis on 127.0.0.1. `check_webhook_url` refuses a URL that is not absolute http(s),
that carries credentials (`user:pass@`), whose host does not resolve, or whose host is or
resolves to an address that is not globally reachable: loopback, private, link-local,
multicast, reserved, unspecified, IPv6 site-local, shared (100.64/10) or documentation
space, and the IPv4-mapped, 6to4 and NAT64 forms of those (`::ffff:127.0.0.1`). Every
address a host resolves to must pass. With `allow_private` (setting
`CARDARENA_WEBHOOK_ALLOW_PRIVATE`, for tests and private deployments) only the syntax is
checked and nothing is resolved.

Resolving, then letting the HTTP client resolve again to connect, leaves a window in which
the name may change (DNS rebinding): this check narrows the risk, it does not close it, so
the workers' egress should also be restricted at the network layer (a Kubernetes
NetworkPolicy, a firewall).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str], Sequence[str]]
"""Returns the addresses a host name resolves to; raises OSError when it resolves to none."""

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
"""The well-known NAT64 prefix: its last 32 bits are the IPv4 address reached."""


class WebhookUrlRefused(ValueError):
    """A webhook URL the workers may not call; the message says why."""


def resolve_host(host: str) -> list[str]:
    """Returns the IPv4 and IPv6 addresses `host` resolves to (the system resolver)."""
    found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    families = (socket.AF_INET, socket.AF_INET6)
    return [str(sockaddr[0]) for family, _, _, _, sockaddr in found if family in families]


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """Returns the IPv4 address an IPv4-mapped, 6to4 or NAT64 address leads to, else None."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return None


def _refusal(address: Address) -> str | None:
    """Returns why `address` may not be called (`a private address`), None if it may.

    The flags are checked one by one rather than trusting `is_global` alone, whose ranges
    differ between Python versions (3.11 calls 224.0.0.1 and fec0::1 global).
    """
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            why = _refusal(embedded)
            return None if why is None else f"a form of {embedded}, {why}"
        if address.is_site_local:
            return "a site-local address"
    checks = (
        (address.is_unspecified, "an unspecified address"),
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (address.is_reserved, "a reserved address"),
        (address.is_private, "a private address"),
        (not address.is_global, "an address that is not globally reachable"),
    )
    return next((why for refused, why in checks if refused), None)


def webhook_host(url: str) -> str:
    """Returns the host of `url`; raises WebhookUrlRefused unless it is an absolute http(s)
    URL of a host without credentials."""
    try:
        parts = urlsplit(url)
        host, _port = parts.hostname, parts.port  # `port` raises ValueError for a bad one
    except ValueError as error:
        raise WebhookUrlRefused(f"not a URL: {error}") from None
    if parts.scheme not in {"http", "https"} or not host:
        raise WebhookUrlRefused(f"a webhook needs an http(s) URL of a host, not {url!r}")
    if parts.username is not None or parts.password is not None:
        raise WebhookUrlRefused("a webhook URL may not carry credentials (user:password@)")
    return host


def check_webhook_url(url: str, *, allow_private: bool, resolve: Resolver = resolve_host) -> None:
    """Raises WebhookUrlRefused unless the workers may POST to `url`: see the module."""
    host = webhook_host(url)
    if allow_private:
        return
    try:
        literal: Address | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        why = _refusal(literal)
        if why is not None:
            raise WebhookUrlRefused(f"{host} is {why}")
        return
    try:
        addresses = {found: ipaddress.ip_address(found) for found in resolve(host)}
    except (OSError, UnicodeError, ValueError) as error:
        raise WebhookUrlRefused(f"{host} does not resolve: {error}") from None
    if not addresses:
        raise WebhookUrlRefused(f"{host} does not resolve to an IP address")
    for found, address in addresses.items():
        why = _refusal(address)
        if why is not None:
            raise WebhookUrlRefused(f"{host} resolves to {found}, {why}")
