"""The widgets' page style: JupyterLab's CSS variables (light and dark themes), panes, fields.

Every colour is a `--jp-*` variable with a fallback for pages without JupyterLab's theme (a
static HTML export), so the views follow the theme the page shows. Widgets that need the style
put `style_widget()` among their children: a hidden HTML holding one `<style>` element.
"""

from __future__ import annotations

import ipywidgets as W

__all__ = ["COLOURS", "PAGE_CSS", "style_widget"]

COLOURS = {
    "text": "var(--jp-ui-font-color1, #1f2328)",
    "muted": "var(--jp-ui-font-color2, #57606a)",
    "faint": "var(--jp-ui-font-color3, #8c959f)",
    "panel": "var(--jp-layout-color2, #f6f8fa)",
    "page": "var(--jp-layout-color1, #ffffff)",
    "border": "var(--jp-border-color2, #d0d7de)",
    "success": "var(--jp-success-color1, #1a7f37)",
    "error": "var(--jp-error-color1, #cf222e)",
    "warn": "var(--jp-warn-color1, #9a6700)",
    "info": "var(--jp-brand-color1, #0969da)",
    "code": "var(--jp-code-font-family, monospace)",
}
"""Colour and font names the views use in inline styles (CSS variables of the theme)."""

PAGE_CSS = """
.tc-explorer, .tc-form, .tc-result, .tc-history, .tc-log, .tc-catalog {
  color: var(--jp-ui-font-color1, #1f2328);
}
.tc-muted { color: var(--jp-ui-font-color2, #57606a); font-size: 0.9em; }
.tc-help { color: var(--jp-ui-font-color2, #57606a); font-size: 0.85em; line-height: 1.35;
  margin: 0 0 2px 2px; white-space: normal; }
.tc-error { color: var(--jp-error-color1, #cf222e); font-size: 0.9em; line-height: 1.35; }
.tc-warn { color: var(--jp-warn-color1, #9a6700); background: var(--jp-warn-color3, #fff8c5);
  padding: 2px 6px; border-radius: 4px; line-height: 1.4; }
.tc-pre { margin: 0; padding: 6px; border-radius: 4px; max-height: 24em; overflow: auto;
  white-space: pre-wrap; word-break: break-word; font-size: 12px; line-height: 1.4;
  font-family: var(--jp-code-font-family, monospace);
  background: var(--jp-cell-editor-background, var(--jp-layout-color2, #f6f8fa));
  color: var(--jp-content-font-color1, #1f2328);
  border: 1px solid var(--jp-border-color2, #d0d7de); }
.tc-badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600;
  color: #fff; line-height: 1.5; }
.tc-flag { display: inline-block; padding: 0 6px; margin: 0 4px 2px 0; border-radius: 8px;
  font-size: 0.8em; line-height: 1.6; border: 1px solid currentColor; }
.tc-table { border-collapse: collapse; font-size: 12px; width: 100%; line-height: 1.4; }
.tc-table th, .tc-table td { padding: 2px 6px; text-align: left; vertical-align: top;
  border-bottom: 1px solid var(--jp-border-color2, #eaeef2); }
.tc-table tr.tc-picked { background: var(--jp-layout-color3, #ddf4ff); }
.tc-history .tc-table { width: auto; min-width: 100%; }
.tc-history .tc-table td { white-space: nowrap; max-width: 26em; overflow: hidden;
  text-overflow: ellipsis; }
.tc-explorer .tc-call:disabled { opacity: 0.45; }
.tc-diff { font-family: var(--jp-code-font-family, monospace); font-size: 12px; }
.tc-diff .tc-add { color: var(--jp-success-color1, #1a7f37); }
.tc-diff .tc-del { color: var(--jp-error-color1, #cf222e); }
.tc-sr-only { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0;
  overflow: hidden; clip: rect(0, 0, 0, 0); white-space: nowrap; border: 0; }

/* Fields: the label above its control, the description under it, as the Inspector does. */
.tc-form .widget-inline-hbox:not(.widget-checkbox) { flex-direction: column;
  align-items: stretch; height: auto !important; }
.tc-form .widget-inline-hbox:not(.widget-checkbox) > * { flex: 0 0 auto !important; }
.tc-form .widget-inline-hbox:not(.widget-checkbox) > .widget-label {
  width: auto !important; max-width: none; text-align: left; font-weight: 600;
  line-height: 1.6; height: auto; padding: 0; margin: 0; }
.tc-form input:not([type="checkbox"]), .tc-form select, .tc-form textarea {
  box-sizing: border-box; width: 100%; }
.tc-form .widget-box > *, .tc-explorer .tc-form-scroll > *, .tc-result > *, .tc-log > *,
.tc-history > * { flex-shrink: 0 !important; }
.tc-form .widget-inline-hbox > input, .tc-form .widget-inline-hbox > select {
  height: var(--jp-widgets-inline-height, 28px); }
.tc-form textarea { font-family: var(--jp-code-font-family, monospace); }
.tc-form .widget-checkbox { height: auto; }
.tc-form .tc-field { margin: 2px 0 8px 0; min-width: 0; height: auto; }
.tc-form .tc-off { opacity: 0.45; }
.tc-form .tc-tick { flex: 0 0 auto !important; width: auto !important; margin-right: 6px;
  align-self: flex-start; }
.tc-form .tc-tick .widget-label-basic span { font-weight: 600; }
.tc-form .tc-toggled > .tc-field > .widget-inline-hbox:not(.widget-checkbox) > .widget-label,
.tc-form .tc-toggled > .tc-field > .widget-html:first-child:not(:last-child) {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0, 0, 0, 0); }
.tc-form .tc-label { font-weight: 600; line-height: 1.6; }
.tc-form .tc-nested { border: 1px solid var(--jp-border-color2, #d0d7de); border-radius: 4px;
  padding: 4px 8px; margin: 4px 0; }
.tc-form .widget-html, .tc-form .widget-html-content { height: auto; line-height: 1.4; }
/* A status that wraps (a running call's attempt and retry wait, in a narrow pane) grows
   instead of running under the history tabs. */
.tc-result .widget-html, .tc-result .widget-html-content { height: auto; }
.tc-result-status .widget-html-content { line-height: 1.6; }

/* The explorer's panes: side by side where the width allows, stacked below. The panes fit the
   window's height and scroll inside, so that Call and the result stay in view. */
.tc-explorer { container-type: inline-size; width: 100%; }
.tc-explorer .tc-panes { display: grid !important; grid-template-columns: minmax(0, 1fr);
  gap: 12px; align-items: start; }
.tc-explorer .tc-pane { min-width: 0; }
.tc-explorer .tc-catalog { min-width: 0; overflow: hidden; }
.tc-explorer .tc-catalog select { width: 100% !important; min-width: 0; box-sizing: border-box; }
.tc-explorer .tc-catalog > *, .tc-explorer .tc-form .widget-inline-hbox {
  width: auto !important; max-width: calc(100% - 4px); }
.tc-explorer .tc-catalog-list select { height: 12em !important; }
.tc-explorer .tc-catalog .widget-select-multiple select { height: 4.6em !important; }
.tc-explorer .tc-form-scroll { padding-right: 10px; }
.tc-explorer .tc-actions { position: sticky; bottom: 0; z-index: 2; flex-wrap: wrap;
  align-items: center; gap: 6px; padding: 6px 4px; height: auto;
  background: var(--jp-layout-color1, #ffffff);
  border-top: 1px solid var(--jp-border-color2, #d0d7de); }
.tc-explorer .tc-why { flex: 1 1 12em; min-width: 0; height: auto; }
.tc-explorer .tc-why .widget-html-content { height: auto; line-height: 1.35; }
.tc-explorer .tc-tool-card { line-height: 1.45; word-break: break-word; }
.tc-explorer .widget-tab .lm-TabBar-tab { min-width: 0; flex: 0 1 auto; max-width: none; }
@container (min-width: 700px) {
  .tc-explorer .tc-panes { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
  .tc-explorer .tc-pane-catalogue { grid-column: 1; grid-row: 1; }
  .tc-explorer .tc-pane-form { grid-column: 1; grid-row: 2; }
  .tc-explorer .tc-panes { grid-template-rows: auto 1fr; }
  .tc-explorer .tc-pane-output { grid-column: 2; grid-row: 1 / span 2; }
  /* The result stays at the top of its pane; the history and the log scroll below it. */
  .tc-explorer .tc-pane-output { max-height: calc(100vh - 90px); overflow: hidden; }
  .tc-explorer .tc-pane-output > .tc-result { flex: 0 1 auto !important; max-height: 55vh;
    overflow: auto; min-height: 2em; }
  .tc-explorer .tc-pane-output > .widget-tab { flex: 1 1 auto !important; min-height: 10em; }
  .tc-explorer .tc-pane-output .widget-tab-contents { flex: 1 1 auto; min-height: 0;
    overflow: auto !important; }
  .tc-explorer .tc-catalog-list select { height: 7.5em !important; }
  .tc-explorer .tc-catalog .widget-select-multiple select { height: 2.6em !important; }
  .tc-explorer .tc-form-scroll { max-height: max(8em, calc(100vh - 480px)); overflow: auto; }
}
@container (min-width: 1100px) {
  .tc-explorer .tc-panes { grid-template-columns: minmax(0, 26fr) minmax(0, 37fr)
    minmax(0, 37fr); }
  .tc-explorer .tc-pane-catalogue { grid-column: 1; grid-row: 1; }
  .tc-explorer .tc-pane-form { grid-column: 2; grid-row: 1; }
  .tc-explorer .tc-pane-output { grid-column: 3; grid-row: 1; }
  .tc-explorer .tc-catalog-list select { height: max(12em, calc(100vh - 340px)) !important; }
  .tc-explorer .tc-catalog .widget-select-multiple select { height: 4.6em !important; }
  .tc-explorer .tc-form-scroll { max-height: max(10em, calc(100vh - 260px)); }
}
"""
"""The style every view shares (see the module docstring)."""


def style_widget() -> W.HTML:
    """Return a hidden HTML widget that puts `PAGE_CSS` on the page."""
    return W.HTML(value=f"<style>{PAGE_CSS}</style>", layout=W.Layout(display="none"))
