"""Operations: health and readiness, metrics, logs, probes."""
