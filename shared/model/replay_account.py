"""An offline replay's report (`shared.model.log_replay.ReplayReport`) as lines of text."""

from __future__ import annotations

from shared.model.log_replay import ReplayReport


def account(report: ReplayReport) -> list[str]:
    """Returns a report as lines of text: the turns, then the result or the first bad event,
    then the deal's check."""
    lines = list(report.turns)
    if report.game:
        lines.insert(0, f"game {report.game_id} ({report.game}), {report.events} events")
    if report.ok and report.result is not None:
        places = ", ".join(str(place) for place in report.result.places)
        reason = f" ({report.result.reason})" if report.result.reason else ""
        lines.append(f"result: {report.result.status}; places by seat {places}{reason}")
    if report.reading:
        lines.append(f"rules: as read before a rules change ({report.reading})")
    if not report.ok:
        where = "header" if report.version is None else f"v{report.version}"
        lines.append(f"bad log: {where}: {report.reason}")
    if report.verification is not None:
        lines.append(f"deal: {report.verification.status}: {report.verification.detail}")
    return lines
