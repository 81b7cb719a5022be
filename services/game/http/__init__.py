"""HTTP plumbing the game service's bounded contexts share: the request pipeline (`pipeline`:
identification, limits, strict input, problems), the OpenAPI document (`openapi`), the pages
(`pages`), and beside them the parameters, seals, shared bodies, the streams' thread limiter
and the ops routes."""
