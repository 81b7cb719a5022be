-- The projection's dead letters: feed entries it could not project (see
-- services/projection/dead_letters.py). Such an entry is neither archived nor in the views; it
-- waits here, with the later entries of its stream held behind it, and is retried until it
-- projects, which deletes its row in the same transaction.
CREATE TABLE projection_dead_letters (
    name            text        NOT NULL,               -- the projection (its checkpoint's name)
    position        text        NOT NULL,               -- the entry's feed position
    stream          bytea       NOT NULL,               -- its game id in UTF-8 (text may not hold it)
    version         bigint      NOT NULL,
    entry           bytea       NOT NULL,               -- the whole feed entry, msgpack
    error           text        NOT NULL,               -- why it failed last
    attempts        integer     NOT NULL DEFAULT 1,
    first_failed_at timestamptz NOT NULL DEFAULT now(),
    last_failed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (name, position)
);

CREATE INDEX projection_dead_letters_stream ON projection_dead_letters (name, stream);
