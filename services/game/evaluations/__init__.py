"""REST v1 evaluations: a hosted SPRT of one bot version against another."""
