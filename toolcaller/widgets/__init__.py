"""Jupyter widgets: catalogue, parameter forms, results, history, and the explorer of them all."""

from toolcaller.widgets.catalogue import CatalogTable
from toolcaller.widgets.explorer import Explorer
from toolcaller.widgets.form import ParamForm
from toolcaller.widgets.history import HistoryView
from toolcaller.widgets.result import ResultView

__all__ = ["CatalogTable", "Explorer", "HistoryView", "ParamForm", "ResultView"]
