-- The projection's tables: the event archive, the games view and the checkpoints.

CREATE TABLE events (
    game_id       text        NOT NULL,
    version       integer     NOT NULL CHECK (version >= 1),
    kind          text        NOT NULL,
    type          text        NOT NULL,
    data          bytea       NOT NULL,
    schema        integer     NOT NULL,
    recorded_at   timestamptz NOT NULL,
    feed_position text        NOT NULL,
    PRIMARY KEY (game_id, version)
);

CREATE TABLE games (
    game_id     text        PRIMARY KEY,
    game        text        NOT NULL,
    ruleset     jsonb       NOT NULL,
    status      text        NOT NULL,
    seats       jsonb       NOT NULL,
    version     integer     NOT NULL,
    result      jsonb,
    created_at  timestamptz NOT NULL,
    finished_at timestamptz
);

CREATE INDEX games_status_created_at ON games (status, created_at DESC);
CREATE INDEX games_created_at ON games (created_at DESC);

-- Feed positions are Redis stream ids "ms-seq", kept as text and compared numerically in code.
CREATE TABLE projection_checkpoints (
    name       text        PRIMARY KEY,
    position   text        NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
