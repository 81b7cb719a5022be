"""The Redis Streams event store: one stream per game, a feed per partition, appends as a
Redis function; on a standalone Redis or a Redis Cluster. The key layout, the client types
and the errors that mean "unavailable" are `shared.store.redis_common`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

import redis
from redis.cluster import RedisCluster

from shared.messages.envelope import SCHEMA_VERSION, NewEvent, RecordedEvent
from shared.store import merged
from shared.store.port import (
    AppendResult,
    ConcurrencyConflict,
    EventStore,
    FeedConsumer,
    FeedEntry,
    IdempotencyKeyReused,
    StoreError,
    StoreUnavailable,
    cursor_of,
    cursor_positions,
    partition_of,
    position_key,
)
from shared.store.redis_common import (
    Client,
    Fields,
    LayoutMismatch,
    after_start,
    check_layout,
    confirm,
    feed_entry,
    feed_key,
    function_missing,
    group_entries,
    primaries,
    reachable,
    recorded,
    refuse_decoding,
    replicated,
    stream_key,
    text_of,
)
from shared.store.redis_consumer import RedisFeedConsumer
from shared.store.redis_functions import (
    APPEND_FUNCTION,
    APPEND_MANY_FUNCTION,
    LIBRARY,
    LIBRARY_CODE,
    TRIM_FUNCTION,
)

_OK = b"ok"
_REPLAYED = b"replayed"
_CONFLICT = b"conflict"


class RedisEventStore(EventStore):
    """An EventStore over Redis Streams; every append is one atomic call of a Redis function."""

    def __init__(
        self,
        client: Client,
        namespace: str = "cardarena:",
        idempotency_ttl_s: int = 86400,
        partitions: int = 16,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 1000,
    ) -> None:
        refuse_decoding(client)
        if partitions < 1:
            raise ValueError("a store has at least one partition")
        self._client = client
        self._namespace = namespace
        self._ttl = str(idempotency_ttl_s)
        self._partitions = partitions
        self._feeds = [feed_key(namespace, p) for p in range(partitions)]
        self._wait_replicas = wait_replicas
        self._wait_timeout_ms = wait_timeout_ms
        self._loaded = False
        self._layout_checked = False

    @property
    def client(self) -> Client:
        """Returns the client the store talks through."""
        return self._client

    @property
    def namespace(self) -> str:
        """Returns the prefix of the store's keys."""
        return self._namespace

    @property
    def partitions(self) -> int:
        return self._partitions

    consumer = merged.consumer

    def partition_consumer(
        self, group: str, name: str, partition: int, claim_idle_ms: int = 30000
    ) -> FeedConsumer:
        return RedisFeedConsumer(
            self._client, group, name, self._namespace, claim_idle_ms, partition
        )

    def _key_of(self, stream: str) -> str:
        """Returns the Redis key of `stream`, in its partition's slot."""
        return stream_key(self._namespace, partition_of(stream, self._partitions), stream)

    def _load_library(self) -> None:
        """Loads (or replaces) the Lua library that holds the append function, on every
        primary; first checks that the Redis holds this store's layout (once)."""
        if not self._layout_checked:
            check_layout(self._client, self._namespace, self._partitions)
            self._layout_checked = True
        for primary in primaries(self._client):
            primary.function_load(LIBRARY_CODE, replace=True)
        self._loaded = True

    def _append_keys(self, stream: str) -> list[str]:
        """Returns the keys every append to `stream` touches: the stream, its version counter
        and its partition's feed (one slot)."""
        key = self._key_of(stream)
        return [key, f"{key}:version", self._feeds[partition_of(stream, self._partitions)]]

    def _call_args(
        self,
        stream: str,
        kind: str,
        expected_version: int,
        events: Sequence[NewEvent],
        *,
        idempotency_key: str | None,
        fingerprint: str,
    ) -> tuple[int, list[str | bytes | int]]:
        """Returns the FCALL key count, keys and arguments of one append."""
        if not events:
            raise ValueError("an append needs at least one event")
        keys = self._append_keys(stream)
        if idempotency_key is not None:
            keys.append(f"{keys[0]}:idem:{idempotency_key}")
        args: list[str | bytes | int] = [*keys, expected_version, stream, kind, SCHEMA_VERSION]
        args += [fingerprint, self._ttl]
        for event in events:
            args += [event.type, event.data]
        return len(keys), args

    @staticmethod
    def _result(
        reply: list[Any], stream: str, expected_version: int, idempotency_key: str | None
    ) -> AppendResult | StoreError:
        """Returns the result of one append reply, or the typed error it stands for."""
        status = reply[0]
        if status == _OK:
            return AppendResult(reply[1], reply[2])
        if status == _REPLAYED:
            return AppendResult(reply[1], reply[2], replayed=True)
        if status == _CONFLICT:
            return ConcurrencyConflict(stream, expected_version, reply[1])
        return IdempotencyKeyReused(stream, idempotency_key or "")

    def _fcall(
        self, call: tuple[int, list[str | bytes | int]], function: str = APPEND_FUNCTION
    ) -> list[Any]:
        """Calls an append function, loading the library first or again when Redis lacks it."""
        if not self._loaded:
            self._load_library()
        if self._wait_replicas:
            return self._fcall_replicated(call, function)
        try:
            return self._send(call, function)
        except redis.ResponseError as error:
            if not function_missing(error):
                raise
            self._load_library()
            return self._send(call, function)

    def _send(self, call: tuple[int, list[str | bytes | int]], function: str) -> list[Any]:
        """Sends one FCALL of an append function; on a cluster to the node of its keys' slot
        itself (redis-py would first ask a node for the keys of every FCALL: COMMAND GETKEYS,
        a round trip each), still following MOVED."""
        numkeys, args = call
        if isinstance(self._client, RedisCluster):
            node = self._client.get_node_from_key(str(args[0]))  # type: ignore[no-untyped-call]
            reply: list[Any] = self._client.execute_command(  # type: ignore[no-untyped-call]
                "FCALL", function, numkeys, *args, target_nodes=node
            )
            return reply
        sent: list[Any] = self._client.fcall(function, numkeys, *args)
        return sent

    def problems(self) -> list[str]:
        """Returns what keeps the store from taking appends, one phrase each (empty: ready):
        a cluster that is not `ok`, a primary that does not answer or lacks the append
        function (loaded there on the way, as an append would), another layout, a
        partition's feed that cannot be read."""
        found: list[str] = []
        try:
            with reachable():
                if isinstance(self._client, RedisCluster):
                    info = self._client.cluster_info()
                    state = text_of(info.get("cluster_state", "")) if isinstance(info, dict) else ""
                    if state != "ok":
                        found.append(f"redis: the cluster's state is {state or 'unknown'}")
                for node in primaries(self._client):
                    if not node.function_list(library=LIBRARY):
                        node.function_load(LIBRARY_CODE, replace=True)
                check_layout(self._client, self._namespace, self._partitions)
                self._layout_checked = True
                self.feed_position()
        except (StoreUnavailable, LayoutMismatch) as error:
            found.append(str(error) if str(error).startswith("redis") else f"redis: {error}")
        except redis.RedisError as error:
            found.append(f"redis: {error}")
        return found

    def _fcall_replicated(
        self, call: tuple[int, list[str | bytes | int]], function: str
    ) -> list[Any]:
        """Calls an append function and then WAIT on the same connection of the key's node;
        raises StoreUnavailable unless `wait_replicas` replicas confirmed the write, a
        replayed one's too (the append may then have happened: a retry with the same
        idempotency key tells)."""
        numkeys, args = call
        reply, confirmed = replicated(
            self._client,
            str(args[0]),
            lambda pipe: pipe.fcall(function, numkeys, *args),
            self._wait_replicas,
            self._wait_timeout_ms,
        )
        if function_missing(reply):
            self._load_library()
            return self._fcall_replicated(call, function)
        if isinstance(reply, Exception):
            raise reply
        statuses = [r[0] for r in reply] if function == APPEND_MANY_FUNCTION else [reply[0]]
        if any(status in (_OK, _REPLAYED) for status in statuses):
            confirm(confirmed, self._wait_replicas, self._wait_timeout_ms, "the append")
        return list(reply)

    def append(
        self,
        stream: str,
        kind: str,
        expected_version: int,
        events: Sequence[NewEvent],
        idempotency_key: str | None = None,
        fingerprint: str = "",
    ) -> AppendResult:
        call = self._call_args(
            stream,
            kind,
            expected_version,
            events,
            idempotency_key=idempotency_key,
            fingerprint=fingerprint,
        )
        with reachable():
            reply = self._fcall(call)
        result = self._result(reply, stream, expected_version, idempotency_key)
        if isinstance(result, StoreError):
            raise result
        return result

    def append_batches(
        self,
        stream: str,
        kind: str,
        batches: Sequence[tuple[int, Sequence[NewEvent], str | None]],
    ) -> list[AppendResult | StoreError]:
        """Appends each (expected_version, events, key) batch in order, in one call of the
        append-many function (one round trip, one function call: each batch as `append`
        would write it, the same ids, fields and idempotency records)."""
        if not batches:
            return []
        keys = self._append_keys(stream)
        args: list[str | bytes | int] = [stream, kind, SCHEMA_VERSION, self._ttl]
        for expected, events, idempotency_key in batches:
            if not events:
                raise ValueError("an append needs at least one event")
            at_key = 0
            if idempotency_key is not None:
                keys.append(f"{keys[0]}:idem:{idempotency_key}")
                at_key = len(keys)
            args += [expected, at_key, len(events)]
            for event in events:
                args += [event.type, event.data]
        with reachable():
            replies = self._fcall((len(keys), [*keys, *args]), APPEND_MANY_FUNCTION)
        return [
            self._result(reply, stream, expected, idempotency_key)
            for (expected, _, idempotency_key), reply in zip(batches, replies, strict=True)
        ]

    def recall(
        self, stream: str, idempotency_key: str, fingerprint: str = ""
    ) -> AppendResult | None:
        with reachable():
            key = f"{self._key_of(stream)}:idem:{idempotency_key}"
            known = cast("bytes | None", self._client.get(key))
        if known is None:
            return None
        first, last, known_fingerprint = known.split(b" ", 2)
        if known_fingerprint and fingerprint and known_fingerprint != fingerprint.encode():
            raise IdempotencyKeyReused(stream, idempotency_key)
        if self._wait_replicas:
            self._recall_replicated(key, known)
        return AppendResult(int(first), int(last), replayed=True)

    def _recall_replicated(self, key: str, known: bytes) -> None:
        """Writes the idempotency record `key` again (the same value and expiry) and WAITs:
        raises StoreUnavailable unless replicas hold the append it records."""
        with reachable():
            _, confirmed = replicated(
                self._client,
                key,
                lambda pipe: pipe.set(key, known, keepttl=True, xx=True),
                self._wait_replicas,
                self._wait_timeout_ms,
            )
        what = "the append this key recorded"
        confirm(confirmed, self._wait_replicas, self._wait_timeout_ms, what)

    def read(self, stream: str, after: int = 0, limit: int | None = None) -> list[RecordedEvent]:
        if limit is not None and limit <= 0:
            return []
        with reachable():
            entries = self._range(self._key_of(stream), f"0-{after + 1}", limit)
        return [recorded(stream, fields) for _, fields in entries]

    def version(self, stream: str) -> int:
        with reachable():
            value = self._client.get(f"{self._key_of(stream)}:version")
        return int(value) if value is not None else 0

    def drop(self, stream: str) -> bool:
        """Deletes the game's stream; its version counter stays (the id is never reused)."""
        with reachable():
            deleted = self._client.delete(self._key_of(stream))
        return deleted > 0

    def read_partition(self, partition: int, after: str = "0", count: int = 100) -> list[FeedEntry]:
        if count <= 0:
            return []
        with reachable():
            entries = self._range(self._feeds[partition], after_start(after), count)
        return [feed_entry(position, fields, partition) for position, fields in entries]

    def _read_partitions(self, positions: Sequence[str], count: int) -> list[list[FeedEntry]]:
        """Reads every partition after its position in one pipeline (one per node)."""
        with reachable():
            pipe = self._client.pipeline(transaction=False)
            for feed, position in zip(self._feeds, positions, strict=True):
                pipe.xrange(feed, after_start(position), "+", count)
            pages: list[list[tuple[bytes, Fields]]] = pipe.execute()
        return [
            [feed_entry(position, fields, partition) for position, fields in page or []]
            for partition, page in enumerate(pages)
        ]

    def partition_position(self, partition: int) -> str:
        return self._positions([partition])[0]

    def feed_position(self) -> str:
        return cursor_of(self._positions(range(self._partitions)))

    def _positions(self, partitions: Iterable[int]) -> list[str]:
        """Returns the position of each partition's last entry (of its last one trimmed away
        when none is left; "0": it never had one), in one pipeline."""
        owned = list(partitions)
        with reachable():
            pipe = self._client.pipeline(transaction=False)
            for partition in owned:
                pipe.xrevrange(self._feeds[partition], count=1)
                pipe.get(f"{self._feeds[partition]}:trimmed")
            replies: list[Any] = pipe.execute()
        positions = []
        for last, mark in zip(replies[::2], replies[1::2], strict=True):
            positions.append(last[0][0].decode() if last else mark.decode() if mark else "0")
        return positions

    def trim_feed(self, older_than_ms: int) -> int:
        """Trims each partition's feed (XTRIM MINID) before the oldest entry a consumer group
        still holds (its oldest pending one, else the one after its last delivered one), and
        before `older_than_ms` (an entry's id is its append time in ms)."""
        removed = 0
        with reachable():
            if not self._loaded:
                self._load_library()
            for feed in self._feeds:
                threshold = self._trim_point(feed, (older_than_ms, 0))
                if threshold is not None:
                    removed += self._trim(feed, threshold)
        return removed

    def _trim(self, feed: str, threshold: str) -> int:
        """Calls the trim function, loading the library again when Redis lacks it (another
        process of an older release may have replaced it)."""
        keys = [feed, f"{feed}:trimmed"]
        try:
            return int(self._client.fcall(TRIM_FUNCTION, 2, *keys, threshold))
        except redis.ResponseError as error:
            if not function_missing(error):
                raise
            self._load_library()
            return int(self._client.fcall(TRIM_FUNCTION, 2, *keys, threshold))

    def _trim_point(self, feed: str, bound: tuple[int, int]) -> str | None:
        """Returns the MINID before which every group of `feed` has passed (at most `bound`),
        None when no group reads it."""
        try:
            groups: list[dict[str, Any]] = self._client.xinfo_groups(feed)
        except redis.ResponseError:  # no such stream: nothing to trim
            return None
        if not groups:
            return None
        point = bound
        for group in groups:
            if group.get("pending"):
                summary: dict[str, Any] = self._client.xpending(feed, text_of(group["name"]))
                point = min(point, position_key(text_of(summary["min"])))
            else:
                ms, seq = position_key(text_of(group["last-delivered-id"]))
                point = min(point, (ms, seq + 1))
        return None if point == (0, 0) else f"{point[0]}-{point[1]}"

    def feed_trimmed(self, partition: int) -> str:
        with reachable():
            mark = cast("bytes | None", self._client.get(f"{self._feeds[partition]}:trimmed"))
        return mark.decode() if mark else "0"

    def feed_clock(self) -> tuple[int, int]:
        """Returns the earliest clock of the primaries: an append's feed id (`*`) is at least
        its node's clock in ms."""
        with reachable():
            times = [node.time() for node in primaries(self._client)]
        return min(seconds * 1000 + micros // 1000 for seconds, micros in times), 0

    def wait(
        self, stream: str, after: int, timeout_ms: int, limit: int | None = None
    ) -> list[RecordedEvent]:
        """Returns the events after `after` as soon as there is one (XREAD BLOCK on the game's
        stream); `timeout_ms` must stay below the client's socket timeout."""
        if timeout_ms <= 0 or (limit is not None and limit <= 0):
            return self.read(stream, after, limit)
        with reachable():
            reply = self._client.xread(
                {self._key_of(stream): f"0-{after}"}, count=limit, block=timeout_ms
            )
        return [recorded(stream, fields) for _, fields in group_entries(reply)]

    def wait_partition(
        self, partition: int, after: str, timeout_ms: int, count: int = 100
    ) -> list[FeedEntry]:
        """Returns entries of `partition` after `after` as soon as there is one (XREAD BLOCK
        on its feed); `timeout_ms` must stay below the client's socket timeout."""
        if timeout_ms <= 0 or count <= 0:
            return self.read_partition(partition, after, count)
        start = "0-0" if after == "0" else after
        with reachable():
            reply = self._client.xread(
                {self._feeds[partition]: start}, count=count, block=timeout_ms
            )
        return [
            feed_entry(position, fields, partition) for position, fields in group_entries(reply)
        ]

    def wait_feed(self, after: str, timeout_ms: int, count: int = 100) -> list[FeedEntry]:
        """Returns feed entries after the cursor `after` as soon as there is one: one XREAD
        BLOCK on every partition's feed on a standalone Redis (a cluster's partitions live
        in several slots: there it polls); `timeout_ms` must stay below the client's socket
        timeout."""
        positions = cursor_positions(after, self._partitions)
        if timeout_ms <= 0 or count <= 0:
            return self.read_feed(after, count)
        if isinstance(self._client, RedisCluster):
            return super().wait_feed(after, timeout_ms, count)
        starts: dict[Any, Any] = {
            feed: "0-0" if position == "0" else position
            for feed, position in zip(self._feeds, positions, strict=True)
        }
        with reachable():
            arrived = self._client.xread(starts, count=1, block=timeout_ms)
        return self.read_feed(after, count) if arrived else []

    def _range(self, key: str, start: str, count: int | None) -> list[tuple[bytes, Fields]]:
        """Returns up to `count` entries of the stream `key` from `start` on."""
        return cast("list[tuple[bytes, Fields]]", self._client.xrange(key, start, "+", count) or [])
