"""Operations: health and readiness, metrics, logs, probes, the SQL migrations; the three
services build on these, and these import none of them."""
