"""What the Redis adapters of the event store share: the key layout and its record, the
client types, how a feed entry reads, and which errors mean "unavailable".

Keys under the namespace `ns`, for a stream `s` of partition `p` (`port.partition_of`):
`{ns}{p<p>}:game:<s>` (the stream, entry ids `0-<version>`), `...:game:<s>:version`,
`...:game:<s>:idem:<key>`, and the partition's feed `{ns}{p<p>}:feed`. The braces are a
Redis Cluster hash tag: every key of an append is in its partition's slot, so the append
is one atomic function call on one node. `{ns}layout` records the layout and the partition
count (`check_layout`); a store written before partitions (`{ns}game:{<s>}`, one
`{ns}feed`) is moved by `shared.store.redis_migrate`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, cast

import msgspec
import redis
from redis.cluster import RedisCluster

from shared.messages.envelope import RecordedEvent
from shared.store.port import FeedEntry, StoreError, StoreUnavailable

_V, _TYPE, _DATA, _SCHEMA, _KIND, _AT, _GAME = b"v", b"type", b"data", b"s", b"k", b"at", b"g"

Fields = dict[bytes, bytes]


Client = redis.Redis | RedisCluster
"""A standalone client or a cluster client: the store takes either."""

_UNAVAILABLE: tuple[type[BaseException], ...] = (
    redis.ConnectionError,
    redis.TimeoutError,
    redis.exceptions.ClusterError,  # ClusterDownError, MasterDownError; a MOVED or TRYAGAIN storm
    redis.exceptions.TryAgainError,
    redis.exceptions.SlotNotCoveredError,  # the client knows no node for the slot
    redis.exceptions.ReadOnlyError,  # a write that reached a demoted primary
)
"""What a store that cannot be reached (a lost connection, a cluster failing over or
resharding) raises: the caller may retry the same request later."""

LUA_NOW_MS = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
"""
"""The start of a Lua script that needs Redis's clock: `ms`, its time in milliseconds."""

_NO_CLUSTER = "Redis Cluster cannot be connected"
"""How redis-py's cluster client says that no node answers (a RedisClusterException, which
also stands for errors that are bugs, such as keys of two slots in one command)."""


@contextlib.contextmanager
def reachable() -> Iterator[None]:
    """Turns redis connection failures, timeouts and cluster errors into `StoreUnavailable`."""
    try:
        yield
    except _UNAVAILABLE as error:
        raise StoreUnavailable(f"redis: {error}") from error
    except redis.exceptions.RedisClusterException as error:
        if not str(error).startswith(_NO_CLUSTER):
            raise
        raise StoreUnavailable(f"redis: {error}") from error


def refuse_decoding(client: Client) -> None:
    """Raises ValueError for a client that decodes replies: payloads are raw bytes."""
    if client.get_encoder().decode_responses:
        raise ValueError("the event store needs a client with decode_responses=False")


def partition_tag(namespace: str, partition: int) -> str:
    """Returns the key prefix of `partition`'s keys: a hash tag of its own."""
    return f"{namespace}{{p{partition}}}:"


def is_cluster(client: Client) -> bool:
    """Returns whether `client` talks to a Redis Cluster."""
    return isinstance(client, RedisCluster)


def primaries(client: Client) -> list[redis.Redis]:
    """Returns a client of each primary: the standalone client itself, or every cluster
    primary's."""
    if isinstance(client, RedisCluster):
        return [client.get_redis_connection(node) for node in client.get_primaries()]  # type: ignore[no-untyped-call]
    return [client]


class LayoutMismatch(StoreError):
    """The Redis holds a store of another layout or partition count: the service must not
    write to it (see `shared.store.redis_migrate`)."""


def function_missing(error: BaseException) -> bool:
    """Returns whether `error` is Redis saying that the function is not loaded."""
    return isinstance(error, redis.ResponseError) and "Function not found" in str(error)


def recorded(stream: str, fields: Fields) -> RecordedEvent:
    """Returns the event stored in the entry `fields` of `stream`."""
    return RecordedEvent(
        stream,
        fields[_KIND].decode(),
        int(fields[_V]),
        fields[_TYPE].decode(),
        fields[_DATA],
        int(fields[_SCHEMA]),
        int(fields[_AT]),
    )


def text_of(value: object) -> str:
    """Returns a reply value as text."""
    return value.decode() if isinstance(value, bytes) else str(value)


def position_text(position: bytes | str) -> str:
    """Returns a feed position as text."""
    return position.decode() if isinstance(position, bytes) else position


MALFORMED = "malformed-feed-entry"
"""The kind of a feed entry that is no event (a field missing or unreadable, written by
hand or by a bug): no game has it, so the projection sets the entry aside as a dead letter
instead of stopping on it."""


def feed_entry(position: bytes, fields: Fields, partition: int = 0) -> FeedEntry:
    """Returns the feed entry at `position` of `partition` holding `fields`; an entry that
    holds no readable event is returned as one of kind MALFORMED carrying its raw fields."""
    try:
        event = recorded(fields[_GAME].decode(), fields)
        return FeedEntry(position.decode(), event, partition)
    except (KeyError, ValueError):  # UnicodeDecodeError is a ValueError
        return _malformed(position.decode(errors="replace"), fields, partition)


def after_start(after: str) -> str:
    """Returns the XRANGE start of the entries after the position `after`."""
    return "-" if after == "0" else f"({after}"


def feed_key(namespace: str, partition: int) -> str:
    """Returns the key of `partition`'s feed."""
    return f"{partition_tag(namespace, partition)}feed"


def stream_key(namespace: str, partition: int, stream: str) -> str:
    """Returns the key of `stream` (in `partition`); its version counter and idempotency
    records are this key with `:version` and `:idem:<key>` after it."""
    return f"{partition_tag(namespace, partition)}game:{stream}"


LAYOUT = "partitioned"
"""The layout this module writes, recorded with the partition count in `{ns}layout`."""


def layout_key(namespace: str) -> str:
    """Returns the key that records the store's layout: `partitioned <n>`."""
    return f"{namespace}layout"


def legacy_feed_key(namespace: str) -> str:
    """Returns the one feed of the layout before partitions."""
    return f"{namespace}feed"


def check_layout(client: Client, namespace: str, partitions: int) -> None:
    """Records this layout and `partitions` in a Redis that holds no store yet; raises
    LayoutMismatch when it holds another layout, another partition count, or the layout
    before partitions (a `{ns}feed`: run the migration first)."""
    key, wanted = layout_key(namespace), f"{LAYOUT} {partitions}".encode()
    with reachable():
        if client.set(key, wanted, nx=True):
            if client.exists(legacy_feed_key(namespace)):
                client.delete(key)
                raise LayoutMismatch(
                    f"the Redis holds a store of the layout before partitions under"
                    f" {namespace!r}: run `cardarena store migrate` first"
                )
            return
        found = cast("bytes | None", client.get(key))
    if found != wanted:
        shown = found.decode(errors="replace") if found else "nothing"
        raise LayoutMismatch(
            f"the Redis holds a store of layout {shown!r} under {namespace!r}, this service"
            f" is set up for {wanted.decode()!r} (CARDARENA_PARTITIONS)"
        )


def _malformed(position: str, fields: Fields, partition: int = 0) -> FeedEntry:
    """Returns the MALFORMED stand-in of the feed entry at `position` holding `fields`: its
    game id as far as it reads (else the position), its raw fields as msgpack."""
    game_id = fields.get(_GAME, b"").decode(errors="replace").replace("\x00", "\ufffd")
    try:
        version = int(fields.get(_V, b"0"))
    except ValueError:
        version = 0
    raw = msgspec.msgpack.encode(fields)
    return FeedEntry(
        position,
        RecordedEvent(game_id or f"feed:{position}", MALFORMED, version, "", raw),
        partition,
    )


def group_entries(reply: Any) -> list[tuple[bytes, Fields]]:
    """Returns the entries of a one-stream XREADGROUP (or XREAD) reply, in RESP2 or RESP3 shape."""
    if not reply:
        return []
    if isinstance(reply, dict):
        (entries,) = reply.values()
        if entries and isinstance(entries[0], list):
            (entries,) = entries
    else:
        ((_, entries),) = reply
    return list(entries)


def node_of(client: Client, key: str) -> redis.Redis:
    """Returns a client of the node that holds `key` (a standalone client is itself)."""
    if isinstance(client, RedisCluster):
        node = client.get_node_from_key(key)  # type: ignore[no-untyped-call]
        return client.get_redis_connection(node)
    return client


def refresh_slots(client: Client) -> None:
    """Asks a cluster for its map of slots again (a failover moved some)."""
    if isinstance(client, RedisCluster):
        with contextlib.suppress(redis.RedisError, redis.exceptions.RedisClusterException):
            client.nodes_manager.initialize()


def replicated(
    client: Client, key: str, command: Callable[[Any], object], replicas: int, timeout_ms: int
) -> tuple[Any, Any]:
    """Sends `command` (given a pipeline) and then WAIT for `replicas` on one connection of
    `key`'s node (WAIT counts the replicas that hold that connection's writes); returns both
    replies. A node that moved or cannot be reached refreshes the cluster's map of slots (so
    a retry reaches a promoted replica) and raises StoreUnavailable."""
    pipe = node_of(client, key).pipeline(transaction=False)
    command(pipe)
    pipe.execute_command("WAIT", replicas, timeout_ms)  # type: ignore[no-untyped-call]
    try:
        reply, confirmed = pipe.execute(raise_on_error=False)
    except (redis.ConnectionError, redis.TimeoutError) as error:
        refresh_slots(client)
        raise StoreUnavailable(f"redis: the node of {key!r} is unreachable: {error}") from error
    if isinstance(reply, redis.ResponseError) and str(reply).startswith(("MOVED", "ASK")):
        refresh_slots(client)
        raise StoreUnavailable(f"redis: the slot moved: {reply}")
    return reply, confirmed


def confirm(confirmed: object, replicas: int, timeout_ms: int, what: str) -> None:
    """Raises StoreUnavailable unless WAIT's reply `confirmed` counts `replicas`."""
    if isinstance(confirmed, Exception):
        raise StoreUnavailable(f"redis: WAIT failed: {confirmed}")
    if int(cast("int", confirmed)) < replicas:
        raise StoreUnavailable(
            f"redis: {confirmed} of {replicas} replicas confirmed {what} within {timeout_ms} ms:"
            " it is not acknowledged"
        )
