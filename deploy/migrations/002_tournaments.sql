-- Tournament and rating views. Each tournament's rows are refolded from its archived
-- stream whenever a batch touches it; ratings fold rated games in feed order.

CREATE TABLE tournaments (
    tournament_id   text        PRIMARY KEY,
    game            text        NOT NULL,
    format          text        NOT NULL,
    status          text        NOT NULL,
    table_size      integer     NOT NULL,
    rounds          integer     NOT NULL,
    games_scheduled integer     NOT NULL,
    games_played    integer     NOT NULL,
    winner          integer,
    definition      jsonb       NOT NULL,
    version         integer     NOT NULL,
    created_at      timestamptz NOT NULL,
    -- The feed position of the tournament's first event, numerically: newest first sorts on it.
    created_ms      bigint      NOT NULL,
    created_seq     bigint      NOT NULL
);

CREATE INDEX tournaments_created ON tournaments (created_ms DESC, created_seq DESC);
CREATE INDEX tournaments_status_created ON tournaments (status, created_ms DESC, created_seq DESC);
CREATE INDEX tournaments_game_created ON tournaments (game, created_ms DESC, created_seq DESC);

CREATE TABLE tournament_entrants (
    tournament_id text    NOT NULL REFERENCES tournaments ON DELETE CASCADE,
    entrant       integer NOT NULL,
    label         text    NOT NULL,
    bot           text    NOT NULL,
    version       text    NOT NULL,
    name          text    NOT NULL,
    PRIMARY KEY (tournament_id, entrant)
);

-- One row per scheduled game (a table of a round); places and status once recorded.
CREATE TABLE tournament_games (
    tournament_id text      NOT NULL REFERENCES tournaments ON DELETE CASCADE,
    key           text      NOT NULL,
    round         integer   NOT NULL,
    game_id       text      NOT NULL,
    entrants      integer[] NOT NULL,
    deal          text      NOT NULL,
    places        integer[],
    status        text,
    PRIMARY KEY (tournament_id, key)
);

CREATE INDEX tournament_games_game_id ON tournament_games (game_id);

CREATE TABLE tournament_standings (
    tournament_id text             NOT NULL REFERENCES tournaments ON DELETE CASCADE,
    rank          integer          NOT NULL,
    entrant       integer          NOT NULL,
    name          text             NOT NULL,
    games         integer          NOT NULL,
    points        double precision NOT NULL,
    wins          integer          NOT NULL,
    mean_place    double precision NOT NULL,
    win_rate_low  double precision NOT NULL,
    win_rate_high double precision NOT NULL,
    rating        double precision,
    uncertainty   double precision,
    PRIMARY KEY (tournament_id, entrant),
    UNIQUE (tournament_id, rank)
);

-- The current OpenSkill rating per game and bot version (`name@version`).
CREATE TABLE ratings (
    game    text             NOT NULL,
    key     text             NOT NULL,
    games   integer          NOT NULL,
    mu      double precision NOT NULL,
    sigma   double precision NOT NULL,
    ordinal double precision NOT NULL,
    PRIMARY KEY (game, key)
);

CREATE INDEX ratings_leaderboard ON ratings (game, ordinal DESC, key);

-- A bot version's rating after each of its rated games, in feed order of the GameFinished.
CREATE TABLE rating_history (
    game        text             NOT NULL,
    key         text             NOT NULL,
    game_id     text             NOT NULL,
    place       integer          NOT NULL,
    games       integer          NOT NULL,
    mu          double precision NOT NULL,
    sigma       double precision NOT NULL,
    ordinal     double precision NOT NULL,
    finished_at timestamptz      NOT NULL,
    feed_ms     bigint           NOT NULL,
    feed_seq    bigint           NOT NULL,
    PRIMARY KEY (game, key, game_id)
);

CREATE INDEX rating_history_order ON rating_history (game, key, feed_ms, feed_seq);
