"""The Python client of the cardarena API, for third-party bots."""
