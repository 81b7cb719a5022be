-- Replays: forks and stream retention in the games view.

-- A fork's original game (GameCreated.forked_from); forks are never rated.
ALTER TABLE games ADD COLUMN forked_from text;

-- When the retention sweep dropped a finished game's stream from the event store (its
-- events stay in the archive). A rebuild of the views clears it; the next sweep finds the
-- stream gone and sets it again.
ALTER TABLE games ADD COLUMN stream_dropped_at timestamptz;

CREATE INDEX games_retention ON games (finished_at)
    WHERE finished_at IS NOT NULL AND stream_dropped_at IS NULL;
