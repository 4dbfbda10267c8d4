"""The index service: a built index served over HTTP (`recitation-index serve`)."""

from .app import API_VERSION, IndexService, ServiceConfig
from .run import Listen, ServeError, serve

__all__ = ["API_VERSION", "IndexService", "Listen", "ServeError", "ServiceConfig", "serve"]
