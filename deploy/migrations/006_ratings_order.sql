-- The ordered step of the projection (services/projection/ratings.py) reads the archived
-- GameFinished events between two feed positions, in feed order: this index serves it and
-- the ratings' rebuild. (Checkpoints stay rows of projection_checkpoints: `<name>:p<n>`,
-- `<name>:below:p<n>`, `<name>:ratings`.)
CREATE INDEX events_finished_in_feed_order ON events (
    (split_part(feed_position, '-', 1)::bigint),
    (COALESCE(NULLIF(split_part(feed_position, '-', 2), ''), '0')::bigint),
    game_id,
    version
) WHERE type = 'GameFinished';
