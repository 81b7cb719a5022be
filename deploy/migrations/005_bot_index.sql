-- The bot index (services/projection/bot_index.py): which games and challenges wait for a bot.

-- A bot's running games: the `games` rows still playing whose seats hold one bound to it
-- (`seats @> '[{"kind": "external", "name": ..., "version": ...}]'`). Only the running games
-- are indexed, so a bot's look-up does not grow with the games ever played.
CREATE INDEX games_playing_seats ON games USING gin (seats jsonb_path_ops)
    WHERE status = 'playing';

-- The challenges waiting for a bot's answer: a row per bot a ChallengeIssued names pending,
-- deleted when the bot accepts, or when the challenge is declined, cancelled or started. An
-- expired challenge (no event says so) keeps its rows; readers skip them by `expires_at`.
-- Challenges issued before this migration appear after `cardarena projection rebuild`.
CREATE TABLE bot_challenges (
    bot          text        NOT NULL,  -- name@version
    challenge_id text        NOT NULL,
    issued_at    timestamptz NOT NULL,  -- when the ChallengeIssued was recorded
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (bot, challenge_id)
);

CREATE INDEX bot_challenges_waiting ON bot_challenges (bot, expires_at);
CREATE INDEX bot_challenges_challenge ON bot_challenges (challenge_id);
