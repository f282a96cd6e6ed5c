"""The investment memo: a one-to-five page document for a credit or investment committee (the
ask, headline figures, cases, DSCR chart, waterfalls, tornado, sources, warnings, a stamp), written
as HTML or PDF, and `verify`, which recomputes every figure a memo or workbook shows.

Modules: figures (the one table of shown metrics), build (what the memo says, computed), render
(HTML by Jinja2, charts by vl-convert, PDF by headless Chromium), verify (read a file back, check).
"""
