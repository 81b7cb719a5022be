"""The request pipeline: everything a request of the game service passes through around its
handler, in the order it runs.

1. Middleware (`services.game.app`): `ops.ObserveMiddleware` (request id, log line, request
   metrics) and `limits.RateLimitMiddleware` (a bot token's `RateLimit-*` headers, and the
   429 that replaces an answer its buckets cannot pay for).
2. The app guard `auth.authenticate` (Litestar runs guards before a route's input is read):
   who calls (the admin, an account, a bot, anyone); a request without credentials to an
   operation that needs them is 401 here, before its body is read; a bot token's request is
   charged to its rate limits (`limits`); `credentials` ends the holds of tokens that stop
   being live; `follower` keeps the registry's fold current so that a token check reads
   nothing; `owners` guards what accounts do with their own bots.
3. The app's `before_request` hook `strict.guard`: input that cannot be what its handler
   declares is refused (400, 404) the same way on every route. No route sets a hook of its
   own (Litestar takes the nearest layer's: a test refuses one).
4. The handler (the bounded contexts' controllers), then `problems`: every error becomes an
   RFC 9457 problem-details answer naming the field or the rule.
"""
