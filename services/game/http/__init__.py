"""HTTP plumbing the game service's bounded contexts share: access, problems, strict input,
parameters, seals, the shared bodies, the streams' thread limiter, the viewer and ops routes."""
