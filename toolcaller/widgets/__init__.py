"""Jupyter widgets: the catalogue, parameter forms, results, history and the explorer."""

from toolcaller.widgets.form import ParamForm

__all__ = ["ParamForm"]
