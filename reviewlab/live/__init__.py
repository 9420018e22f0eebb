"""The real thing: the bounded executor on threads, the review-episode
loop, the inspection registry.

Imports only :mod:`reviewlab.core`. Import from the modules (:mod:`reviewlab.live.episode`, ...).
"""

__all__: list[str] = []
