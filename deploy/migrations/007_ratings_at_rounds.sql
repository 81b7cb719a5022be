-- The leaderboard takes a tournament's games in when their round completes (RoundCompleted,
-- or TournamentCancelled for an unfinished round), in schedule order, as the standings rate
-- them (services/projection/tournament_folds.py). The ordered step and the ratings' rebuild
-- read those tournament events in feed order beside the GameFinished events: this index
-- serves them as events_finished_in_feed_order (006) serves GameFinished.
CREATE INDEX events_rounds_in_feed_order ON events (
    (split_part(feed_position, '-', 1)::bigint),
    (COALESCE(NULLIF(split_part(feed_position, '-', 2), ''), '0')::bigint),
    game_id,
    version
) WHERE type IN ('RoundCompleted', 'TournamentCancelled');
