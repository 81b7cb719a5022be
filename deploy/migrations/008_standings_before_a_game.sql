-- An entrant with no game yet has no mean place and no win-rate interval (issue 30): the
-- standings answer null for them, not 0.00 and 0-100%.
ALTER TABLE tournament_standings
    ALTER COLUMN mean_place DROP NOT NULL,
    ALTER COLUMN win_rate_low DROP NOT NULL,
    ALTER COLUMN win_rate_high DROP NOT NULL;

-- Each line as the API answers it (JSON of shared.model.tournaments.standings.Standing: its rank
-- and tie-break values beside the columns above); a row written before this is read from the
-- columns.
ALTER TABLE tournament_standings ADD COLUMN line jsonb;
