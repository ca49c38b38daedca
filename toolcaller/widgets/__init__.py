"""Jupyter widgets: parameter forms built from JSON Schemas (more views to come)."""

from toolcaller.widgets.catalogue import CatalogTable
from toolcaller.widgets.form import ParamForm
from toolcaller.widgets.history import HistoryView
from toolcaller.widgets.result import ResultView

__all__ = ["CatalogTable", "HistoryView", "ParamForm", "ResultView"]
