"""Moves a Redis event store of the layout before partitions to the partitioned one.

Before partitions a store kept `{ns}game:{<s>}` (the stream), `...:version`,
`...:idem:<key>` and one `{ns}feed` for every stream. The migration copies each stream, its
version and its idempotency records (with their time to live) to its partition's keys
(`shared.store.redis_store`), and each feed entry to its stream's partition feed under the
same id, so feed positions (the projection's checkpoint, its archive's `feed_position`)
stay valid. Each consumer group of the old feed becomes a group on every partition's feed,
placed before its oldest pending entry (an entry it was given but had not acknowledged is
delivered again; the projection skips what its archive already holds). Then it records
the layout and deletes the old keys.

It is idempotent and may be run again after a crash: every copy skips what is there. Run
it with the writers stopped (the game service, the workers, the projection).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import redis

from shared.store.port import partition_of, position_key
from shared.store.redis_common import (
    LAYOUT,
    check_layout,
    feed_key,
    layout_key,
    legacy_feed_key,
    reachable,
    stream_key,
)

_PAGE = 1000


@dataclass(frozen=True)
class Migration:
    """What a migration moved (0 everywhere: there was nothing of the old layout)."""

    streams: int = 0
    events: int = 0
    idempotency_records: int = 0
    feed_entries: int = 0
    groups: int = 0
    deleted_keys: int = 0


def _text(value: bytes | str) -> str:
    """Returns a Redis reply value as text."""
    return value.decode() if isinstance(value, bytes) else value


def _legacy_streams(client: redis.Redis, namespace: str) -> Iterator[str]:
    """Yields the id of every stream of the old layout (each has a version counter)."""
    prefix = f"{namespace}game:{{"
    for key in client.scan_iter(match=f"{prefix}*}}:version", count=_PAGE):
        yield _text(key)[len(prefix) : -len("}:version")]


def _copy_entries(client: redis.Redis, source: str, target: str) -> int:
    """Copies the entries of stream `source` to `target` under their ids, skipping those at
    or before `target`'s last id; returns how many it copied."""
    last = cast("list[tuple[bytes, Any]]", client.xrevrange(target, count=1))
    start = f"({_text(last[0][0])}" if last else "-"
    copied = 0
    while page := cast(
        "list[tuple[bytes, dict[bytes, bytes]]]", client.xrange(source, start, "+", _PAGE)
    ):
        pipe = client.pipeline(transaction=False)
        for entry_id, fields in page:
            pipe.xadd(target, cast("Any", fields), id=entry_id)
        pipe.execute()
        copied += len(page)
        start = f"({_text(page[-1][0])}"
    return copied


def _copy_stream(
    client: redis.Redis, namespace: str, stream: str, partitions: int
) -> tuple[int, int]:
    """Copies one stream, its version and its idempotency records; returns (events, records)."""
    old = f"{namespace}game:{{{stream}}}"
    new = stream_key(namespace, partition_of(stream, partitions), stream)
    copied = _copy_entries(client, old, new)
    version = client.get(f"{old}:version")
    if version is not None:
        client.set(f"{new}:version", version)
    records = 0
    for key in client.scan_iter(match=f"{old}:idem:*", count=_PAGE):
        name = _text(key)[len(f"{old}:idem:") :]
        value, ttl = client.get(key), client.pttl(key)
        if value is None:
            continue
        target = f"{new}:idem:{name}"
        if ttl and ttl > 0:
            client.set(target, value, px=ttl)
        else:
            client.set(target, value)
        records += 1
    return copied, records


def _copy_feed(client: redis.Redis, namespace: str, partitions: int) -> int:
    """Copies every entry of the old feed to its stream's partition feed, under its id."""
    source = legacy_feed_key(namespace)
    feeds = [feed_key(namespace, p) for p in range(partitions)]
    lasts = []
    for feed in feeds:
        last = cast("list[tuple[bytes, Any]]", client.xrevrange(feed, count=1))
        lasts.append(position_key(_text(last[0][0])) if last else (0, 0))
    copied, start = 0, "-"
    while page := cast(
        "list[tuple[bytes, dict[bytes, bytes]]]", client.xrange(source, start, "+", _PAGE)
    ):
        pipe = client.pipeline(transaction=False)
        for entry_id, fields in page:
            partition = partition_of(_text(fields.get(b"g", entry_id)), partitions)
            if position_key(_text(entry_id)) > lasts[partition]:
                pipe.xadd(feeds[partition], cast("Any", fields), id=entry_id)
                copied += 1
        pipe.execute()
        start = f"({_text(page[-1][0])}"
    return copied


def _before(entry_id: str) -> str:
    """Returns the stream id just before `entry_id`."""
    ms, seq = position_key(entry_id)
    if seq > 0:
        return f"{ms}-{seq - 1}"
    return f"{ms - 1}-18446744073709551615" if ms > 0 else "0-0"


def _copy_groups(client: redis.Redis, namespace: str, partitions: int) -> int:
    """Places each consumer group of the old feed on every partition's feed, just before its
    oldest pending entry (else at its last delivered entry); returns how many groups."""
    source = legacy_feed_key(namespace)
    groups: list[dict[str, Any]] = client.xinfo_groups(source)
    for group in groups:
        name = _text(group["name"])
        start = _text(group["last-delivered-id"])
        pending: dict[str, Any] = client.xpending(source, name)
        if pending.get("pending") and pending.get("min"):
            start = _before(_text(pending["min"]))
        for partition in range(partitions):
            feed = feed_key(namespace, partition)
            try:
                client.xgroup_create(feed, name, id=start, mkstream=True)
            except redis.ResponseError as error:
                if not str(error).startswith("BUSYGROUP"):
                    raise
                client.xgroup_setid(feed, name, id=start)
    return len(groups)


def _delete_legacy(client: redis.Redis, namespace: str) -> int:
    """Deletes every key of the old layout; returns how many."""
    deleted = 0
    batch: list[bytes | str] = []
    for key in client.scan_iter(match=f"{namespace}game:{{*", count=_PAGE):
        batch.append(key)
        if len(batch) >= _PAGE:
            deleted += int(client.delete(*batch))
            batch = []
    if batch:
        deleted += int(client.delete(*batch))
    return deleted + int(client.delete(legacy_feed_key(namespace)))


def migrate_log(client: redis.Redis, namespace: str, partitions: int) -> Migration:
    """Moves the store under `namespace` from the layout before partitions to `partitions`
    partitions (see the module docstring); raises LayoutMismatch when the Redis already
    holds a partitioned store of another partition count. A standalone Redis only: the old
    layout cannot run on a cluster."""
    with reachable():
        recorded = cast("bytes | None", client.get(layout_key(namespace)))
        if recorded is not None:
            check_layout(client, namespace, partitions)  # another count: LayoutMismatch
        legacy = bool(client.exists(legacy_feed_key(namespace)))
        streams = events = records = 0
        for stream in _legacy_streams(client, namespace):
            copied, kept = _copy_stream(client, namespace, stream, partitions)
            streams, events, records = streams + 1, events + copied, records + kept
        if not legacy and not streams:
            check_layout(client, namespace, partitions)
            return Migration()
        entries = _copy_feed(client, namespace, partitions) if legacy else 0
        groups = _copy_groups(client, namespace, partitions) if legacy else 0
        client.set(layout_key(namespace), f"{LAYOUT} {partitions}")
        deleted = _delete_legacy(client, namespace)
    return Migration(streams, events, records, entries, groups, deleted)
