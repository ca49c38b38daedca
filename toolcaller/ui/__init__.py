"""The explorer as a standalone web page: a Voilà server on 127.0.0.1 serving one notebook."""

from toolcaller.ui.page import PLUGINS_ENV, REGISTRY_ENV, caller_from_env
from toolcaller.ui.server import NOTEBOOK, ExplorerServer, run, serve

__all__ = [
    "NOTEBOOK",
    "PLUGINS_ENV",
    "REGISTRY_ENV",
    "ExplorerServer",
    "caller_from_env",
    "run",
    "serve",
]
