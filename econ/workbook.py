"""The Excel workbook of a projection: inputs, schedules and metrics as live, checked formulas.

Sheets: Summary (one metric per row: label and unit from econ.labels, a value per scenario, the
summary key), Charts (revenue against costs, DSCR with the covenant floor, cumulative cash flow, over
the sheets' own cells), Assumptions (every input with unit, value, source and provenance flag, each a
defined name; then derived figures and constants), Monthly (the engine's schedule), Annual (tax
years), Depreciation, Debt, Debt schedule, Tranches and Tranche summary (a capital stack's
tranches, as values) and Notes (provenance, warnings, which lines are values and why).

Live formulas. The main lines (tokens, revenue, power, facility, opex, capex, depreciation, sale,
interest, principal, tax with losses carried forward, EBITDA, net income, cash flows, DSCR) are
spreadsheet formulas over Assumptions names and schedule cells, and NPV, IRR, the levelized cost and
its components are formulas over the schedule, so an analyst who changes an input in Excel sees it
flow through. Tax is computed per tax year on the Annual sheet (taxable income summed by SUMIF, the
losses carried forward in a schedule where each year uses them up to financing.tax_loss_limit of
its income, so losses carry forward and nothing is refunded) and paid as the engine does
(quarterly or monthly, never before the first taxable income, or once a year with the return);
the losses carried forward are a deferred tax asset (ASC 740).

Checked formulas. Each formula is written once, as a small expression tree (`Expr`) that renders to
spreadsheet text and also evaluates with numpy. Before a formula is written, its numpy value is
compared with the engine's line (relative error 1e-9); a line whose formula does not reproduce the
engine for a scenario (a feature the formulas do not model: several tranches, vintages, impairment,
an owned hall, price tables, a resale value table) is written as the engine's values instead, shaded grey, and the Notes
sheet says which line and why. So the workbook never shows a formula that disagrees with the engine,
and lines the engine adds later appear as values until a formula is taught to them. The test suite
recalculates workbooks with LibreOffice and compares every formula cell with the engine.

Live inputs. An input is live (blue) only where changing it moves every figure that depends on
it as the engine moves it (the exported loan held where it is sized): each input the formulas
read is changed a little in the engine when the workbook is written, and where a column written
as values that a formula reads moves with it, the input is grey, its `live` cell says why, data
validation holds it at its value, and derived figures none of whose inputs is live are written as
values, so no formula combines a changed input with values of the exported one; an input econ
refuses to change (with the scenario's other inputs) is grey too, and a derived figure no formula
reads is its value. Live inputs are validated against their fields' bounds and choices, and the
Summary's check rows (CHECKS) flag, red, two inputs econ takes one at a time, an input price
without input tokens, a held loan above the capex and months outside the horizon. The covenant
rows (breach months, first breach, months of headroom, minimum LLCR) and payback are formulas
over the schedules' flags; a figure that cannot follow an edit (the break-even price, which econ
solves for) is grey italic with a note: as exported, re-run econ after changing inputs.

Cached values. openpyxl writes formulas without results, and a reader that does not recalculate
(pandas, many viewers, previews) would see empty cells. The results are known exactly (they are the
checked values), so after openpyxl writes the package, each formula cell's `<v>` is filled in the
sheet XML: the file opens with numbers everywhere, deterministically, with no office suite at export
time. `fullCalcOnLoad` asks Excel to recalculate when it opens the file anyway.

Text safety. Every user-controlled text (names, descriptions, sources, warnings) is stored as a
string cell (never a formula, whatever it starts with) with the quote-prefix style, so editing the
cell keeps it text; characters XML cannot hold are replaced by U+FFFD.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import re
import typing
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from openpyxl import Workbook
from openpyxl.chart import BarChart, LineChart, Reference, Series
from openpyxl.chart.axis import ChartLines
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import column_index_from_string, get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from pydantic import BaseModel

from econ import capital, density, excel, tax, units
from econ.arrays import snap_to_zero
from econ.embedding import embedded, embedded_stamp
from econ.engine import (
    DEBT_SCHEDULE,
    MIN_EQUITY_SHARE_FOR_IRR,
    TOKEN_KINDS,
    Projection,
    debt_schedule_table,
)
from econ.errors import InputError
from econ.excel import irr_batch
from econ.labels import (
    COLUMN_NOTES,
    COLUMNS,
    FLAG_UNIT,
    column_label,
    column_unit,
    summary_label,
)
from econ.provenance import CREATED_FIELD, Stamp
from econ.reporting import check_projected, flat_summary, make_stamp
from econ.scenario.io import OVERRIDDEN
from econ.scenario.models import Scenario, model_of
from econ.text import looks_like_formula

MAX_ROWS = 1_000_000
"""Rows a sheet may hold here (Excel's limit is 1,048,576); larger batches belong in Parquet."""
RELATIVE_TOLERANCE = 1e-9
"""A formula is written only when it reproduces the engine's line to this relative error."""
TEXT_LIMIT = 32_767
"""Characters an Excel cell holds."""

SHEETS = (
    "Summary",
    "Charts",
    "Assumptions",
    "Monthly",
    "Annual",
    "Depreciation",
    "Debt",
    "Debt schedule",
    "Tranches",
    "Tranche summary",
    "Notes",
)
ROW_SHEETS = ("Monthly", "Depreciation", "Debt")
"""Sheets with one row per scenario-month, aligned: row r is the same month on each."""


class WorkbookError(InputError):
    """A workbook that cannot be built as asked (too many rows, scenarios that do not match)."""


class Missing(Exception):  # noqa: N818 - control flow, not an error shown to users
    """A formula refers to an input or column that this scenario does not have."""


# --- Formula expressions ---------------------------------------------------------------------------

_COMPARE, _ADD, _MUL, _POW, _NEG, _ATOM = 1, 3, 4, 5, 6, 9


class Expr:
    """A spreadsheet formula that also evaluates with numpy (vectorized over a block's rows)."""

    prec = _ATOM

    def render(self, ctx: _Ctx) -> str:
        raise NotImplementedError

    def evaluate(self, env: _Env):
        raise NotImplementedError

    def refs(self) -> set[tuple[str, str]]:
        """(sheet, column) and ("name", key) references, for deciding which helpers are needed."""
        return set().union(*(c.refs() for c in self.children())) if self.children() else set()

    def children(self) -> tuple[Expr, ...]:
        return ()

    def __add__(self, other):
        return _Bin("+", self, _wrap(other))

    def __radd__(self, other):
        return _Bin("+", _wrap(other), self)

    def __sub__(self, other):
        return _Bin("-", self, _wrap(other))

    def __rsub__(self, other):
        return _Bin("-", _wrap(other), self)

    def __mul__(self, other):
        return _Bin("*", self, _wrap(other))

    def __rmul__(self, other):
        return _Bin("*", _wrap(other), self)

    def __truediv__(self, other):
        return _Bin("/", self, _wrap(other))

    def __rtruediv__(self, other):
        return _Bin("/", _wrap(other), self)

    def __pow__(self, other):
        return _Bin("^", self, _wrap(other))

    def __neg__(self):
        return _Neg(self)


def _wrap(value) -> Expr:
    if isinstance(value, Expr):
        return value
    if isinstance(value, str):
        return Text(value)
    return Num(value)


def _number_text(value: float) -> str:
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value).upper()


class Num(Expr):
    def __init__(self, value: float):
        self.value = float(value)
        self.prec = _ATOM if self.value >= 0 else _NEG

    def render(self, ctx):
        text = _number_text(self.value)
        return f"({text})" if self.value < 0 else text

    def evaluate(self, env):
        return self.value


class Text(Expr):
    def __init__(self, value: str):
        self.value = value

    def render(self, ctx):
        return '"' + self.value.replace('"', '""') + '"'

    def evaluate(self, env):
        # An empty text result is a blank in numeric context (e.g. DSCR without debt service).
        return np.nan if self.value == "" else self.value


class Name(Expr):
    """A named Assumptions cell: an input (`market.price_usd_per_mtok`), a derived figure
    (`calc.fleet_capex_usd`) or a constant (`const.hours_per_month`)."""

    def __init__(self, key: str):
        self.key = key

    def render(self, ctx):
        return ctx.name(self.key)

    def evaluate(self, env):
        return env.input(self.key)

    def refs(self):
        return {("name", self.key)}


class Cell(Expr):
    """The same row of a column on a row-aligned sheet (or the same Summary/Annual row)."""

    def __init__(self, sheet: str, column: str):
        self.sheet, self.column = sheet, column

    def render(self, ctx):
        return ctx.cell(self.sheet, self.column)

    def evaluate(self, env):
        return env.column(self.sheet, self.column)

    def refs(self):
        return {(self.sheet, self.column)}


class Prev(Expr):
    """The previous row of a column; `first` on a block's first row."""

    def __init__(self, sheet: str, column: str, first: float = 0.0):
        self.sheet, self.column, self.first = sheet, column, float(first)

    def render(self, ctx):
        if ctx.row == ctx.block(self.sheet)[0]:
            return Num(self.first).render(ctx)
        return ctx.cell(self.sheet, self.column, row=ctx.row - 1)

    def evaluate(self, env):
        values = np.asarray(env.column(self.sheet, self.column), dtype=float)
        return np.concatenate([[self.first], values[:-1]])

    def refs(self):
        return {(self.sheet, self.column)}


class Running(Expr):
    """SUM or MAX of a column from the block's first row to this row (cumulative)."""

    def __init__(self, function: str, sheet: str, column: str):
        self.function, self.sheet, self.column = function, sheet, column

    def render(self, ctx):
        start = ctx.cell(self.sheet, self.column, row=ctx.block(self.sheet)[0], absolute_row=True)
        end = ctx.cell(self.sheet, self.column, bare=True)
        return f"{self.function}({start}:{end})"

    def evaluate(self, env):
        values = np.asarray(env.column(self.sheet, self.column), dtype=float)
        if self.function == "SUM":
            return np.cumsum(values)
        return np.maximum.accumulate(values)

    def refs(self):
        return {(self.sheet, self.column)}


def _is_blank(value):
    return value is None


def _if(condition, when_true, when_false):
    return np.where(condition, when_true, when_false)


def _minimum(*values):
    return np.minimum.reduce(np.broadcast_arrays(*[np.asarray(v, dtype=float) for v in values]))


def _maximum(*values):
    return np.maximum.reduce(np.broadcast_arrays(*[np.asarray(v, dtype=float) for v in values]))


_FUNCTIONS: dict[str, Callable] = {
    "AND": lambda *a: np.logical_and.reduce(np.broadcast_arrays(*a)),
    "OR": lambda *a: np.logical_or.reduce(np.broadcast_arrays(*a)),
    "MIN": _minimum,
    "MAX": _maximum,
    "INT": lambda x: np.floor(np.asarray(x, dtype=float)),
    "ABS": lambda x: np.abs(np.asarray(x, dtype=float)),
    "ISBLANK": _is_blank,
    # (an empty text, a formula's blank, evaluates to NaN: not a number)
    "ISNUMBER": lambda x: ~np.isnan(np.asarray(x, dtype=float)),
    # Spreadsheet semantics (payments at period ends), from econ.excel.
    "PMT": lambda rate, nper, pv: excel.pmt(rate, nper, pv),
    "FV": lambda rate, nper, payment, pv: excel.fv(rate, nper, payment, pv),
}


class Call(Expr):
    def __init__(self, function: str, *args):
        self.function = function
        self.args = tuple(_wrap(a) for a in args)

    def children(self):
        return self.args

    def render(self, ctx):
        return f"{self.function}({','.join(a.render(ctx) for a in self.args)})"

    def evaluate(self, env):
        if self.function == "IF":
            condition = self.args[0].evaluate(env)
            if np.ndim(condition) == 0:  # a scalar condition: only the chosen branch, as Excel
                return self.args[1 if bool(condition) else 2].evaluate(env)
            with np.errstate(all="ignore"):
                return _if(condition, self.args[1].evaluate(env), self.args[2].evaluate(env))
        if self.function == "ISBLANK":
            return _is_blank(self.args[0].evaluate(env))
        values = [a.evaluate(env) for a in self.args]
        for v in values:
            if v is None:
                raise Missing(f"needs a value for {self.function} where an input is blank")
        return _FUNCTIONS[self.function](*values)


def IF(condition, when_true, when_false):  # noqa: N802 - spreadsheet names
    return Call("IF", condition, when_true, when_false)


def AND(*args):  # noqa: N802
    return Call("AND", *args)


def MIN(*args):  # noqa: N802
    return Call("MIN", *args)


def MAX(*args):  # noqa: N802
    return Call("MAX", *args)


def INT(x):  # noqa: N802
    return Call("INT", x)


def ISBLANK(x):  # noqa: N802
    return Call("ISBLANK", x)


def ISNUMBER(x):  # noqa: N802
    return Call("ISNUMBER", x)


def OR(*args):  # noqa: N802
    return Call("OR", *args)


class _Bin(Expr):
    _PREC = {"+": _ADD, "-": _ADD, "*": _MUL, "/": _MUL, "^": _POW}

    def __init__(self, op: str, left: Expr, right: Expr):
        self.op, self.left, self.right = op, left, right
        self.prec = self._PREC[op]

    def children(self):
        return (self.left, self.right)

    def render(self, ctx):
        left, right = self.left.render(ctx), self.right.render(ctx)
        # Parenthesize so the spreadsheet evaluates exactly this tree (same rounding as numpy).
        if self.left.prec < self.prec or (self.op == "^" and self.left.prec <= self.prec):
            left = f"({left})"
        if self.right.prec <= self.prec:
            right = f"({right})"
        return f"{left}{self.op}{right}"

    def evaluate(self, env):
        a, b = self.left.evaluate(env), self.right.evaluate(env)
        if a is None or b is None or isinstance(a, str) or isinstance(b, str):
            raise Missing("computes with a blank or text input")
        with np.errstate(all="ignore"):
            a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
            if self.op == "+":
                return a + b
            if self.op == "-":
                return a - b
            if self.op == "*":
                return a * b
            if self.op == "/":
                return a / b
            return np.power(a, b)


class _Neg(Expr):
    prec = _NEG

    def __init__(self, operand: Expr):
        self.operand = operand

    def children(self):
        return (self.operand,)

    def render(self, ctx):
        inner = self.operand.render(ctx)
        return f"-({inner})" if self.operand.prec < _ATOM else f"-{inner}"

    def evaluate(self, env):
        value = self.operand.evaluate(env)
        if value is None or isinstance(value, str):
            raise Missing("computes with a blank or text input")
        return -np.asarray(value, dtype=float)


class _Compare(Expr):
    prec = _COMPARE
    _OPS = {"=": np.equal, "<>": np.not_equal, "<": np.less, "<=": np.less_equal}
    _OPS |= {">": np.greater, ">=": np.greater_equal}

    def __init__(self, op: str, left, right):
        self.op, self.left, self.right = op, _wrap(left), _wrap(right)

    def children(self):
        return (self.left, self.right)

    def render(self, ctx):
        left, right = self.left.render(ctx), self.right.render(ctx)
        if self.left.prec <= self.prec:
            left = f"({left})"
        if self.right.prec <= self.prec:
            right = f"({right})"
        return f"{left}{self.op}{right}"

    def evaluate(self, env):
        a, b = self.left.evaluate(env), self.right.evaluate(env)
        if isinstance(a, str) or isinstance(b, str):
            if self.op not in ("=", "<>"):
                raise Missing("orders text")
            same = str(a).casefold() == str(b).casefold()  # spreadsheets compare text case-blind
            return same if self.op == "=" else not same
        if a is None or b is None:
            raise Missing("compares a blank input")
        return self._OPS[self.op](np.asarray(a, dtype=float), np.asarray(b, dtype=float))


def eq(a, b):
    return _Compare("=", a, b)


def lt(a, b):
    return _Compare("<", a, b)


def le(a, b):
    return _Compare("<=", a, b)


def gt(a, b):
    return _Compare(">", a, b)


def ge(a, b):
    return _Compare(">=", a, b)


class _Lookup(Expr):
    """INDEX into an Annual column of the same scenario by tax year (1-based)."""

    def __init__(self, column: str, index: Expr):
        self.column, self.index = column, index

    def children(self):
        return (self.index,)

    def refs(self):
        return {("Annual", self.column)} | self.index.refs()

    def render(self, ctx):
        a0, a1 = ctx.block("Annual")
        letter = ctx.letter("Annual", self.column)
        return f"INDEX(Annual!${letter}${a0}:${letter}${a1},{self.index.render(ctx)})"

    def evaluate(self, env):
        table = np.asarray(env.column("Annual", self.column), dtype=float)
        index = np.asarray(self.index.evaluate(env), dtype=float).astype(int)
        return table[index - 1]


class _SumIf(Expr):
    """On the Annual sheet: a Monthly column summed over the months of this row's tax year."""

    def __init__(self, column: str, sheet: str = "Monthly"):
        self.column, self.sheet = column, sheet

    def refs(self):
        return {(self.sheet, self.column), ("Monthly", "tax_year"), ("Annual", "tax_year")}

    def render(self, ctx):
        keys = ctx.range("Monthly", "tax_year")
        values = ctx.range(self.sheet, self.column)
        return f"SUMIF({keys},{ctx.cell('Annual', 'tax_year')},{values})"

    def evaluate(self, env):
        keys = np.asarray(env.column("Monthly", "tax_year"), dtype=float).astype(int)
        values = np.asarray(env.column(self.sheet, self.column), dtype=float)
        years = np.asarray(env.column("Annual", "tax_year"), dtype=float).astype(int)
        sums = np.bincount(keys - 1, weights=values, minlength=int(years.max()))
        return sums[years - 1]


class _Trailing(Expr):
    """On a row-aligned sheet: a Monthly column summed over this month and the `window` - 1
    before it, within the scenario's block (SUMIFS by month: the trailing window a covenant
    tests, econ.capital.coverage_ratios)."""

    def __init__(self, column: str, window: Expr):
        self.column, self.window = column, window

    def children(self):
        return (self.window,)

    def refs(self):
        return {(M, self.column), (M, "month")} | self.window.refs()

    def render(self, ctx):
        values, months = ctx.range(M, self.column), ctx.range(M, "month")
        month, window = ctx.cell(M, "month"), self.window.render(ctx)
        return f'SUMIFS({values},{months},">="&({month}-{window}+1),{months},"<="&{month})'

    def evaluate(self, env):
        values = np.nan_to_num(np.asarray(env.column(M, self.column), dtype=float))
        window = int(self.window.evaluate(env))
        running = np.concatenate([[0.0], np.cumsum(values)])
        end = np.arange(1, values.size + 1)
        return running[end] - running[np.maximum(end - window, 0)]


class _LossesUnused(Expr):
    """On the Annual sheet: tax losses carried forward and not yet used at the year's end, each
    year's offset at most `limit` times its income (econ.tax.income_taxed_to_date_usd):
    P_k = P_(k-1) - MIN(P_(k-1), limit * MAX(0, I_k)) + MAX(0, -I_k), P_0 = 0. The cell refers
    to the row above in its own column, as a tax preparer's carryforward schedule does."""

    column = "loss_carried_forward_usd"

    def __init__(self, limit: Expr):
        self.limit = limit

    def children(self):
        return (self.limit,)

    def refs(self):
        return {("Annual", "taxable_income_usd")} | self.limit.refs()

    def render(self, ctx):
        income = ctx.cell("Annual", "taxable_income_usd")
        arrived = f"MAX(0,-{income})"
        if ctx.row == ctx.block("Annual")[0]:
            return arrived
        before = ctx.cell("Annual", self.column, row=ctx.row - 1)
        return f"{before}-MIN({before},{self.limit.render(ctx)}*MAX(0,{income}))+{arrived}"

    def evaluate(self, env):
        income = np.asarray(env.column("Annual", "taxable_income_usd"), dtype=float)
        limit = float(self.limit.evaluate(env))
        taxed = tax.income_taxed_to_date_usd(income[None, :], [limit])[0]
        return taxed - np.cumsum(income)


class _LastSign(Expr):
    """The sign of the last flow of a Monthly column beyond half a cent, up to this row (0
    before the first): the cell refers to the row above in its own column, so that the sign
    changes of the flows are counted with zeros skipped (_Irr)."""

    def __init__(self, column: str):
        self.column = column

    def refs(self):
        return {(M, self.column)}

    def render(self, ctx):
        flow = ctx.cell(M, self.column)
        before = "0"
        if ctx.row != ctx.block(M)[0]:
            before = ctx.cell(M, f"sign_{self.column}", row=ctx.row - 1)
        half_cent = _number_text(units.HALF_CENT_USD)
        return f"IF({flow}>{half_cent},1,IF({flow}<-{half_cent},-1,{before}))"

    def evaluate(self, env):
        flows = np.asarray(env.column(M, self.column), dtype=float)
        signs = np.where(flows > units.HALF_CENT_USD, 1.0, 0.0)
        signs[flows < -units.HALF_CENT_USD] = -1.0
        last = np.maximum.accumulate(np.where(signs != 0, np.arange(flows.size), -1))
        return np.where(last >= 0, signs[np.maximum(last, 0)], 0.0)


class _Aggregate(Expr):
    """SUM / MIN / COUNT of a whole block column (Summary cells)."""

    def __init__(self, function: str, column: str, sheet: str = "Monthly"):
        self.function, self.column, self.sheet = function, column, sheet

    def refs(self):
        return {(self.sheet, self.column)}

    def render(self, ctx):
        return f"{self.function}({ctx.range(self.sheet, self.column)})"

    def evaluate(self, env):
        values = np.asarray(env.column(self.sheet, self.column), dtype=float)
        finite = values[~np.isnan(values)]
        if self.function == "SUM":
            return float(finite.sum())
        if self.function == "COUNT":
            return float(finite.size)
        if self.function == "MIN":
            return float(finite.min()) if finite.size else 0.0
        raise ValueError(self.function)


class _RackPositions(Expr):
    """Rack positions summed over a block: each month's GPUs in service over the GPUs per rack,
    rounded up, as econ.density.racks_in_service (-INT(tol - x) is ceil(x - tol) for any x)."""

    TOLERANCE = 1e-9

    def __init__(self, column: str, per_rack: Expr):
        self.column, self.per_rack = column, per_rack

    def children(self):
        return (self.per_rack,)

    def refs(self):
        return {("Monthly", self.column)} | self.per_rack.refs()

    def render(self, ctx):
        return (
            f"SUMPRODUCT(-INT({_number_text(self.TOLERANCE)}-{ctx.range('Monthly', self.column)}"
            f"/{self.per_rack.render(ctx)}))"
        )

    def evaluate(self, env):
        values = np.nan_to_num(np.asarray(env.column("Monthly", self.column), dtype=float))
        per_rack = self.per_rack.evaluate(env)
        return float(np.sum(-np.floor(self.TOLERANCE - values / per_rack)))


class _Remaining(Expr):
    """On a row-aligned sheet: a column summed over the rows after this one to the end of the
    scenario's block (its later months); 0 on the block's last row."""

    def __init__(self, sheet: str, column: str):
        self.sheet, self.column = sheet, column

    def refs(self):
        return {(self.sheet, self.column)}

    def render(self, ctx):
        r1 = ctx.block(self.sheet)[1]
        if ctx.row >= r1:
            return "0"
        letter = ctx.letter(self.sheet, self.column)
        return f"SUM({ctx.cell(self.sheet, self.column, row=ctx.row + 1)}:${letter}${r1})"

    def evaluate(self, env):
        values = np.asarray(env.column(self.sheet, self.column), dtype=float)
        later = np.cumsum(values[::-1])[::-1]
        return np.concatenate([later[1:], [0.0]])


class _LastMonthAbove(Expr):
    """The last month of the scenario's block in which a column exceeds `threshold`, 0 where
    none does (a scalar): SUMPRODUCT(MAX((values > threshold) * months))."""

    def __init__(self, sheet: str, column: str, threshold: float):
        self.sheet, self.column, self.threshold = sheet, column, float(threshold)

    def refs(self):
        return {(self.sheet, self.column), (self.sheet, "month")}

    def render(self, ctx):
        values, months = ctx.range(self.sheet, self.column), ctx.range(self.sheet, "month")
        return f"SUMPRODUCT(MAX(({values}>{_number_text(self.threshold)})*{months}))"

    def evaluate(self, env):
        values = np.asarray(env.column(self.sheet, self.column), dtype=float)
        months = np.asarray(env.column(self.sheet, "month"), dtype=float)
        return float(np.max(np.where(values > self.threshold, months, 0.0)))


class _FirstFlagged(Expr):
    """The position (1 for the block's first row, month 0) of the first row of the scenario's
    block whose flag column is 1: MATCH(1, range, 0); guard it where no row is (#N/A)."""

    def __init__(self, sheet: str, column: str):
        self.sheet, self.column = sheet, column

    def refs(self):
        return {(self.sheet, self.column)}

    def render(self, ctx):
        return f"MATCH(1,{ctx.range(self.sheet, self.column)},0)"

    def evaluate(self, env):
        flags = np.asarray(env.column(self.sheet, self.column), dtype=float) == 1
        return float(np.argmax(flags) + 1) if flags.any() else np.nan


class _At(Expr):
    """A column of the scenario's block at a position (1 for its first row): INDEX(range, k)."""

    def __init__(self, sheet: str, column: str, position: Expr):
        self.sheet, self.column, self.position = sheet, column, position

    def children(self):
        return (self.position,)

    def refs(self):
        return {(self.sheet, self.column)} | self.position.refs()

    def render(self, ctx):
        return f"INDEX({ctx.range(self.sheet, self.column)},{self.position.render(ctx)})"

    def evaluate(self, env):
        values = np.asarray(env.column(self.sheet, self.column), dtype=float)
        return float(values[int(self.position.evaluate(env)) - 1])


class _SignedSum(Expr):
    """SUMIF of a whole block column's positive (sign +1) or negative (-1) values."""

    def __init__(self, column: str, sign: int):
        self.column, self.sign = column, sign

    def refs(self):
        return {("Monthly", self.column)}

    def render(self, ctx):
        criterion = '">0"' if self.sign > 0 else '"<0"'
        return f"SUMIF({ctx.range('Monthly', self.column)},{criterion})"

    def evaluate(self, env):
        values = np.asarray(env.column("Monthly", self.column), dtype=float)
        return float(np.where(values * self.sign > 0, values, 0.0).sum())


class _PresentValue(Expr):
    """SUMPRODUCT of a block column with the discount factors."""

    def __init__(self, column: str):
        self.column = column

    def refs(self):
        return {("Monthly", self.column), ("Monthly", "discount_factor")}

    def render(self, ctx):
        return (
            f"SUMPRODUCT({ctx.range('Monthly', self.column)},"
            f"{ctx.range('Monthly', 'discount_factor')})"
        )

    def evaluate(self, env):
        values = np.asarray(env.column("Monthly", self.column), dtype=float)
        factors = np.asarray(env.column("Monthly", "discount_factor"), dtype=float)
        return float(np.dot(values, factors))


class _Npv(Expr):
    """Month-0 flow plus the spreadsheet NPV of months 1..H at the monthly discount rate."""

    def __init__(self, column: str, rate: Expr):
        self.column, self.rate = column, rate

    def children(self):
        return (self.rate,)

    def refs(self):
        return {("Monthly", self.column)} | self.rate.refs()

    def render(self, ctx):
        r0, r1 = ctx.block("Monthly")
        letter = ctx.letter("Monthly", self.column)
        first = f"Monthly!${letter}${r0}"
        if r1 == r0:
            return first
        return f"{first}+NPV({self.rate.render(ctx)},Monthly!${letter}${r0 + 1}:${letter}${r1})"

    def evaluate(self, env):
        values = np.asarray(env.column("Monthly", self.column), dtype=float)
        rate = float(self.rate.evaluate(env))
        return float(np.dot(values, (1.0 + rate) ** -np.arange(values.size)))


class _Irr(Expr):
    """Annualized IRR of a block column by the summary's IRR policy (econ.metrics.
    unique_irr_annual: the one rate in IRR_RANGE_ANNUAL a year at which the NPV falls through
    zero as the rate rises), or text where there is none.

    The cell tries the spreadsheet's IRR from each guess in turn and takes the first rate that
    is in the range, where the NPV falls through zero (it is below zero just above the rate) and
    that lies on the same side of 0% as the NPV at 0% (the flows' sum beyond half a cent; where
    the one falling rate does not, the text says so, IRR_AGAINST_NPV).
    Flows that change sign at most twice have at most one such rate (Descartes' rule of signs:
    at most two roots, and two crossings in one direction need a third between them), so that
    rate is the policy's. Flows that change sign more often may have several: as the engine
    does, the NPV is scanned over rates spanning the range (`npv_scan_<column>`, at the rates of
    `irr_scan_rate`, one a row), and a rate is reported only where the scan crosses zero falling
    exactly once (the engine's scan is finer: two roots between neighbouring rates here can be
    seen there). The sign changes are counted on a working column (`sign_<column>`: the sign of
    the last flow beyond half a cent). The first guess is the engine's root; after an input is
    changed here that guess may be far from the new root and Newton's iteration may fail from
    it (LibreOffice returns #N/A), so the middle of the scan's falling crossing follows (0 where
    it has none), then IRR_GUESSES, each tried only where the ones before found no rate that
    counts.
    """

    def __init__(self, column: str, guess: float):
        self.column = column
        self.guesses = tuple(dict.fromkeys((guess, *IRR_GUESSES)))

    def refs(self):
        scan = (M, f"npv_scan_{self.column}")
        return {(M, self.column), (M, f"sign_{self.column}"), scan, (M, "irr_scan_rate")}

    def render(self, ctx):
        r0, r1 = ctx.block(M)
        flows = ctx.range(M, self.column)
        letter = ctx.letter(M, self.column)
        first, later = f"Monthly!${letter}${r0}", f"Monthly!${letter}${r0 + 1}:${letter}${r1}"

        def pairs(column: str) -> tuple[str, str]:
            j = ctx.letter(M, column)
            return f"Monthly!${j}${r0}:${j}${r1 - 1}", f"Monthly!${j}${r0 + 1}:${j}${r1}"

        if r1 == r0:
            changes = falling = crossing = "0"
        else:
            before, after = pairs(f"sign_{self.column}")
            changes = f"SUMPRODUCT(({after}<>{before})*({before}<>0))"
            before, after = pairs(f"npv_scan_{self.column}")
            falling = f"SUMPRODUCT(({before}>0)*({after}<0))"
            low_rate, high_rate = pairs("irr_scan_rate")
            crossing = f"SUMPRODUCT(({before}>0)*({after}<0)*({low_rate}+{high_rate}))/2"
        low, high = (_number_text(x) for x in IRR_RANGE_ANNUAL)
        loss, gain = (f"SUM({flows}){op}{_number_text(units.HALF_CENT_USD)}" for op in ("<-", ">"))
        against = f"AND({falling}=1,OR(AND({loss},{crossing}>0),AND({gain},{crossing}<0)))"
        reasons = (Text(IRR_AGAINST_NPV).render(ctx), Text(IRR_NOT_FOUND).render(ctx))
        text = f"IF({against},{reasons[0]},{reasons[1]})"
        guesses = [_number_text(g) for g in self.guesses]
        guesses.insert(1, crossing)
        for guess in reversed(guesses):
            rate = f"IRR({flows},{guess})"
            annual = f"((1+{rate})^12-1)"
            above = f"{rate}+{_number_text(IRR_FALL_STEP)}*(1+{rate})"
            falls = f"{first}+NPV({above},{later})<0" if r1 > r0 else "FALSE"
            sides = f"NOT(OR(AND({rate}>0,{loss}),AND({rate}<0,{gain})))"
            counts = f"AND({annual}>{low},{annual}<{high},{falls},{sides})"
            text = f"IFERROR(IF({counts},{annual},NA()),{text})"
        none, several = Text(IRR_NO_SIGN_CHANGE).render(ctx), Text(IRR_SEVERAL).render(ctx)
        scanned = f"IF({falling}=0,{Text(IRR_NONE_SCANNED).render(ctx)},{several})"
        return f"IF({changes}=0,{none},IF(AND({changes}>2,{falling}<>1),{scanned},{text}))"

    def evaluate(self, env):
        values = np.asarray(env.column(M, self.column), dtype=float)
        changes = _sign_changes(np.asarray(env.column(M, f"sign_{self.column}")))
        if changes == 0:
            return IRR_NO_SIGN_CHANGE
        scan = np.asarray(env.column(M, f"npv_scan_{self.column}"), dtype=float)
        crossings = (scan[:-1] > 0) & (scan[1:] < 0)
        if changes > 2 and int(crossings.sum()) != 1:
            return IRR_NONE_SCANNED if not crossings.any() else IRR_SEVERAL
        rates = np.asarray(env.column(M, "irr_scan_rate"), dtype=float)
        crossing = float(np.sum(crossings * (rates[:-1] + rates[1:])) / 2)
        low, high = IRR_RANGE_ANNUAL
        months = np.arange(values.size)
        total = float(values.sum())
        loss, gain = total < -units.HALF_CENT_USD, total > units.HALF_CENT_USD
        guesses = list(self.guesses)
        guesses.insert(1, crossing)
        for guess in guesses:  # the root the formula finds
            monthly = float(irr_batch(values[None, :], guess)[0])
            if math.isnan(monthly):
                continue
            annual = float(units.annual_rate(monthly))
            above = monthly + IRR_FALL_STEP * (1 + monthly)
            with np.errstate(all="ignore"):
                falls = float(np.dot(values, (1.0 + above) ** -months)) < 0
            sides = not ((monthly > 0 and loss) or (monthly < 0 and gain))
            if low < annual < high and falls and sides:
                return annual
        against = crossings.sum() == 1 and ((loss and crossing > 0) or (gain and crossing < 0))
        return IRR_AGAINST_NPV if against else IRR_NOT_FOUND


class _ScanNpv(Expr):
    """NPV of a whole Monthly column (month 0 undiscounted) at this row's `irr_scan_rate`."""

    def __init__(self, column: str):
        self.column = column

    def refs(self):
        return {(M, self.column), (M, "irr_scan_rate")}

    def render(self, ctx):
        r0, r1 = ctx.block(M)
        letter = ctx.letter(M, self.column)
        first = f"Monthly!${letter}${r0}"
        if r1 == r0:
            return first
        rate = ctx.cell(M, "irr_scan_rate")
        return f"{first}+NPV({rate},Monthly!${letter}${r0 + 1}:${letter}${r1})"

    def evaluate(self, env):
        values = np.asarray(env.column(M, self.column), dtype=float)
        rates = np.asarray(env.column(M, "irr_scan_rate"), dtype=float)
        months = np.arange(values.size)
        with np.errstate(all="ignore"):
            return ((1.0 + rates[:, None]) ** -months[None, :]) @ values


def _sign_changes(signs: np.ndarray) -> int:
    """Sign changes of a `sign_` working column (0 before the first flow beyond half a cent)."""
    signs = np.asarray(signs, dtype=float)
    return int(np.sum((signs[1:] != signs[:-1]) & (signs[:-1] != 0)))


IRR_GUESSES = (0.01, -0.05, 0.05)
"""Monthly IRR guesses tried after the engine's root (about +13%, -46% and +80% a year)."""
IRR_RANGE_ANNUAL = (-0.99, 10.0)
"""The range of an IRR the summary reports (econ.metrics.IRR_RANGE_ANNUAL) [fraction/year]."""
IRR_FALL_STEP = 1e-6
"""Relative step above a root at which its NPV must be below zero: the NPV falls through it."""
IRR_NOT_FOUND = (
    "n/a: the spreadsheet's IRR found no rate in -99%..+1,000% a year at which the NPV falls "
    "through zero, from its starting guesses (not a proof that none exists: `econ project` "
    "gives it)"
)
"""What an IRR cell shows where no guess finds a rate that counts."""
IRR_SEVERAL = (
    "n/a: several rates in -99%..+1,000% a year make the NPV fall through zero (a scan of the "
    "rates, irr_scan_rate), so none is the IRR; judge by NPV and MIRR (an equity IRR by the "
    "equity NPV, at the cost of equity)"
)
IRR_NONE_SCANNED = (
    "n/a: no rate in -99%..+1,000% a year makes the NPV fall through zero (a scan of the "
    "rates, irr_scan_rate)"
)
IRR_AGAINST_NPV = (
    "n/a: the one rate at which the NPV falls through zero lies on the other side of 0% from the "
    "NPV at 0% (the flows' sum), so against a hurdle rate between them it would contradict the "
    "NPV; judge by NPV and MIRR (an equity IRR by the equity NPV, at the cost of equity)"
)
IRR_NO_SIGN_CHANGE = "n/a: the cash flows do not change sign, so no rate makes the NPV zero"


class _Mirr(Expr):
    """Annualized spreadsheet MIRR of a block column, or `fallback` text where it is undefined."""

    def __init__(self, column: str, finance: Expr, reinvest: Expr, fallback: str):
        self.column, self.finance, self.reinvest, self.fallback = (
            column,
            finance,
            reinvest,
            fallback,
        )

    def children(self):
        return (self.finance, self.reinvest)

    def refs(self):
        return {("Monthly", self.column)} | self.finance.refs() | self.reinvest.refs()

    def render(self, ctx):
        mirr = (
            f"MIRR({ctx.range('Monthly', self.column)},{self.finance.render(ctx)},"
            f"{self.reinvest.render(ctx)})"
        )
        return f"IFERROR((1+{mirr})^12-1,{Text(self.fallback).render(ctx)})"

    def evaluate(self, env):
        values = np.asarray(env.column("Monthly", self.column), dtype=float)
        finance, reinvest = float(self.finance.evaluate(env)), float(self.reinvest.evaluate(env))
        try:
            monthly = float(excel.mirr(values, finance, reinvest))
        except excel.ExcelFunctionError:
            return self.fallback
        return self.fallback if math.isnan(monthly) else float(units.annual_rate(monthly))


class _Guard(Expr):
    """IF(condition, text, value): a metric that is reported as text (null) when undefined."""

    def __init__(self, condition: Expr, text: str, value: Expr):
        self.condition, self.text, self.value = condition, text, value

    def children(self):
        return (self.condition, self.value)

    def render(self, ctx):
        return IF(self.condition, Text(self.text), self.value).render(ctx)

    def evaluate(self, env):
        return self.text if bool(self.condition.evaluate(env)) else self.value.evaluate(env)


# --- Render context and evaluation environment ----------------------------------------------------


class _Env:
    """Values of one scenario: inputs by key, columns by (sheet, name) as arrays over its rows.

    `formulas` (key -> a function of the environment) make a column when it is first asked for
    and not given (the working columns of a scenario whose inputs were changed, `_changed_env`)."""

    def __init__(self, inputs: Mapping[str, Any], formulas: Mapping | None = None):
        self.inputs = dict(inputs)
        self.columns: dict[tuple[str, str], Any] = {}
        self.formulas = dict(formulas or {})

    def input(self, key: str):
        if key not in self.inputs:
            raise Missing(f"needs the input {key}, which this scenario does not have")
        return self.inputs[key]

    def column(self, sheet: str, name: str):
        key = (sheet, name)
        if key not in self.columns and key in self.formulas:
            self.columns[key] = self.formulas.pop(key)(self)
        try:
            return self.columns[key]
        except KeyError:
            raise Missing(f"needs {sheet}!{name}, which is not written for this scenario") from None


@dataclass
class _Layout:
    letters: dict[str, dict[str, str]]  # sheet -> column name -> letter
    blocks: list[dict[str, tuple[int, int]]]  # scenario -> sheet -> (first row, last row)
    names: list[dict[str, str]]  # scenario -> key -> defined name
    summary_rows: dict[str, int] = field(default_factory=dict)  # Summary: metric -> row
    summary_columns: list[str] = field(default_factory=list)  # Summary: scenario -> letter


class _Ctx:
    def __init__(self, layout: _Layout, k: int, sheet: str, row: int):
        self.layout, self.k, self.sheet, self.row = layout, k, sheet, row

    def letter(self, sheet: str, column: str) -> str:
        return self.layout.letters[sheet][column]

    def block(self, sheet: str) -> tuple[int, int]:
        return self.layout.blocks[self.k][sheet]

    def _prefix(self, sheet: str) -> str:
        return "" if sheet == self.sheet else f"{sheet}!"

    def cell(self, sheet, column, row=None, absolute_row=False, bare=False) -> str:
        if sheet == "Summary":  # one row per metric, one column per scenario
            ref = f"{self.layout.summary_columns[self.k]}{self.layout.summary_rows[column]}"
            return ref if bare else self._prefix(sheet) + ref
        if row is None:
            if sheet in ROW_SHEETS and self.sheet in ROW_SHEETS or sheet == self.sheet:
                row = self.row
            else:
                raise Missing(f"has no row of {sheet} aligned with {self.sheet}")
        ref = f"{self.letter(sheet, column)}{'$' if absolute_row else ''}{row}"
        if absolute_row:
            ref = "$" + ref
        return ref if bare else self._prefix(sheet) + ref

    def range(self, sheet: str, column: str) -> str:
        r0, r1 = self.block(sheet)
        letter = self.letter(sheet, column)
        return f"{self._prefix(sheet)}${letter}${r0}:${letter}${r1}"

    def name(self, key: str) -> str:
        return self.layout.names[self.k][key]


# --- The formula model ---------------------------------------------------------------------------

M = "Monthly"


def mcol(name: str) -> Cell:
    return Cell(M, name)


month = mcol("month")
purchase = Name("fleet.purchase_month")
retire = Name("calc.retire_month")
since = month - purchase
in_service = mcol("in_service")


def _after_month_1(rate: Expr) -> Expr:
    """(1 + rate)^(max(m - 1, 0) / 12): a month-1 figure changing at an annual rate."""
    return (1 + rate) ** (MAX(month - 1, 0) / 12)


def _ramp(ramp_months: Expr) -> Expr:
    """Linear fill over `ramp_months` after purchase; 1 without a ramp (econ.market)."""
    return IF(gt(ramp_months, 0), MIN(1, since / MAX(ramp_months, 1)), 1)


@dataclass
class _Info:
    """What gates and value schedules may look at: the scenario and its engine lines."""

    scenario: Scenario | None
    lines: dict[str, np.ndarray]
    env: _Env
    modes: dict[tuple[str, str], str]


Gate = Callable[[_Info], bool]


@dataclass
class Spec:
    """A column of a row-aligned sheet or of Annual.

    `candidates` are (formula, gate) pairs tried in order; the first whose gate holds and whose
    value reproduces the engine's line `engine` (when the engine has it) is written. `values`
    makes a value schedule instead (a function of the scenario, None when not applicable).
    `helper` columns are written only where a formula uses them.
    """

    sheet: str
    name: str
    candidates: tuple[tuple[Expr, Gate | None], ...] = ()
    engine: str | None = None
    helper: bool = False
    values: Callable[[_Info], np.ndarray | None] | None = None
    label: str = ""
    unit: str = ""  # (where econ.labels.column_unit cannot read it off the name)


def _single_fleet(info: _Info) -> bool:
    return info.scenario is not None and not getattr(info.scenario, "vintages", ())


def _attr(obj, path: str, default=None):
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return default
    return obj


def _no_impairment(info: _Info) -> bool:
    threshold = _attr(info.scenario, "depreciation.impairment.price_drop_threshold")
    impaired = info.lines.get("impairment_usd")
    return threshold is None and (impaired is None or not np.any(impaired))


def _capex_is_formula(info: _Info) -> bool:
    return info.modes.get((M, "capex_usd")) == "formula"


def _method_is(path: str, name: str) -> Gate:
    return lambda info: _attr(info.scenario, path) == name


def _all(*gates: Gate) -> Gate:
    return lambda info: all(g(info) for g in gates)


def _has_dscr_floor(info: _Info) -> bool:
    return _attr(info.scenario, "financing.covenants.dscr_floor") is not None


def _throughput_multiplier(info: _Info):
    """Throughput per GPU relative to throughput.tokens_per_s_per_gpu: the engine's software-gain
    trajectory, read off its tokens (tokens / (GPUs x base rate x utilization x seconds))."""
    if not _single_fleet(info) or "tokens" not in info.lines:
        return None
    gpus = np.asarray(info.env.column(M, "gpus_in_service"), dtype=float)
    utilization = np.asarray(info.env.column(M, "utilization"), dtype=float)
    rate = info.env.input("throughput.tokens_per_s_per_gpu")
    capacity = gpus * utilization * rate * units.SECONDS_PER_MONTH
    with np.errstate(all="ignore"):
        multiplier = np.where(capacity > 0, info.lines["tokens"] / capacity, np.nan)
    # Months without service produce no tokens; carry the neighbouring factor for readability.
    known = np.flatnonzero(~np.isnan(multiplier))
    if known.size == 0:
        return np.ones_like(multiplier)
    filled = np.interp(np.arange(multiplier.size), known, multiplier[known])
    return np.where(np.isnan(multiplier), filled, multiplier)


def _financing_cash_flow(info: _Info):
    """Cash between the lenders and the equity, where the loan is not modelled as formulas (a
    capital stack): the engine's equity less project cash flow, as a value schedule."""
    if info.modes.get((M, "interest_usd")) == "formula":
        return None
    if "cash_flow_equity_usd" not in info.lines or "cash_flow_project_usd" not in info.lines:
        return None
    return info.lines["cash_flow_equity_usd"] - info.lines["cash_flow_project_usd"]


LOAN_LINES = (
    "interest_usd",
    "cash_interest_usd",
    "principal_usd",
    "debt_service_usd",
    "debt_balance_usd",
)
"""The term loan's lines, written as values where the loan is sized (SIZED_REASON)."""
SIZED_REASON = (
    "the loan is sized (financing.size_to_min_dscr, max_ltv or a sculpted repayment): the "
    "sizing searches the whole schedule, so the engine's loan is written and an input changed "
    "here keeps it, as --hold-debt holds it"
)


def _sized_loan(info: _Info) -> bool:
    from econ.analysis.committed import sizes_loan

    financing = getattr(info.scenario, "financing", None)
    return financing is not None and not financing.tranches and sizes_loan(financing)


def _frozen_draws(info: _Info):
    """The term loan's draws as the engine's values where its balance is values (a loan sized
    to a DSCR target, a cap or a sculpted schedule: the repayments do not follow the inputs), so
    that an input changed in the workbook cannot move the draw while the repayments stay put;
    None (the formula) where the balance is a formula too. A capital stack's draws are in its
    financing cash flow (`_financing_cash_flow`)."""
    if info.modes.get((M, "debt_balance_usd")) == "formula":
        return None
    if _attr(info.scenario, "financing.tranches", ()):
        return None
    needed = ("cash_flow_equity_usd", "cash_flow_project_usd", "cash_interest_usd", "principal_usd")
    if not all(name in info.lines for name in needed):
        return None
    lines = info.lines
    return snap_to_zero(
        lines["cash_flow_equity_usd"]
        - lines["cash_flow_project_usd"]
        + lines["cash_interest_usd"]
        + lines["principal_usd"]
    )


def _share_of_capex(line: str) -> Callable[[_Info], np.ndarray | None]:
    """A depreciation schedule as a share of the fleet's capex (values), where the schedule
    scales with the cost: one fleet, no impairment, capex as formulas."""

    def compute(info: _Info):
        if not (_single_fleet(info) and _no_impairment(info) and _capex_is_formula(info)):
            return None
        cost = info.env.input("calc.fleet_capex_usd")
        if line not in info.lines or not cost:
            return None
        return info.lines[line] / cost

    return compute


def _sells_at_resale(info: _Info) -> bool:
    """Whether the GPUs sell at a resale table's value (market.resale_value_table or series)."""
    market = info.scenario.market if info.scenario is not None else None
    return market is not None and market.has_resale


def _candidates(formulas) -> tuple[tuple[Expr, Gate | None], ...]:
    return tuple(f if isinstance(f, tuple) else (f, None) for f in formulas)


def when(gate: Gate, formula: Expr) -> tuple[Expr, Gate]:
    """A candidate formula tried only when `gate` holds for the scenario."""
    return (formula, gate)


def line(name: str, *formulas, sheet: str = "Monthly") -> Spec:
    """An engine line (checked against the engine, else written as its values)."""
    return Spec(sheet, name, _candidates(formulas), engine=name)


def helper(sheet: str, name: str, *formulas, values=None, label: str = "", unit: str = "") -> Spec:
    """A working column, written only where a formula needs it."""
    return Spec(
        sheet, name, _candidates(formulas), helper=True, values=values, label=label, unit=unit
    )


def view(sheet: str, name: str, formula: Expr, label: str = "", unit: str = "") -> Spec:
    """A column shown on a sheet for reading (regroups or accumulates checked lines)."""
    return Spec(sheet, name, _candidates((formula,)), label=label, unit=unit)


_fleet_capex = Name("calc.fleet_capex_usd")
_dep, _imp, _tax_dep = (
    mcol("depreciation_usd"),
    mcol("impairment_usd"),
    mcol("tax_depreciation_usd"),
)
_disposal, _gain, _tax_gain = (
    mcol("disposal_usd"),
    mcol("gain_on_disposal_usd"),
    mcol("tax_gain_on_disposal_usd"),
)
_gpus, _util = mcol("gpus_in_service"), mcol("utilization")
_tax_rate = Name("financing.tax_rate")
_loss_limit = Name("financing.tax_loss_limit")
_contract_share = Name("market.contract_share")
_sells_hours = eq(Name("market.spot_sells"), "gpu_hours")
# In service from the month after purchase (or fleet.service_start_month) up to retirement.
_service_start = IF(
    ISBLANK(Name("fleet.service_start_month")), purchase + 1, Name("fleet.service_start_month")
)
_serving = AND(ge(month, _service_start), le(month, retire))
# The site runs from its opening: opex.site_open_month, or the first month in service (its staff
# are paid to fleet.retire_month, the last month a GPU serves: econ.engine).
_open = IF(
    ge(
        month,
        IF(ISBLANK(Name("opex.site_open_month")), _service_start, Name("opex.site_open_month")),
    ),
    1,
    0,
)
_it_kw = _gpus * Name("calc.it_kw_per_gpu")
_loan_rate, _term, _debt = (
    Name("calc.loan_rate_monthly"),
    Name("financing.debt_term_months"),
    Name("calc.debt_usd"),
)
_scheduled = Cell("Debt", "scheduled_balance_usd")
# The DSCR covenant's test: its trailing window and first test month (econ.capital).
_window = MAX(1, Name("financing.covenants.test_months"))
_first_test = IF(
    ISBLANK(Name("financing.covenants.first_test_month")),
    0,
    Name("financing.covenants.first_test_month"),
)


def _snapped(amount: Expr) -> Expr:
    """0 within half a cent, as the engine's lines (econ.arrays.snap_to_zero): a loan repaid to
    -3e-9 USD shows 0, not a red -$0.00."""
    return IF(lt(Call("ABS", amount), units.HALF_CENT_USD), 0, amount)


_depreciated_from = Name("calc.depreciation_start_month")
_life_months = Name("calc.life_months")
_life_fraction = _life_months - INT(_life_months)  # a fractional last month's share


def _depreciated_share(months_since_purchase: Expr) -> Expr:
    """Share of the fleet depreciated from this month or before (months since purchase): the
    GPUs in service by then under fleet.deployment_ramp_months (counted from the service start,
    as the engine counts them), none before calc.depreciation_start_month. Each month's GPUs are
    depreciated from the month they enter service (econ.engine._ramp_batches), so straight-line
    depreciation in month t is base / L x (this share at t less its value at t - L, linear
    between months where L is fractional): the GPUs within their life."""
    ramp = Name("fleet.deployment_ramp_months")
    months_in_service = months_since_purchase - (_service_start - purchase) + 1
    return IF(
        ge(months_since_purchase, _depreciated_from),
        IF(gt(ramp, 0), MIN(1, months_in_service / MAX(ramp, 1)), 1),
        0,
    )


_horizon = Name("calc.horizon_months")
# The annual schedule (econ.tax._annual_pay_month): year y's tax in month 12 y + the delay (its
# return's due month), or in the last month for the years whose month falls at or after it.
_DELAY = tax.ANNUAL_PAYMENT_DELAY
_due_year = INT((month - _DELAY) / 12)
_first_settled = MAX(1, -INT(-(_horizon - _DELAY) / 12))  # the first year paid in the last month
_annual_tax = IF(
    eq(month, _horizon),
    _Aggregate("SUM", "tax_due_usd", sheet="Annual")
    - IF(
        gt(_first_settled, 1),
        _Lookup("tax_due_to_date_usd", MAX(_first_settled - 1, 1)),
        0,
    ),
    IF(
        AND(ge(month, 12 + _DELAY), lt(month, _horizon), eq(month - _DELAY - 12 * _due_year, 0)),
        _Lookup("tax_due_usd", MAX(_due_year, 1)),
        0,
    ),
)
_token_revenue = (
    (1 - _contract_share)
    * mcol("tokens")
    * mcol("token_price_usd_per_mtok")
    / Name("const.tokens_per_mtok")
)

# The token mix (econ.market.input_price_paths, token_mix_revenue): input prices follow the
# output price's decline unless given their own; cached tokens pay the input price if unpriced.
_input_decline = IF(
    ISBLANK(Name("market.input_price_decline_annual")),
    Name("market.price_decline_annual"),
    Name("market.input_price_decline_annual"),
)
_cached_decline = IF(
    ISBLANK(Name("market.cached_input_price_decline_annual")),
    Name("market.price_decline_annual"),
    Name("market.cached_input_price_decline_annual"),
)
_no_input_price = eq(Name("market.input_price_usd_per_mtok"), 0)
_input_sold = (1 - _contract_share) * mcol("input_tokens") / Name("const.tokens_per_mtok")


def _token_kind_revenue(share: Expr, price: str) -> Expr:
    """Revenue of uncached or cached input tokens (0 where input tokens are not priced)."""
    return IF(_no_input_price, 0, IF(_sells_hours, 0, _input_sold * share * mcol(price)))


def _cumulative(name: str) -> Running:
    return Running("SUM", M, name)


TAX_EXPENSE = ("current_tax_usd", "deferred_tax_usd")
"""The income statement's tax expense (ASC 740), current and deferred, as Annual shows it."""
DEBT_OWED_USD = capital.OWED_USD
"""Debt service or a balance above this is owed (econ.capital.coverage_ratios) [USD]."""
_dscr_floor, _dscr_test = Name("financing.covenants.dscr_floor"), Cell("Debt", "dscr_test")
_book_value = Cell("Depreciation", "book_value_usd")


def _covenants_are(llcr: bool, ltv: bool) -> Gate:
    """Whether the scenario has an LLCR floor (`llcr`) and an LTV ceiling (`ltv`), or not."""

    def gate(info: _Info) -> bool:
        floor = _attr(info.scenario, "financing.covenants.llcr_floor")
        ceiling = _attr(info.scenario, "financing.covenants.ltv_ceiling")
        return (floor is not None) == llcr and (ceiling is not None) == ltv

    return gate


def _covenant_breach(llcr: bool, ltv: bool) -> Expr:
    """1 in a month with any covenant breach (econ.capital.coverage_ratios): the DSCR test
    (Debt!dscr_breach), the LLCR below its floor from the first test month, the LTV above its
    ceiling (or debt owed against no collateral) while debt is outstanding. The LLCR and LTV
    tests are written only where the scenario has them, so that a blank floor or ceiling is
    read by no formula (typing one needs a new export)."""
    dscr = Cell("Debt", "dscr_breach")
    if not (llcr or ltv):
        return dscr
    parts = [eq(dscr, 1)]
    if llcr:
        ratio = mcol("llcr")
        tested = AND(ge(month, _first_test), lt(ratio, Name("financing.covenants.llcr_floor")))
        parts.append(eq(IF(ISNUMBER(ratio), IF(tested, 1, 0), 0), 1))
    if ltv:
        ratio = mcol("ltv")
        above = IF(ISNUMBER(ratio), IF(gt(ratio, Name("financing.covenants.ltv_ceiling")), 1, 0), 1)
        parts.append(eq(IF(gt(mcol("debt_balance_usd"), DEBT_OWED_USD), above, 0), 1))
    return IF(OR(*parts), 1, 0)


SPECS: tuple[Spec, ...] = (
    helper(
        M,
        "tax_year",
        IF(eq(month, 0), 1, INT((month - 1) / 12) + 1),
        label="the month's tax year (asset year): year y is months 12y-11..12y, year 1 with "
        "month 0",
        unit="year",
    ),
    helper(
        M,
        "in_service",
        IF(_serving, 1, 0),
        label="1 in a month the GPUs serve (from the service start to fleet.retire_month)",
        unit=FLAG_UNIT,
    ),
    # Fleet and throughput (econ.market.utilization_path, econ.engine).
    line(
        "gpus_in_service",
        Name("fleet.gpu_count") * _ramp(Name("fleet.deployment_ramp_months")) * in_service,
    ),
    helper(
        M,
        "utilization",
        Name("utilization.share")
        * _ramp(Name("utilization.ramp_months"))
        * (1 - Name("utilization.churn_annual")) ** (MAX(since - 1, 0) / 12)
        * in_service,
        Name("utilization.share") * _ramp(Name("utilization.ramp_months")) * in_service,
        label="share of hours serving",
        unit="fraction",
    ),
    helper(
        M,
        "throughput_multiplier",
        values=_throughput_multiplier,
        label="the software-gain trajectory: tokens per GPU relative to "
        "throughput.tokens_per_s_per_gpu (the engine's values)",
        unit="x",
    ),
    helper(
        M,
        "tokens_per_s_per_gpu",
        Name("throughput.tokens_per_s_per_gpu") * mcol("throughput_multiplier"),
        label="output tokens per second per GPU while serving, software gains included",
        unit="tokens/s/GPU",
    ),
    line("tokens", _gpus * mcol("tokens_per_s_per_gpu") * _util * Name("const.seconds_per_month")),
    # Revenue (econ.market.token_price_usd_per_mtok, rental_price_usd_per_gpu_hour, revenue_by_source).
    helper(
        M,
        "token_price_usd_per_mtok",
        Name("market.price_usd_per_mtok")
        * (1 - Name("market.price_decline_annual")) ** (MAX(month - 1, 0) / 12),
        label="output token price, declining at market.price_decline_annual from month 1",
    ),
    helper(
        M,
        "rental_usd_per_gpu_hour",
        Name("market.rental_floor_usd_per_gpu_hour")
        + (Name("market.rental_usd_per_gpu_hour") - Name("market.rental_floor_usd_per_gpu_hour"))
        * (1 - Name("market.rental_decline_annual")) ** (MAX(month - 1, 0) / 12),
        label="spot GPU-hour price, declining towards its floor",
    ),
    helper(
        M,
        "input_price_usd_per_mtok",
        Name("market.input_price_usd_per_mtok") * (1 - _input_decline) ** (MAX(month - 1, 0) / 12),
        label="input token price (not cached)",
    ),
    helper(
        M,
        "cached_input_price_usd_per_mtok",
        IF(
            ISBLANK(Name("market.cached_input_price_usd_per_mtok")),
            mcol("input_price_usd_per_mtok"),
            Name("market.cached_input_price_usd_per_mtok")
            * (1 - _cached_decline) ** (MAX(month - 1, 0) / 12),
        ),
        label="cached input token price (the input price where none is given)",
    ),
    line(
        "input_tokens",
        IF(
            ISBLANK(Name("throughput.input_tokens_per_output_token")),
            IF(eq(mcol("tokens"), 0), 0, ""),  # unknown where tokens are produced
            Name("throughput.input_tokens_per_output_token") * mcol("tokens"),
        ),
    ),
    line("output_token_revenue_usd", IF(_sells_hours, 0, _token_revenue), _token_revenue),
    line(
        "input_token_revenue_usd",
        _token_kind_revenue(1 - Name("market.cache_hit_share"), "input_price_usd_per_mtok"),
    ),
    line(
        "cached_input_token_revenue_usd",
        _token_kind_revenue(Name("market.cache_hit_share"), "cached_input_price_usd_per_mtok"),
    ),
    line(
        "token_revenue_usd",
        mcol("output_token_revenue_usd")
        + mcol("input_token_revenue_usd")
        + mcol("cached_input_token_revenue_usd"),
        IF(_sells_hours, 0, _token_revenue),
        _token_revenue,
    ),
    line(
        "contract_revenue_usd",
        _contract_share
        * _gpus
        * Name("const.hours_per_month")
        * Name("market.contract_usd_per_gpu_hour"),
    ),
    line(
        "spot_revenue_usd",
        IF(
            _sells_hours,
            (1 - _contract_share)
            * _gpus
            * Name("const.hours_per_month")
            * _util
            * mcol("rental_usd_per_gpu_hour"),
            0,
        ),
    ),
    line(
        "revenue_usd",
        mcol("token_revenue_usd") + mcol("contract_revenue_usd") + mcol("spot_revenue_usd"),
        mcol("token_revenue_usd") + mcol("contract_revenue_usd"),
    ),
    # Power and facility (econ.power, econ.facility: colocation on contracted or installed kW).
    helper(
        M,
        "power_price_usd_per_kwh",
        Name("power.price_usd_per_kwh")
        * _after_month_1(Name("power.escalation_annual"))
        * Name("power.time_of_day_factor"),
        label="electricity price, escalating from month 1, times the time-of-day factor",
        unit="USD/kWh",
    ),
    helper(
        M,
        "it_drawn_kw",
        _it_kw * (_util + (1 - _util) * Name("power.idle_power_share")),
        label="average IT power drawn",
    ),
    line(
        "power_usd",
        mcol("it_drawn_kw")
        * Name("power.pue")
        * Name("const.hours_per_month")
        * mcol("power_price_usd_per_kwh"),
    ),
    line(
        "facility_usd",
        Name("facility.colo_usd_per_kw_month")
        * _after_month_1(Name("facility.escalation_annual"))
        * IF(
            ISBLANK(Name("facility.contracted_kw")),
            _it_kw,
            Name("facility.contracted_kw") * _open
            + Name("facility.overage_multiplier")
            * MAX(_it_kw - Name("facility.contracted_kw") * _open, 0),
        ),
    ),
    line(
        "opex_usd",
        Name("opex.staff_usd_per_month") * _open * IF(le(month, retire), 1, 0)
        + (
            Name("opex.maintenance_share_of_capex_annual")
            * IF(ge(month, _service_start + Name("opex.warranty_months")), 1, 0)
            + Name("opex.insurance_share_of_capex_annual")
        )
        / Name("const.months_per_year")
        * _fleet_capex
        * in_service
        + _gpus * Name("opex.software_usd_per_gpu_month")
        + Name("opex.sga_share_of_revenue") * mcol("revenue_usd"),
    ),
    line(
        "ebitda_usd",
        mcol("revenue_usd") - mcol("power_usd") - mcol("facility_usd") - mcol("opex_usd"),
    ),
    # Capex, depreciation (straight line as a formula; other methods as a schedule per USD of
    # cost), impairment and sale at book value or at a share of cost (econ.depreciation).
    line("capex_usd", IF(eq(month, purchase), _fleet_capex, 0)),
    helper(
        "Depreciation",
        "book_share_of_capex",
        values=_share_of_capex("depreciation_usd"),
        label="book depreciation per USD of the fleet's capex (the engine's schedule)",
        unit="USD/USD of capex",
    ),
    helper(
        "Depreciation",
        "tax_share_of_capex",
        values=_share_of_capex("tax_depreciation_usd"),
        label="tax depreciation per USD of the fleet's capex (the engine's schedule)",
        unit="USD/USD of capex",
    ),
    line(
        "depreciation_usd",
        when(
            _all(_method_is("depreciation.method", "straight_line"), _single_fleet),
            IF(
                le(month, retire),
                (_fleet_capex - Name("calc.salvage_usd"))
                / _life_months
                * (
                    _depreciated_share(since)
                    - (1 - _life_fraction) * _depreciated_share(since - INT(_life_months))
                    - _life_fraction * _depreciated_share(since - INT(_life_months) - 1)
                ),
                0,
            ),
        ),
        _fleet_capex * Cell("Depreciation", "book_share_of_capex"),
    ),
    line("impairment_usd", when(_no_impairment, Num(0.0))),
    line(
        "tax_depreciation_usd",
        when(_method_is("depreciation.tax.method", "book"), _dep),
        _fleet_capex * Cell("Depreciation", "tax_share_of_capex"),
    ),
    # Sold at book value, or at depreciation.sale_value_share of cost where that is filled in
    # (a resale table's sale is not written as a formula: its sale is values; so is a sale at
    # book value after an impairment, which fetches the book value before it).
    line(
        "disposal_usd",
        when(
            lambda info: not _sells_at_resale(info),
            IF(
                eq(month, retire),
                IF(
                    ISBLANK(Name("depreciation.sale_value_share")),
                    MAX(
                        0,
                        _fleet_capex
                        - _cumulative("depreciation_usd")
                        - _cumulative("impairment_usd"),
                    ),
                    Name("depreciation.sale_value_share") * _fleet_capex,
                ),
                0,
            ),
        ),
    ),
    line(
        "gain_on_disposal_usd",
        IF(
            eq(month, retire),
            _disposal
            - (_fleet_capex - _cumulative("depreciation_usd") - _cumulative("impairment_usd")),
            0,
        ),
    ),
    line(
        "tax_gain_on_disposal_usd",
        IF(eq(month, retire), _disposal - (_fleet_capex - _cumulative("tax_depreciation_usd")), 0),
    ),
    # The loan: level monthly payments over its term from the month after the draw; what is
    # still owed in the last month of the projection is repaid then (econ.capital settlement).
    helper(
        "Debt",
        "scheduled_balance_usd",
        when(
            lambda info: not _attr(info.scenario, "financing.tranches", ()),
            IF(
                lt(month, purchase),
                0,
                _snapped(
                    -Call(
                        "FV",
                        _loan_rate,
                        MIN(since, _term),
                        Call("PMT", _loan_rate, _term, _debt),
                        _debt,
                    )
                ),
            ),
        ),
        label="balance on the amortization schedule, before any balloon (0 within half a cent)",
    ),
    helper(
        "Debt",
        "scheduled_principal_usd",
        IF(ge(since, 1), Prev("Debt", "scheduled_balance_usd") - _scheduled, 0),
        label="principal due on the amortization schedule (the debt service's)",
    ),
    helper(
        "Debt",
        "balloon_usd",
        IF(eq(month, _horizon), _scheduled, 0),
        label="repaid in the last month",
    ),
    line("debt_balance_usd", IF(ge(month, _horizon), 0, _scheduled)),
    line(
        "interest_usd",
        IF(ge(since, 1), Prev("Debt", "scheduled_balance_usd") * _loan_rate, 0),
        # a loan held at the engine's balances (sized or sculpted): interest on them, live in
        # the rate (econ.analysis.committed holds the same balances whatever the rate)
        when(
            lambda info: not _attr(info.scenario, "financing.tranches", ()),
            IF(ge(since, 1), Prev(M, "debt_balance_usd") * _loan_rate, 0),
        ),
    ),
    line("cash_interest_usd", mcol("interest_usd")),
    # financing.debt_share's loan has no undrawn commitment; a capital stack's fees are values.
    line(
        "commitment_fee_usd",
        when(lambda info: not _attr(info.scenario, "financing.tranches", ()), Num(0)),
    ),
    line("principal_usd", Cell("Debt", "scheduled_principal_usd") + Cell("Debt", "balloon_usd")),
    # Debt service excludes balloons (refinanced; econ.capital), so DSCR does too.
    line(
        "debt_service_usd",
        mcol("cash_interest_usd")
        + mcol("commitment_fee_usd")
        + Cell("Debt", "scheduled_principal_usd"),
        mcol("cash_interest_usd") + mcol("commitment_fee_usd") + mcol("principal_usd"),
    ),
    # After the loan's service lines: a draw is a formula only where they are (`_frozen_draws`).
    helper(
        "Debt",
        "draws_usd",
        IF(eq(month, purchase), _debt, 0),
        values=_frozen_draws,
        label="debt drawn (a sized loan's as econ sized it, held)",
    ),
    # Tax per tax year with losses carried forward (econ.tax), spread over the year's months.
    helper(
        M,
        "taxable_income_usd",
        mcol("ebitda_usd") - _tax_dep - mcol("interest_usd") + _tax_gain,
        label="taxable income: EBITDA - tax depreciation - interest + tax gain on disposal",
    ),
    helper(
        "Annual",
        "months_in_year",
        MIN(12, MAX(0, Name("calc.horizon_months") - 12 * (Cell("Annual", "tax_year") - 1))),
        label="months of the year after month 0 (the last year may be short)",
        unit="months",
    ),
    helper(
        "Annual",
        "taxable_income_usd",
        _SumIf("taxable_income_usd"),
        label="the year's taxable income",
    ),
    helper(
        "Annual",
        "cumulative_taxable_income_usd",
        Running("SUM", "Annual", "taxable_income_usd"),
        label="taxable income to the year's end",
    ),
    helper(
        "Annual",
        "loss_carried_forward_usd",
        _LossesUnused(_loss_limit),
        label="losses carried forward, not yet used",
    ),
    helper(
        "Annual",
        "income_taxed_usd",
        MAX(0, Cell("Annual", "taxable_income_usd"))
        - MIN(
            Prev("Annual", "loss_carried_forward_usd"),
            _loss_limit * MAX(0, Cell("Annual", "taxable_income_usd")),
        ),
        label="taxable income less the losses carried forward it may absorb",
    ),
    helper(
        "Annual",
        "tax_due_usd",
        Cell("Annual", "income_taxed_usd") * _tax_rate,
        label="the year's tax: the income taxed x financing.tax_rate",
    ),
    helper(
        "Annual",
        "loss_change_usd",
        Cell("Annual", "loss_carried_forward_usd") - Prev("Annual", "loss_carried_forward_usd"),
        label="the change of the losses carried forward over the year",
    ),
    # Tax paid (econ.tax.tax_payments_usd): never before the first taxable income (a month whose
    # cumulative taxable income is positive, or, with a loss limit below 1, whose income so far in
    # its tax year is); quarterly estimates in the months they are due (4, 6, 9 and 12 of the
    # tax year, econ.tax.INSTALLMENT_MONTHS), or monthly in equal parts.
    helper(
        M,
        "cumulative_taxable_usd",
        _cumulative("taxable_income_usd"),
        label="taxable income since month 0",
    ),
    helper(
        M,
        "taxable_so_far",
        IF(
            Call(
                "OR",
                gt(mcol("cumulative_taxable_usd"), 0),
                AND(
                    lt(_loss_limit, 1),
                    gt(
                        mcol("cumulative_taxable_usd")
                        - IF(
                            gt(mcol("tax_year"), 1),
                            _Lookup("cumulative_taxable_income_usd", MAX(mcol("tax_year") - 1, 1)),
                            0,
                        ),
                        0,
                    ),
                ),
            ),
            1,
            0,
        ),
        label="1 from the first taxable income (cumulative, or in the tax year with a loss limit "
        "below 1): tax is paid from then on",
        unit=FLAG_UNIT,
    ),
    helper(
        M,
        "tax_installment",
        IF(
            AND(
                ge(month, 1),
                le(month, _horizon),
                gt(Running("MAX", M, "taxable_so_far"), 0),
                Call(
                    "OR",
                    eq(Name("financing.tax_payment"), "monthly"),
                    *(eq(month - 12 * INT(month / 12), due % 12) for due in tax.INSTALLMENT_MONTHS),
                    eq(month, _horizon),
                ),
            ),
            1,
            0,
        ),
        label="1 in a month the year's tax is paid in",
        unit=FLAG_UNIT,
    ),
    helper(
        "Annual",
        "installments",
        _SumIf("tax_installment"),
        label="months the year's tax is paid in (it is paid in equal parts)",
        unit="months",
    ),
    helper(
        "Annual",
        "tax_due_to_date_usd",
        Running("SUM", "Annual", "tax_due_usd"),
        label="tax due to the year's end (the annual schedule settles it)",
    ),
    line(
        "tax_usd",
        IF(
            eq(Name("financing.tax_payment"), "annual"),
            _annual_tax,
            mcol("tax_installment")
            * _Lookup("tax_due_usd", mcol("tax_year"))
            / MAX(_Lookup("installments", mcol("tax_year")), 1),
        ),
    ),
    # Current and deferred tax expense (econ.deferred_tax.deferred_tax_with_losses, ASC 740):
    # the losses carried forward are a deferred tax asset, recognized at each year end.
    helper(
        M,
        "year_end",
        IF(eq(month, MIN(12 * mcol("tax_year"), _horizon)), 1, 0),
        label="1 in the last month of a tax year",
        unit=FLAG_UNIT,
    ),
    line(
        "current_tax_usd",
        _tax_rate
        * (
            mcol("taxable_income_usd")
            + mcol("year_end") * _Lookup("loss_change_usd", mcol("tax_year"))
        ),
    ),
    line(
        "deferred_tax_usd",
        _tax_rate
        * (
            _tax_dep
            - _dep
            - _imp
            + _gain
            - _tax_gain
            - mcol("year_end") * _Lookup("loss_change_usd", mcol("tax_year"))
        ),
    ),
    line("deferred_tax_liability_usd", _cumulative("deferred_tax_usd")),
    line(
        "net_income_usd",
        mcol("ebitda_usd")
        - _dep
        - _imp
        - mcol("interest_usd")
        + _gain
        - mcol("current_tax_usd")
        - mcol("deferred_tax_usd"),
    ),
    line(
        "cash_flow_project_usd",
        mcol("ebitda_usd") - mcol("capex_usd") + _disposal - mcol("tax_usd"),
    ),
    helper(
        "Debt",
        "financing_cash_flow_usd",
        values=_financing_cash_flow,
        label="draws less debt service and fees of the capital stack (the engine's values)",
    ),
    line(
        "cash_flow_equity_usd",
        mcol("cash_flow_project_usd")
        + Cell("Debt", "draws_usd")
        - mcol("cash_interest_usd")
        - mcol("commitment_fee_usd")
        - mcol("principal_usd"),
        mcol("cash_flow_project_usd") + Cell("Debt", "financing_cash_flow_usd"),
    ),
    helper(
        M,
        "irr_scan_rate",
        Num(1 + IRR_RANGE_ANNUAL[0])
        ** ((1 - month / MAX(_horizon, 1)) / Name("const.months_per_year"))
        * Num(1 + IRR_RANGE_ANNUAL[1]) ** (month / MAX(_horizon, 1) / Name("const.months_per_year"))
        - 1,
        label="monthly rates from -99% to +1,000% a year, one a row, at which the NPV is scanned "
        "for the IRR rule (several rates falling through zero: no IRR)",
        unit="1/month",
    ),
    *(
        helper(M, f"npv_scan_{name}", _ScanNpv(name), label="NPV at this row's irr_scan_rate")
        for name in ("cash_flow_project_usd", "cash_flow_equity_usd")
    ),
    *(
        helper(
            M,
            f"sign_{name}",
            _LastSign(name),
            label="sign of the last flow beyond half a cent, to count the sign changes (IRR)",
            unit="-1, 0 or 1",
        )
        for name in ("cash_flow_project_usd", "cash_flow_equity_usd")
    ),
    line(
        "dscr",
        IF(
            gt(mcol("debt_service_usd"), 1e-6),
            (mcol("ebitda_usd") - mcol("tax_usd")) / mcol("debt_service_usd"),
            Text(""),
        ),
    ),
    helper(
        M,
        "discount_factor",
        (1 + Name("calc.discount_rate_monthly")) ** -month,
        label="(1 + monthly discount rate)^-month",
        unit="1",
    ),
    # Views: the schedules regrouped for reading, as formulas over Monthly.
    *(
        view("Debt", name, mcol(name), "from Monthly")
        for name in (
            "interest_usd",
            "principal_usd",
            "debt_service_usd",
            "debt_balance_usd",
            "dscr",
        )
    ),
    # Tested in each month of the loan's life (service in it, or debt owed at its start) whose
    # window holds debt service (econ.financing.covenant_test_months), between coupons too.
    helper(
        "Debt",
        "dscr_test",
        IF(
            AND(
                gt(_Trailing("debt_service_usd", _window), DEBT_OWED_USD),
                OR(
                    gt(mcol("debt_service_usd"), DEBT_OWED_USD),
                    gt(Prev(M, "debt_balance_usd"), DEBT_OWED_USD),
                ),
                ge(month, _first_test),
            ),
            (_Trailing("ebitda_usd", _window) - _Trailing("tax_usd", _window))
            / _Trailing("debt_service_usd", _window),
            Text(""),
        ),
        label="the DSCR the covenant tests: cash available for debt service over debt service, "
        "each summed over the trailing financing.covenants.test_months, in each month of the "
        "loan's life whose window holds debt service (from financing.covenants.first_test_month "
        "on)",
        unit="x",
    ),
    line("dscr_test", IF(ISBLANK(_dscr_floor), Text(""), Cell("Debt", "dscr_test"))),
    Spec(
        "Debt",
        "dscr_floor",
        _candidates((when(_has_dscr_floor, Name("financing.covenants.dscr_floor")),)),
        label="the covenants' DSCR floor (financing.covenants.dscr_floor), for the DSCR chart",
        unit="x",
    ),
    *(
        view(M, f"cumulative_{name}", _cumulative(name), f"running sum of {name}, for the chart")
        for name in ("cash_flow_project_usd", "cash_flow_equity_usd")
    ),
    *(
        view("Depreciation", name, mcol(name), "from Monthly")
        for name in (
            "capex_usd",
            "depreciation_usd",
            "impairment_usd",
            "tax_depreciation_usd",
            "disposal_usd",
        )
    ),
    view(
        "Depreciation",
        "book_value_usd",
        _cumulative("capex_usd")
        - _cumulative("depreciation_usd")
        - _cumulative("impairment_usd")
        - _cumulative("disposal_usd")
        + _cumulative("gain_on_disposal_usd"),
        "cost less accumulated depreciation and impairment, less the carrying amount sold",
    ),
    view(
        "Depreciation",
        "tax_basis_usd",
        _cumulative("capex_usd")
        - _cumulative("tax_depreciation_usd")
        - _cumulative("disposal_usd")
        + _cumulative("tax_gain_on_disposal_usd"),
        "cost less accumulated tax depreciation, less the tax basis sold",
    ),
    *(
        view("Annual", name, _SumIf(name))
        for name in (
            "revenue_usd",
            "power_usd",
            "facility_usd",
            "opex_usd",
            "ebitda_usd",
            "depreciation_usd",
            "impairment_usd",
        )
    ),
    # The year's income statement reconciles: EBIT (with the gain on disposal, which ASC
    # 360-10-45-5 reports in operating income) - interest - current tax - deferred tax = net
    # income (tax expense, ASC 740); tax_usd is the tax paid, in cash.
    view("Annual", "gain_on_disposal_usd", _SumIf("gain_on_disposal_usd")),
    view(
        "Annual",
        "ebit_usd",
        Cell("Annual", "ebitda_usd")
        - Cell("Annual", "depreciation_usd")
        - Cell("Annual", "impairment_usd")
        + Cell("Annual", "gain_on_disposal_usd"),
        "EBIT: EBITDA - depreciation - impairment + gain on disposal (econ.engine.annual_table)",
    ),
    view("Annual", "interest_usd", _SumIf("interest_usd")),
    # (a year whose tax expense is 0 in exact arithmetic sums to +-1e-10: 0, not a red -$0.00)
    *(view("Annual", name, _snapped(_SumIf(name))) for name in TAX_EXPENSE),
    *(
        view("Annual", name, _SumIf(name))
        for name in ("net_income_usd", "tax_usd", "cash_flow_project_usd", "cash_flow_equity_usd")
    ),
    # Covenant tests (econ.capital.coverage_ratios): the DSCR test's breaches and the months of
    # debt service before the first, the LLCR and LTV, and any breach, so that the Summary's
    # covenant rows are formulas over them.
    helper(
        "Debt",
        "dscr_breach",
        IF(
            ISBLANK(_dscr_floor),
            0,
            IF(ISNUMBER(_dscr_test), IF(lt(_dscr_test, _dscr_floor), 1, 0), 0),
        ),
        label="1 in a month whose tested DSCR (dscr_test) is below financing.covenants.dscr_floor",
        unit=FLAG_UNIT,
    ),
    helper(
        "Debt",
        "headroom_month",
        IF(AND(ISNUMBER(_dscr_test), eq(Running("SUM", "Debt", "dscr_breach"), 0)), 1, 0),
        label="1 in a month the DSCR covenant tests (dscr_test) before its first breach "
        "(months_of_headroom counts them)",
        unit=FLAG_UNIT,
    ),
    helper(
        "Debt",
        "cfads_pv_usd",
        when(
            lambda info: not _attr(info.scenario, "financing.tranches", ()),
            IF(
                le(month, MIN(_LastMonthAbove(M, "debt_balance_usd", DEBT_OWED_USD) + 1, _horizon)),
                (mcol("ebitda_usd") - mcol("tax_usd")) * (1 + _loan_rate) ** -month,
                0,
            ),
        ),
        label="cash available for debt service (EBITDA - tax paid) discounted to month 0 at the "
        "loan's monthly rate, to the month after the last with debt outstanding: what the LLCR "
        "sums over the later months",
    ),
    line(
        "llcr",
        when(
            lambda info: not _attr(info.scenario, "financing.tranches", ()),
            IF(
                gt(mcol("debt_balance_usd"), DEBT_OWED_USD),
                _Remaining("Debt", "cfads_pv_usd")
                / (1 + _loan_rate) ** -month
                / mcol("debt_balance_usd"),
                Text(""),
            ),
        ),
    ),
    # (the collateral is the book value: not a resale table's value, nor capitalized interest)
    line(
        "ltv",
        when(
            lambda info: not _sells_at_resale(info),
            IF(
                ge(_book_value, units.HALF_CENT_USD),
                mcol("debt_balance_usd") / _book_value,
                Text(""),
            ),
        ),
    ),
    line(
        "covenant_breach",
        *(
            when(_covenants_are(llcr, ltv), _covenant_breach(llcr, ltv))
            for llcr in (False, True)
            for ltv in (False, True)
        ),
    ),
    # Payback (econ.metrics.payback): the first month from month 1 whose cumulative project cash
    # flow is at least 0.
    helper(
        M,
        "payback_reached",
        IF(AND(ge(month, 1), ge(mcol("cumulative_cash_flow_project_usd"), 0)), 1, 0),
        label="1 in a month from month 1 whose cumulative project cash flow is at least 0 "
        "(payback_months interpolates within the first)",
        unit=FLAG_UNIT,
    ),
    # Last on Debt, so its other columns keep their letters: without it a construction period's
    # capitalized interest (interest_usd 0) and deferred interest left the balance unexplained.
    Spec(
        "Debt",
        "interest_added_usd",
        _candidates(
            (
                when(
                    lambda info: not _attr(info.scenario, "financing.tranches", ()),
                    mcol("capitalized_interest_usd")
                    + mcol("interest_usd")
                    - mcol("cash_interest_usd"),
                ),
            )
        ),
        label="interest added to the loan's balance, not paid: capitalized_interest_usd "
        "(construction) + interest_usd - cash_interest_usd (deferred); debt_balance_usd = the "
        "month before's + draws_usd + this - principal_usd",
    ),
)

DERIVED: tuple[tuple[str, Expr, str, str], ...] = (
    (
        "calc.hardware_usd_per_gpu",
        IF(
            ISBLANK(Name("capex.gpu_price_usd")),
            Name("capex.system_price_usd") / Name("capex.gpus_per_system"),
            Name("capex.gpu_price_usd"),
        ),
        "USD/GPU",
        "hardware price per GPU: gpu_price_usd, else system_price_usd / gpus_per_system",
    ),
    (
        "calc.capex_usd_per_gpu",
        Name("calc.hardware_usd_per_gpu") * (1 + Name("capex.spares_share"))
        + Name("capex.networking_usd_per_gpu")
        + Name("capex.storage_usd_per_gpu")
        + Name("capex.installation_usd_per_gpu"),
        "USD/GPU",
        "capitalized cost per GPU: hardware with spares, network, storage, installation",
    ),
    (
        "calc.fleet_capex_usd",
        Name("calc.capex_usd_per_gpu") * Name("fleet.gpu_count"),
        "USD",
        "capex of the fleet, paid in the purchase month",
    ),
    (
        "calc.salvage_usd",
        Name("depreciation.salvage_share") * Name("calc.fleet_capex_usd"),
        "USD",
        "residual value at the end of the book life",
    ),
    (
        "calc.life_months",
        Name("depreciation.life_years") * Name("const.months_per_year"),
        "months",
        "book life in months",
    ),
    (
        "calc.depreciation_start_month",
        MAX(Name("depreciation.in_service_month"), _service_start - purchase),
        "month",
        "first month depreciated, in months since purchase: depreciation.in_service_month, or "
        "the first month in service if later",
    ),
    (
        "calc.retire_month",
        IF(
            ISBLANK(Name("fleet.retire_month")),
            Name("calc.horizon_months"),
            Name("fleet.retire_month"),
        ),
        "month",
        "last month in service: fleet.retire_month, else the horizon",
    ),
    (
        "calc.debt_usd",
        IF(
            ISBLANK(Name("financing.debt_usd")),
            Name("financing.debt_share") * Name("calc.fleet_capex_usd"),
            MIN(Name("financing.debt_usd"), Name("calc.fleet_capex_usd")),
        ),
        "USD",
        "term loan drawn in the purchase month, before any sizing: financing.debt_usd (at most "
        "the capex), else debt_share of the capex",
    ),
    (
        "calc.loan_rate_monthly",
        IF(
            eq(Name("financing.debt_rate_quote"), "nominal"),
            Name("financing.debt_rate_annual") / Name("const.months_per_year"),
            (1 + Name("financing.debt_rate_annual")) ** (1 / Name("const.months_per_year")) - 1,
        ),
        "1/month",
        "loan rate per month: rate/12 when quoted nominal, (1+rate)^(1/12)-1 when effective",
    ),
    (
        "calc.discount_rate_monthly",
        (1 + Name("financing.discount_rate_annual")) ** (1 / Name("const.months_per_year")) - 1,
        "1/month",
        "discount rate per month, (1+r)^(1/12)-1",
    ),
    (
        "calc.it_kw_per_gpu",
        IF(
            eq(Name("power.kw_per_gpu_definition"), "chip_only"),
            Name("power.kw_per_gpu") * (1 + Name("power.host_overhead_share")),
            IF(
                eq(Name("power.kw_per_gpu_definition"), "utility_meter"),
                Name("power.kw_per_gpu") / Name("power.pue"),
                Name("power.kw_per_gpu"),
            ),
        ),
        "kW/GPU",
        "full-load IT power per GPU on the chip-plus-host boundary",
    ),
)
"""Derived figures on the Assumptions sheet: (key, formula, unit, description)."""

CONSTANTS = (
    ("const.hours_per_month", units.HOURS_PER_MONTH, "h", "hours in an average month (8760/12)"),
    ("const.seconds_per_month", units.SECONDS_PER_MONTH, "s", "seconds in an average month"),
    ("const.tokens_per_mtok", units.TOKENS_PER_MTOK, "tokens/Mtok", "tokens per million tokens"),
    ("const.months_per_year", float(units.MONTHS_PER_YEAR), "months", "months per year"),
)


@dataclass
class SummarySpec:
    """A Summary row's formula, checked against the engine's metric. `needs` are the columns it
    reads that must be formulas: over the engine's values of a line (a capital stack's LLCR)
    the row would follow no change, so it is written as the engine's value instead."""

    name: str
    formula: Expr
    engine: Callable[[Projection, int], float | None]
    needs: tuple[tuple[str, str], ...] = ()


def _metric(name: str) -> Callable[[Projection, int], float | None]:
    return lambda p, k: float(p.metrics[name][k]) if name in p.metrics else None


def _component(name: str) -> Callable[[Projection, int], float | None]:
    return lambda p, k: float(p.components[name][k]) if name in p.components else None


NO_TOKENS = "n/a: no tokens are produced"
_PV_TOKENS = _PresentValue("tokens")
_PER_MTOK = Name("const.tokens_per_mtok")


def _per_mtok(numerator: Expr) -> Expr:
    return _Guard(le(_PV_TOKENS, 0), NO_TOKENS, numerator / _PV_TOKENS * _PER_MTOK)


_PV_ALL_TOKENS = _PresentValue("tokens") + _PresentValue("input_tokens")
NO_RATIO = "n/a: throughput.input_tokens_per_output_token is not given"
_NO_RATIO = ISBLANK(Name("throughput.input_tokens_per_output_token"))

NO_GPU_HOURS = "n/a: no GPU is in service"
_PV_GPU_HOURS = _PresentValue("gpus_in_service") * Name("const.hours_per_month")


def _per_gpu_hour(numerator: Expr) -> Expr:
    return _Guard(le(_PV_GPU_HOURS, 0), NO_GPU_HOURS, numerator / _PV_GPU_HOURS)


def _gpu_hour_specs(pv_costs: dict[str, Expr]) -> list[SummarySpec]:
    """cost_usd_per_gpu_hour and its parts: the levelized cost's PVs over PV(GPU-hours)."""
    parts = [
        SummarySpec(
            f"cost_usd_per_gpu_hour_{c}",
            _per_gpu_hour(pv_costs[c]),
            _metric(f"cost_usd_per_gpu_hour_{c}"),
        )
        for c in _COMPONENT_NAMES
    ]
    cells = [Cell("Summary", f"cost_usd_per_gpu_hour_{c}") for c in _COMPONENT_NAMES]
    total = _Guard(le(_PV_GPU_HOURS, 0), NO_GPU_HOURS, sum(cells[1:], cells[0]))
    return [*parts, SummarySpec("cost_usd_per_gpu_hour", total, _metric("cost_usd_per_gpu_hour"))]


def _summary_specs(projection: Projection, k: int, scenario: Scenario) -> list[SummarySpec]:
    """Summary formulas of scenario k; the IRR guesses start at the engine's roots, so a
    spreadsheet's Newton iteration finds the same root when cash flows change sign often."""

    def guess(metric: str) -> float:
        value = _metric(metric)(projection, k)
        return 0.01 if value is None or math.isnan(value) else float(units.monthly_rate(value))

    # MIRR: finance rate the engine's cost of debt (the discount rate without debt), monthly:
    # the term loan's rate while the loan is drawn, a capital stack's draw-weighted yield.
    cost_of_debt = _metric("cost_of_debt_annual")(projection, k)
    debt = _metric("debt_usd")(projection, k)
    if not _attr(scenario, "financing.tranches", ()):
        finance = IF(
            gt(Cell("Summary", "debt_usd"), 0),
            Name("calc.loan_rate_monthly"),
            Name("calc.discount_rate_monthly"),
        )
    elif cost_of_debt is not None and not math.isnan(cost_of_debt) and debt and debt > 0:
        finance = Num(float(units.monthly_rate(cost_of_debt)))
    else:
        finance = Name("calc.discount_rate_monthly")
    reinvest = Name("calc.discount_rate_monthly")
    no_mirr = "n/a: the cash flows lack an inflow or an outflow"
    pv_capex = _PresentValue("capex_usd")

    component_cells = [Cell("Summary", f"cost_usd_per_mtok_{c}") for c in _COMPONENT_NAMES]
    equity_share = (_Aggregate("SUM", "capex_usd") - Cell("Summary", "debt_usd")) / _Aggregate(
        "SUM", "capex_usd"
    )
    consumed = (
        _PresentValue("depreciation_usd")
        + _PresentValue("impairment_usd")
        - _PresentValue("gain_on_disposal_usd")
    )
    pv_costs = {
        "depreciation": consumed,
        "financing": _PresentValue("capex_usd") - _PresentValue("disposal_usd") - consumed,
        "power": _PresentValue("power_usd"),
        "facility": _PresentValue("facility_usd"),
        "opex": _PresentValue("opex_usd"),
    }
    return [
        *(
            SummarySpec(f"cost_usd_per_mtok_{c}", _per_mtok(pv_costs[c]), _component(c))
            for c in _COMPONENT_NAMES
        ),
        *_gpu_hour_specs(pv_costs),
        SummarySpec(
            "lcot_usd_per_mtok",
            _Guard(le(_PV_TOKENS, 0), NO_TOKENS, sum(component_cells[1:], component_cells[0])),
            _metric("lcot_usd_per_mtok"),
        ),
        SummarySpec(
            "lcot_usd_per_mtok_all_tokens",
            _Guard(
                _NO_RATIO,
                NO_RATIO,
                _Guard(
                    le(_PV_TOKENS, 0),
                    NO_TOKENS,
                    Cell("Summary", "lcot_usd_per_mtok") * _PV_TOKENS / _PV_ALL_TOKENS,
                ),
            ),
            _metric("lcot_usd_per_mtok_all_tokens"),
        ),
        SummarySpec("tokens_total", _Aggregate("SUM", "tokens"), _metric("tokens_total")),
        SummarySpec(  # (econ.density.power_cost_usd_per_mtok: the plain ratio of the totals)
            "power_cost_usd_per_mtok",
            _Guard(
                le(_Aggregate("SUM", "tokens"), 0),
                NO_TOKENS,
                _Aggregate("SUM", "power_usd") * _PER_MTOK / _Aggregate("SUM", "tokens"),
            ),
            _metric("power_cost_usd_per_mtok"),
        ),
        SummarySpec(
            "input_tokens_total",
            _Guard(_NO_RATIO, NO_RATIO, _Aggregate("SUM", "input_tokens")),
            _metric("input_tokens_total"),
        ),
        SummarySpec(
            "revenue_usd_total", _Aggregate("SUM", "revenue_usd"), _metric("revenue_usd_total")
        ),
        *(
            SummarySpec(
                f"{kind}_revenue_usd_total",
                _Aggregate("SUM", f"{kind}_revenue_usd"),
                _metric(f"{kind}_revenue_usd_total"),
            )
            for kind in TOKEN_KINDS
        ),
        SummarySpec(
            "ebitda_usd_total", _Aggregate("SUM", "ebitda_usd"), _metric("ebitda_usd_total")
        ),
        SummarySpec(
            "net_income_usd_total",
            _Aggregate("SUM", "net_income_usd"),
            _metric("net_income_usd_total"),
        ),
        SummarySpec(
            "impairment_usd_total",
            _Aggregate("SUM", "impairment_usd"),
            _metric("impairment_usd_total"),
        ),
        SummarySpec("capex_usd_total", _Aggregate("SUM", "capex_usd"), _metric("capex_usd_total")),
        SummarySpec("debt_usd", _Aggregate("SUM", "draws_usd", sheet="Debt"), _metric("debt_usd")),
        SummarySpec(
            "npv_usd",
            _Npv("cash_flow_project_usd", Name("calc.discount_rate_monthly")),
            _metric("npv_usd"),
        ),
        SummarySpec(
            "irr_project_annual",
            _Irr("cash_flow_project_usd", guess("irr_project_annual")),
            _metric("irr_project_annual"),
        ),
        SummarySpec(
            "irr_equity_annual",
            _Guard(
                lt(equity_share, MIN_EQUITY_SHARE_FOR_IRR),
                f"n/a: equity is below {MIN_EQUITY_SHARE_FOR_IRR:.0%} of capex",
                _Irr("cash_flow_equity_usd", guess("irr_equity_annual")),
            ),
            _metric("irr_equity_annual"),
        ),
        SummarySpec(
            "mirr_project_annual",
            _Mirr("cash_flow_project_usd", finance, reinvest, no_mirr),
            _metric("mirr_project_annual"),
        ),
        SummarySpec(
            "mirr_equity_annual",
            _Guard(
                lt(equity_share, MIN_EQUITY_SHARE_FOR_IRR),
                f"n/a: equity is below {MIN_EQUITY_SHARE_FOR_IRR:.0%} of capex",
                _Mirr("cash_flow_equity_usd", finance, reinvest, no_mirr),
            ),
            _metric("mirr_equity_annual"),
        ),
        SummarySpec(
            "profitability_index",
            _Guard(le(pv_capex, 0), "n/a: no capex", 1 + Cell("Summary", "npv_usd") / pv_capex),
            _metric("profitability_index"),
        ),
        SummarySpec(
            "min_dscr",
            _Guard(
                eq(_Aggregate("COUNT", "dscr"), 0),
                "n/a: no debt service",
                _Aggregate("MIN", "dscr"),
            ),
            _metric("min_dscr"),
        ),
        SummarySpec("gpu_count", Name("fleet.gpu_count"), _metric("gpu_count")),
        *_density_specs(),
        *_derived_summary_specs(scenario, equity_share),
        SummarySpec(
            "discount_rate_annual",
            Name("financing.discount_rate_annual"),
            _metric("discount_rate_annual"),
        ),
    ]


_COMPONENT_NAMES = ("depreciation", "financing", "power", "facility", "opex")


NO_SERVICE = "n/a: no GPU is in service"


def _density_specs() -> list[SummarySpec]:
    """The density rows (econ.density.density_metrics) and the rack count, as ratios of the live
    totals over the capacity in service summed over the months (GPUs in service times the
    full-load IT kW per GPU; rack positions, `_RackPositions`), so that they follow an input
    changed here; each is checked against the engine like the rest (a fleet of vintages keeps
    the engine's values)."""
    gpus, per_rack = Name("fleet.gpu_count"), Name("fleet.gpus_per_rack")
    kw_per_gpu, pue = Name("calc.it_kw_per_gpu"), Name("power.pue")
    months = Name("const.months_per_year")
    tokens, revenue = Cell("Summary", "tokens_total"), Cell("Summary", "revenue_usd_total")
    gpu_months = _Aggregate("SUM", "gpus_in_service")
    mw_years = gpu_months * kw_per_gpu / months / units.KW_PER_MW
    rack_years = _RackPositions("gpus_in_service", per_rack) / months
    mw_seconds = mw_years * months * Name("const.seconds_per_month")
    it_joules = (
        _Aggregate("SUM", "it_drawn_kw") * Name("const.hours_per_month") * density.JOULES_PER_KWH
    )
    m2_per_rack = Name("facility.m2_per_rack")

    def in_service(value: Expr) -> Expr:
        return _Guard(le(gpu_months, 0), NO_SERVICE, value)

    def per_token(value: Expr) -> Expr:
        return _Guard(le(tokens, 0), NO_TOKENS, value)

    rows = {
        "rack_count": gpus / per_rack,
        "tokens_per_s_per_mw": Name("throughput.tokens_per_s_per_gpu")
        * units.KW_PER_MW
        / kw_per_gpu,
        "tokens_per_s_per_mw_it": in_service(tokens / mw_seconds),
        "tokens_per_s_per_mw_utility": in_service(tokens / (mw_seconds * pue)),
        "revenue_usd_per_mw_year": in_service(revenue / mw_years),
        "revenue_usd_per_mw_year_utility": in_service(revenue / (mw_years * pue)),
        "revenue_usd_per_rack_year": in_service(revenue / rack_years),
        "revenue_usd_per_m2_year": _Guard(
            ISBLANK(m2_per_rack),
            "n/a: facility.m2_per_rack is not given",
            in_service(revenue / (rack_years * m2_per_rack)),
        ),
        "joules_per_token_it": per_token(it_joules / tokens),
        "joules_per_token_utility": per_token(it_joules * pue / tokens),
    }
    return [SummarySpec(key, formula, _metric(key)) for key, formula in rows.items()]


def _derived_summary_specs(scenario: Scenario, equity_share: Expr) -> list[SummarySpec]:
    """Summary rows that follow from the live rows and schedules (per GPU and per rack, EBIT,
    equity multiple, cost of debt, DSCR headroom), so that they move with them when an input is
    changed in the workbook; each is checked against the engine like the rest. The DSCR headroom
    is a formula only where the covenant tests single months: over a trailing window (the
    default, 12 months) it is the engine's value."""
    npv, gpus = Cell("Summary", "npv_usd"), Name("fleet.gpu_count")
    debt = Cell("Summary", "debt_usd")
    paid_in = -_SignedSum("cash_flow_equity_usd", -1)
    thin = f"n/a: equity is below {MIN_EQUITY_SHARE_FOR_IRR:.0%} of capex"
    specs = [
        SummarySpec("npv_usd_per_gpu", npv / gpus, _metric("npv_usd_per_gpu")),
        SummarySpec(
            "npv_usd_per_rack",
            npv * Name("fleet.gpus_per_rack") / gpus,
            _metric("npv_usd_per_rack"),
        ),
        SummarySpec(
            "ebit_usd_total",
            _Aggregate("SUM", "ebitda_usd")
            - _Aggregate("SUM", "depreciation_usd")
            - _Aggregate("SUM", "impairment_usd")
            + _Aggregate("SUM", "gain_on_disposal_usd"),
            _metric("ebit_usd_total"),
        ),
        SummarySpec(
            "moic_equity",
            _Guard(
                lt(equity_share, MIN_EQUITY_SHARE_FOR_IRR),
                thin,
                _Guard(
                    le(paid_in, 0),
                    "n/a: the equity pays nothing in",
                    _SignedSum("cash_flow_equity_usd", 1) / paid_in,
                ),
            ),
            _metric("moic_equity"),
        ),
    ]
    # tested month by month, from the first month on: the headroom is the lowest monthly DSCR's;
    # else the lowest DSCR the covenant tests (over its trailing window, from its first test)
    floor = Name("financing.covenants.dscr_floor")
    if (
        _attr(scenario, "financing.covenants.test_months") == 1
        and (_attr(scenario, "financing.covenants.first_test_month") or 0) <= 1
    ):
        headroom = _Guard(
            eq(_Aggregate("COUNT", "dscr"), 0),
            "n/a: no debt service",
            Cell("Summary", "min_dscr") - floor,
        )
    else:
        headroom = _Guard(
            eq(_TESTED, 0),
            UNTESTED,
            _Aggregate("MIN", "dscr_test", sheet="Debt") - floor,
        )
    specs.append(
        SummarySpec(
            "dscr_headroom",
            _Guard(ISBLANK(floor), "n/a: no DSCR covenant", headroom),
            _metric("dscr_headroom"),
        )
    )
    specs += _covenant_specs(floor)
    if not _attr(scenario, "financing.tranches", ()):  # one term loan: its own rate
        specs += [
            # (no equity tranche states a required return: the cost of equity is the discount
            # rate, as the WACC takes it)
            SummarySpec(
                "npv_equity_usd",
                _PresentValue("cash_flow_equity_usd"),
                _metric("npv_equity_usd"),
            ),
            SummarySpec(
                "cost_of_debt_annual",
                _Guard(le(debt, 0), "n/a: no debt", (1 + Name("calc.loan_rate_monthly")) ** 12 - 1),
                _metric("cost_of_debt_annual"),
            ),
            SummarySpec("debt_usd_total", debt, _metric("debt_usd_total")),
            # (the interest a construction period capitalizes, written as values: IMPLICIT_LINES)
            SummarySpec(
                "construction_interest_usd",
                _Aggregate("SUM", "capitalized_interest_usd"),
                _metric("construction_interest_usd"),
            ),
            SummarySpec(
                "debt_at_conversion_usd",
                debt + Cell("Summary", "construction_interest_usd"),
                _metric("debt_at_conversion_usd"),
            ),
        ]
    else:
        rate = _equity_rate_monthly(scenario)
        if rate is not None:
            specs.append(
                SummarySpec(
                    "npv_equity_usd", _Npv("cash_flow_equity_usd", rate), _metric("npv_equity_usd")
                )
            )
    return specs


def _equity_rate_monthly(scenario: Scenario) -> Expr | None:
    """A capital stack's cost of equity, monthly, as econ.capital takes it: the required return
    the equity tranches state (weighted by what each issues), else the discount rate; None where
    they state several returns, whose weights the formulas do not model."""
    returns = {
        tranche.required_return_annual
        for tranche in _attr(scenario, "financing.tranches", ())
        if tranche.type == "equity" and tranche.required_return_annual is not None
    }
    if not returns:
        return Name("calc.discount_rate_monthly")
    if len(returns) > 1:
        return None
    return (1 + Num(returns.pop())) ** (1 / Name("const.months_per_year")) - 1


_TESTED = _Aggregate("COUNT", "dscr_test", sheet="Debt")
"""The months the DSCR covenant tests (Debt!dscr_test holds a number)."""
UNTESTED = (
    "n/a: the DSCR covenant tests no month (no debt service, or a first test month after the "
    "loan's last month to test)"
)
"""What the DSCR headroom cells show where the covenant tests no month."""


def _unknown(metric: str) -> str:
    """What a formula cell shows where the engine reports `metric` as null: its reason, as
    econ.undefined words it."""
    from econ.undefined import REASONS

    return f"n/a: {REASONS[metric]}"


def _covenant_specs(floor: Expr) -> list[SummarySpec]:
    """The covenant rows and payback as formulas over the schedules' live columns: months with
    any breach and the first (Monthly!covenant_breach), the months of debt service before the
    DSCR test first fails (Debt!headroom_month), the lowest LLCR (Monthly!llcr) and the payback
    month (econ.metrics.payback: the first month from month 1 whose cumulative project cash flow
    is at least 0, less the part of it the flow needed: -cumulative before / the month's flow)."""
    breaches = _Aggregate("SUM", "covenant_breach")
    reached = _FirstFlagged(M, "payback_reached")
    flow = _At(M, "cash_flow_project_usd", reached)
    before = _At(M, "cumulative_cash_flow_project_usd", reached - 1)
    return [
        SummarySpec(
            "covenant_breach_months",
            breaches,
            _metric("covenant_breach_months"),
            needs=((M, "covenant_breach"),),
        ),
        SummarySpec(
            "first_breach_month",
            _Guard(
                eq(breaches, 0),
                _unknown("first_breach_month"),
                _FirstFlagged(M, "covenant_breach") - 1,
            ),
            _metric("first_breach_month"),
            needs=((M, "covenant_breach"),),
        ),
        SummarySpec(
            "months_of_headroom",
            _Guard(
                ISBLANK(floor),
                "n/a: no DSCR covenant",
                _Guard(eq(_TESTED, 0), UNTESTED, _Aggregate("SUM", "headroom_month", sheet="Debt")),
            ),
            _metric("months_of_headroom"),
        ),
        SummarySpec(
            "min_llcr",
            _Guard(
                eq(_Aggregate("COUNT", "llcr"), 0), _unknown("min_llcr"), _Aggregate("MIN", "llcr")
            ),
            _metric("min_llcr"),
            needs=((M, "llcr"),),
        ),
        SummarySpec(
            "payback_months",
            _Guard(
                eq(_Aggregate("SUM", "payback_reached"), 0),
                _unknown("payback_months"),
                reached - 2 + IF(gt(flow, 0), -before / flow, 1),
            ),
            _metric("payback_months"),
        ),
    ]


# --- Inputs of a scenario --------------------------------------------------------------------------

_UNIT = re.compile(r"\[([^\[\]]+)\]\s*\.?\s*$")
_ANY_UNIT = re.compile(r"\[(?!\d+\])([^\[\]]+)\]")
"""A unit in brackets within a description ("... [years] (not used by ...)"), where none ends it."""
_INDEX = re.compile(r"\[\d+\]")


def _field_info(path: str) -> tuple[str, str]:
    """(unit, description) of a dotted input path from the pydantic models; vintage sections
    use the scenario's own sections."""
    parts = [p for p in _INDEX.sub("", path).split(".") if p]
    if parts and parts[0] == "vintages" and len(parts) > 2:
        parts = parts[1:]
    model: type[BaseModel] | None = Scenario
    description = ""
    for part in parts:
        if model is None or part not in model.model_fields:
            return "", description
        info = model.model_fields[part]
        description = info.description or ""
        model = model_of(info.annotation)
    match = _UNIT.search(description) or _ANY_UNIT.search(description)
    return (match.group(1) if match else ""), description


def _flatten(value, prefix: str = "") -> list[tuple[str, Any]]:
    """Leaf inputs as (dotted path, value); lists of scalars stay whole (shown as JSON)."""
    if isinstance(value, Mapping):
        out = []
        for key, item in value.items():
            out.extend(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list | tuple) and value and all(isinstance(v, Mapping) for v in value):
        out = []
        for i, item in enumerate(value):
            out.extend(_flatten(item, f"{prefix}[{i}]"))
        return out
    return [(prefix, value)]


def _explicit_paths(model: BaseModel, prefix: str = "") -> set[str]:
    """Paths of fields given in the file (pydantic's fields_set), sections included."""
    out = set()
    for name in model.model_fields_set:
        path = f"{prefix}.{name}" if prefix else name
        out.add(path)
        value = getattr(model, name, None)
        if isinstance(value, BaseModel):
            out |= _explicit_paths(value, path)
        elif isinstance(value, tuple | list):
            for i, item in enumerate(value):
                if isinstance(item, BaseModel):
                    out.add(f"{path}[{i}]")
                    out |= _explicit_paths(item, f"{path}[{i}]")
                elif isinstance(item, Mapping):
                    out |= {f"{path}[{i}].{p}" for p, _ in _flatten(item)} | {f"{path}[{i}]"}
    return out


def _source_of(path: str, sources: Mapping[str, str]) -> str:
    """The source of a path, or of the nearest enclosing field or section that has one."""
    candidate = path
    while candidate:
        if candidate in sources:
            return sources[candidate]
        if candidate.endswith("]"):
            candidate = candidate[: candidate.rfind("[")]
        elif "." in candidate:
            candidate = candidate.rsplit(".", 1)[0]
        else:
            break
    return ""


def provenance_flag(source: str, explicit: bool) -> str:
    """How an input is backed: `overridden` (set by an override, `--set` or `load_scenario(path,
    overrides)`), `edited` (in the app), `assumption`, `derived`, `sourced`, `no source` (given in
    the file without a source) or `default` (the model's default, not given in the file).

    An override's or an edit's source quotes the value it replaced and that value's source
    (econ.scenario.io.cited_change), so it is read before the words that source holds."""
    text = source.strip().casefold()
    if text.startswith(OVERRIDDEN):
        return "overridden"
    if text.startswith(EDITED_IN_APP):
        return "edited"
    if text.startswith("assumption"):
        return "assumption"
    if text.startswith("derived") or "(derived" in text or "derived," in text:
        return "derived"
    if text:
        return "sourced"
    return "no source" if explicit else "default"


EDITED_IN_APP = "edited in the app"
"""How the app's [sources] entry of an edited value begins (econ.ui.form.mark_edited)."""


@dataclass
class _InputRow:
    path: str
    unit: str
    description: str
    values: list[Any] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)


def scenario_inputs(scenario: Scenario) -> list[tuple[str, Any]]:
    """The inputs the Assumptions sheet shows, as (dotted path, value) in its order."""
    return _flatten(scenario.model_dump(mode="python", exclude={"sources"}))


def _inputs_of(scenario: Scenario) -> dict[str, Any]:
    flat = dict(scenario_inputs(scenario))
    flat["calc.horizon_months"] = float(scenario.horizon)
    return flat


def _name_for(key: str, k: int, n: int) -> str:
    if key.startswith(("calc.", "const.")) or "." in key:
        base = key.replace(".", "_")
    else:
        base = f"scenario_{key}"
    return base if n == 1 else f"{base}_{k + 1}"


_NAMEABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_CELL_LIKE = re.compile(r"^(?:[A-Za-z]{1,3}[0-9]+|[Rr][0-9]*(?:[Cc][0-9]*)?|[Cc][0-9]*)$")
NAME_LIMIT = 255
"""Characters an Excel defined name may have."""


def excel_name_ok(name: str) -> bool:
    """Whether a spreadsheet accepts `name` as a defined name: a letter or underscore first, then
    letters, digits, underscores or dots, at most 255 characters, and not readable as a cell
    reference (`AB12`, `R1C1`) or a logical value (ECMA-376 Part 1, 18.2.5; Excel's rules)."""
    return (
        bool(_NAMEABLE.match(name))
        and len(name) <= NAME_LIMIT
        and not _CELL_LIKE.match(name)
        and name.upper() not in ("TRUE", "FALSE")
    )


# --- Resolution: which formulas reproduce the engine ----------------------------------------------


def _close(values, reference, scale: float, absolute: float = 0.0) -> bool:
    """Values agree within RELATIVE_TOLERANCE of the scale, or within `absolute`."""
    values = np.asarray(values, dtype=float)
    reference = np.asarray(reference, dtype=float)
    if values.shape != reference.shape:
        return False
    nan_a, nan_b = np.isnan(values), np.isnan(reference)
    if not np.array_equal(nan_a, nan_b):
        return False
    a, b = values[~nan_a], reference[~nan_b]
    if a.size == 0:
        return True
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return np.array_equal(a, b)
    tolerance = np.maximum(RELATIVE_TOLERANCE * np.maximum(np.abs(b), scale), absolute)
    return bool(np.all(np.abs(a - b) <= tolerance))


def _reproduces(value, name: str, lines: Mapping[str, np.ndarray]) -> bool:
    """A formula's values are the engine's line `name`: to RELATIVE_TOLERANCE of the line's
    scale, and money to half a cent (the engine sets smaller amounts to 0, snap_to_zero)."""
    cent = units.HALF_CENT_USD if name.endswith("_usd") else 0.0
    return _close(value, lines[name], line_scale(name, lines), cent)


def line_scale(name: str, lines: Mapping[str, np.ndarray]) -> float:
    """Magnitude against which errors of a line are judged: its own largest value, and for money
    the largest money line of the scenario (a sum of large flows that nets to about 0 carries
    rounding of the size of the flows, not of the result)."""
    own = np.asarray(lines.get(name, np.zeros(1)), dtype=float)
    own_max = float(np.nanmax(np.abs(own))) if own.size and np.any(~np.isnan(own)) else 0.0
    if name.endswith("_usd"):
        money = [
            float(np.nanmax(np.abs(v)))
            for key, v in lines.items()
            if key.endswith("_usd") and np.size(v) and np.any(~np.isnan(v))
        ]
        own_max = max([own_max, *money])
    return max(own_max, 1e-300)


@dataclass
class _Resolved:
    """What one scenario's block holds for each column: mode, formula, cached values, notes."""

    modes: dict[tuple[str, str], str] = field(default_factory=dict)  # formula | values | absent
    formulas: dict[tuple[str, str], Expr] = field(default_factory=dict)
    values: dict[tuple[str, str], Any] = field(default_factory=dict)
    notes: list[tuple[str, str]] = field(default_factory=list)
    derived: dict[str, Expr] = field(default_factory=dict)
    summary: dict[str, tuple[str, Any, Expr | None]] = field(default_factory=dict)
    env: _Env | None = None
    live: set[str] = field(default_factory=set)  # inputs that drive the formulas (blue)
    not_live: dict[str, str] = field(default_factory=dict)  # input or derived key -> why not
    frozen_derived: set[str] = field(default_factory=set)  # derived figures written as values


def _resolve(projection: Projection, k: int, scenario: Scenario | None) -> _Resolved:
    """Decide, for scenario k, which columns are formulas (reproducing the engine) and which are
    values, with the cached results of both."""
    horizon = int(projection.horizon_months[k])
    lines = {name: np.asarray(v[k, : horizon + 1]) for name, v in projection.lines.items()}
    result = _Resolved()
    inputs = _inputs_of(scenario) if scenario is not None else {}
    inputs.update({key: value for key, value, _, _ in CONSTANTS})
    env = _Env(inputs)
    result.env = env
    for sheet in ROW_SHEETS:
        env.columns[(sheet, "month")] = np.arange(horizon + 1, dtype=float)
    years = max(1, -(-horizon // units.MONTHS_PER_YEAR))
    env.columns[("Annual", "tax_year")] = np.arange(1, years + 1, dtype=float)
    if scenario is None:
        result.notes.append(("all lines", "values: the scenario was not given to the writer"))
    else:
        _resolve_derived(result, env)
        # engine lines no Spec writes are values (below), which formulas may read
        env.columns.update({(M, n): v for n, v in lines.items() if (M, n) not in _SPECS_BY_KEY})
        _resolve_columns(result, env, _Info(scenario, lines, env, result.modes))
    for name, values in lines.items():  # engine lines without a formula, e.g. added later
        if (M, name) not in result.modes:
            result.modes[(M, name)] = "values"
            result.values[(M, name)] = values
            env.columns[(M, name)] = values
    if scenario is not None:
        _resolve_summary(result, env, projection, k, scenario)
        _drop_unused_helpers(result)
        _resolve_live(result, projection, k, scenario)
    return result


def _resolve_derived(result: _Resolved, env: _Env) -> None:
    for key, expr, _, _ in DERIVED:
        try:
            value = expr.evaluate(env)
        except (Missing, TypeError, ValueError, ZeroDivisionError):
            continue
        if value is None or isinstance(value, str) or not np.isfinite(value):
            continue
        env.inputs[key] = float(value)
        result.derived[key] = expr


def _resolve_columns(result: _Resolved, env: _Env, info: _Info) -> None:
    lines = info.lines
    for spec in SPECS:
        key = (spec.sheet, spec.name)
        # A helper the engine later adds as a line of its own is checked against it too.
        engine_name = spec.engine or (spec.name if spec.sheet == M else None)
        checked = engine_name is not None and engine_name in lines
        rows = ("Annual", "tax_year") if spec.sheet == "Annual" else (M, "month")
        shape = env.columns[rows].shape
        if spec.values is not None:
            try:
                values = spec.values(info)
            except Missing:
                values = None
            if values is not None or not spec.candidates:
                if values is not None:
                    env.columns[key] = np.asarray(values, dtype=float)
                    result.modes[key] = "values"
                    result.values[key] = env.columns[key]
                continue  # (no values: the spec's formulas, where it has any)
        reasons = []
        for expr, gate in spec.candidates:
            if gate is not None and not gate(info):
                reasons.append("does not model this scenario")
                continue
            try:
                with np.errstate(all="ignore"):
                    value = np.broadcast_to(np.asarray(expr.evaluate(env), dtype=float), shape)
            except Missing as exc:
                reasons.append(str(exc))
                continue
            except (TypeError, ValueError):
                reasons.append("gives text where numbers are expected")
                continue
            if checked and not _reproduces(value, engine_name, lines):
                reasons.append("does not reproduce the engine")
                continue
            shown = lines[engine_name] if checked else np.array(value, dtype=float)
            result.modes[key], result.formulas[key] = "formula", expr
            env.columns[key] = result.values[key] = shown
            break
        else:
            if checked:
                result.modes[key] = "values"
                env.columns[key] = result.values[key] = lines[engine_name]
                ranked = sorted(reasons, key=lambda r: _REASON_RANK.get(r, 1))
                reason = f"the formula {ranked[0]}" if ranked else "no formula"
                features = _features(info.scenario)
                if features:
                    reason += f" (this scenario has {', '.join(features)})"
                if spec.name in LOAN_LINES and _sized_loan(info):
                    reason = SIZED_REASON
                result.notes.append((spec.name, f"values: {reason}"))


def _resolve_summary(
    result: _Resolved, env: _Env, projection: Projection, k: int, scenario: Scenario
) -> None:
    for spec in _summary_specs(projection, k, scenario):
        engine_value = spec.engine(projection, k)
        if engine_value is None:  # a metric the engine no longer reports
            continue
        as_values = [key for key in spec.needs if result.modes.get(key) != "formula"]
        try:
            if as_values:
                raise Missing(f"reads {as_values[0][0]}!{as_values[0][1]}, written as values")
            with np.errstate(all="ignore"):
                value = spec.formula.evaluate(env)
        except Missing:
            value = None
        if value is None:
            ok = False
        elif isinstance(value, str):
            ok = math.isnan(engine_value)
        else:
            value = float(value)
            ok = not math.isnan(engine_value) and abs(value - engine_value) <= (
                RELATIVE_TOLERANCE * abs(engine_value)
            )
        if ok:
            shown = value if isinstance(value, str) else engine_value
            result.summary[spec.name] = ("formula", shown, spec.formula)
        else:
            shown = engine_value
            result.summary[spec.name] = ("values", engine_value, None)
            if value is not None or not math.isnan(engine_value):
                reason = "does not reproduce the engine" if value is not None else "is not modelled"
                features = _features(scenario)
                if features:
                    reason += f" (this scenario has {', '.join(features)})"
                result.notes.append((spec.name, f"values: the formula {reason}"))
        env.columns[("Summary", spec.name)] = shown


def _features(scenario: Scenario | None) -> list[str]:
    """What a scenario has that the formulas do not model, in words (for the Notes)."""
    if scenario is None:
        return []
    out = []
    if scenario.vintages:
        out.append("vintages (fleets bought at other times)")
    if scenario.financing.tranches:
        out.append("a capital stack (financing.tranches)")
    if scenario.facility.mode == "owned":
        out.append("an owned hall (facility.mode)")
    if scenario.facility.hall_cooling == "air_retrofit_liquid":
        out.append("a liquid retrofit of the hall (facility.hall_cooling)")
    if scenario.capex.payments:
        out.append("capex paid in stages (capex.payments)")
    if scenario.fleet.service_start_month is not None:
        out.append("a construction period (fleet.service_start_month)")
    if scenario.depreciation.method != "straight_line":
        out.append(f"{scenario.depreciation.method} depreciation")
    if scenario.depreciation.change_month is not None:
        out.append("a change of useful life (depreciation.change_month)")
    if scenario.depreciation.impairment.price_drop_threshold is not None:
        out.append("impairment tests")
    tables = [
        path
        for path in ("market.price_table", "market.rental_table", "market.resale_value_table")
        if _attr(scenario, path)
    ]
    if tables or scenario.market.has_resale:
        out.append(f"price tables ({', '.join(tables) or 'market.resale_series'})")
    return out


_REASON_RANK = {"does not reproduce the engine": 0, "does not model this scenario": 2}


def _drop_unused_helpers(result: _Resolved) -> None:
    """Keep helper columns only where a written formula needs them (directly or indirectly)."""
    helpers = {(s.sheet, s.name) for s in SPECS if s.helper}
    needed: set = set()
    stack = [expr for key, expr in result.formulas.items() if key not in helpers] + [
        expr for mode, _, expr in result.summary.values() if expr is not None
    ]
    seen_names: set[str] = set()
    while stack:
        expr = stack.pop()
        for ref in expr.refs():
            if ref[0] == "name":
                key = ref[1]
                if key in result.derived and key not in seen_names:
                    seen_names.add(key)
                    stack.append(result.derived[key])
                continue
            if ref in helpers and ref not in needed:
                needed.add(ref)
                if ref in result.formulas:
                    stack.append(result.formulas[ref])
                elif ref == (M, "throughput_multiplier"):
                    pass
    for key in helpers - needed:
        if key in result.modes:
            result.modes[key] = "absent"


def _recalculate(result: _Resolved, changes: Mapping[str, Any]) -> dict[str, Any]:
    """The Summary figures of one scenario's block as a spreadsheet shows them after the input
    cells `changes` ({dotted path: value}) are changed and the workbook recalculates: the
    written formulas evaluated with numpy (the same trees that render to the cells), the columns
    and derived figures written as values kept. For tests of what is live."""
    inputs = {**result.env.inputs, **changes}
    env = _Env(inputs)
    for key, expr, _, _ in DERIVED:
        if key in result.derived and key not in result.frozen_derived:
            with np.errstate(all="ignore"):
                env.inputs[key] = float(expr.evaluate(env))
    base = result.env.columns
    for sheet in ROW_SHEETS:
        env.columns[(sheet, "month")] = base[(sheet, "month")]
    env.columns[("Annual", "tax_year")] = base[("Annual", "tax_year")]
    for key, mode in result.modes.items():  # (engine lines no Spec writes too, which formulas read)
        if mode == "values":
            env.columns[key] = result.values[key]
    for spec in SPECS:
        key = (spec.sheet, spec.name)
        if result.modes.get(key) == "formula":
            rows = ("Annual", "tax_year") if spec.sheet == "Annual" else (spec.sheet, "month")
            shape = env.columns[rows].shape
            with np.errstate(all="ignore"):
                value = np.asarray(result.formulas[key].evaluate(env), dtype=float)
            env.columns[key] = np.broadcast_to(value, shape)
    out = {}
    for name, (mode, shown, expr) in result.summary.items():
        if mode == "formula":
            with np.errstate(all="ignore"):
                shown = expr.evaluate(env)
        env.columns[("Summary", name)] = out[name] = shown
    return out


# --- Live inputs: which inputs an analyst may change here ----------------------------------------
#
# A formula is checked against the engine at the exported inputs (above). An input cell is live
# (blue) only where changing it moves every figure as the engine moves it: a formula that reads
# a column written as values, and an input that column depends on in the engine, would combine a
# new input with old values (a cheaper rack moving the gain on sale while the depreciation and
# the sale stay as exported). So each input the formulas read is changed a little in the engine
# (`econ project --set`, or the loan held as exported where it is sized, as the workbook holds
# it), and where a column written as values that a formula reads moves, the input is not live:
# it is written grey and held at its value (data validation), and a derived figure none of whose
# inputs is live is written as its value, so that no formula follows a change made to them.

INPUT_CHANGE = 1e-3
"""Relative change of an input when finding the columns written as values that depend on it."""
IMPLICIT_LINES = ("capitalized_interest_usd",)
"""Engine lines the formulas take as written (interest capitalized before service: the formulas
charge a loan's interest from its draw), so an input that moves them is not live."""
NOT_READ = "no formula of this workbook reads it: edit it in econ and export again"
"""Why an input no written formula reads is not live."""


def _read_names(exprs: Sequence[Expr], derived: Mapping[str, Expr], stop=frozenset()) -> set:
    """Keys (inputs, derived figures, constants) the expressions read, through the derived
    figures' formulas (not through those in `stop`, written as values)."""
    seen: set[str] = set()
    stack = list(exprs)
    while stack:
        for ref in stack.pop().refs():
            if ref[0] != "name" or ref[1] in seen:
                continue
            seen.add(ref[1])
            if ref[1] in derived and ref[1] not in stop:
                stack.append(derived[ref[1]])
    return seen


def _written_formulas(result: _Resolved) -> list[Expr]:
    columns = [e for key, e in result.formulas.items() if result.modes.get(key) == "formula"]
    return columns + [expr for mode, _, expr in result.summary.values() if expr is not None]


def _is_input(key: str) -> bool:
    return not key.startswith(("calc.", "const."))


def _resolve_live(result: _Resolved, projection: Projection, k: int, scenario: Scenario) -> None:
    """Which inputs are live, why the others are not, and which derived figures are written as
    values (`result.live`, `not_live`, `frozen_derived`)."""
    formulas = _written_formulas(result)
    read = {key for key in _read_names(formulas, result.derived) if _is_input(key)}
    reasons = _inputs_moving_values(result, projection, k, scenario, read, formulas)
    # A derived figure none of whose inputs is live is written as its value, so that a change to
    # one of them moves no formula (a cheaper rack would otherwise move the insurance and the
    # gain on sale while the capex and depreciation written as values stay as exported).
    frozen = set()
    for key, expr in result.derived.items():
        inputs = {n for n in _read_names([expr], result.derived) if _is_input(n)}
        if inputs and inputs <= set(reasons):
            frozen.add(key)
            reasons[key] = (
                f"written as its value: its inputs ({', '.join(sorted(inputs))}) are not live here"
            )
    live_read = _read_names(formulas, result.derived, stop=frozen)
    # A derived figure no written formula reads would be a formula nothing follows, over inputs
    # whose rows say no formula reads them (a sized loan's calc.debt_usd over debt_share): its
    # value.
    for key in result.derived:
        if key not in live_read and key not in frozen:
            frozen.add(key)
            reasons[key] = "written as its value: no formula of this workbook reads it"
    result.frozen_derived = frozen
    result.live = {key for key in live_read if _is_input(key) and key not in reasons}
    result.not_live = reasons


def _inputs_moving_values(
    result: _Resolved,
    projection: Projection,
    k: int,
    scenario: Scenario,
    read: set[str],
    formulas: Sequence[Expr],
) -> dict[str, str]:
    """Inputs the formulas read that are not live, with the reason: each is changed a little
    in the engine (`_changed_values`), and any column written as values that a formula reads
    (or IMPLICIT_LINES) and moves makes it not live; so do one of a sized loan's own terms, an
    input the scenario takes from another, a change the engine cannot project and a change of
    the horizon. Changes are run unvalidated (`ScenarioBatch.repeat`): a change econ accepts
    only with another input changed too is still run, for what it moves."""
    from econ.analysis.committed import LOAN_TERMS, committed_loan, hold, sizes_loan
    from econ.batch import ScenarioBatch, field_kinds
    from econ.scenario import ScenarioError, scenario_to_dict, validate_dict

    reasons: dict[str, str] = {}
    elsewhere = scenario.set_elsewhere()
    if scenario.fleet.racks is not None:  # (the engine counts racks x gpus_per_rack)
        elsewhere |= dict.fromkeys(
            ("fleet.gpu_count", "fleet.gpus_per_rack"), "fleet.racks x fleet.gpus_per_rack"
        )
    for key in sorted(read & set(elsewhere)):
        reasons[key] = f"this scenario takes it from {elsewhere[key]}: edit that in econ"
    base = scenario
    if sizes_loan(scenario.financing):
        for key in sorted(read):
            if key not in reasons and any(key == t or key.startswith(t + ".") for t in LOAN_TERMS):
                reasons[key] = (
                    "a term of the sized loan, which this workbook holds as econ sized it: edit "
                    "it in econ and export again"
                )
        horizon = int(projection.horizon_months[k])
        summary = {
            "debt_usd": projection.metrics["debt_usd"][k],
            "capex_usd_total": projection.metrics["capex_usd_total"][k],
        }
        balance = projection.lines["debt_balance_usd"][k, : horizon + 1]
        loan = committed_loan(scenario, summary, balance)
        if loan is not None:
            try:
                base = validate_dict(hold(scenario_to_dict(scenario), loan))
            except ScenarioError:  # (a held loan the scenario refuses: the engine's own)
                base = scenario
    schedules = _schedules_formulas_read(result, formulas)
    if not schedules:
        return reasons
    kinds = field_kinds()
    inputs = _inputs_of(scenario)
    changes = []
    for key in sorted(read - set(reasons)):
        # (a whole number is tried one and two away: a ramp of 1 month is no ramp in the engine,
        # so 0 -> 1 moves nothing that 0 -> 2 moves)
        whole = key in kinds and kinds[key][0] == "int" and inputs.get(key) is not None
        for step in (1, 2) if whole else (1,):
            values = _changed_values(key, inputs.get(key), scenario, step) if key in kinds else []
            accepted, refused = _accepted_change(scenario, key, values)
            if refused:
                if step == 1:
                    reasons[key] = refused
                break
            if values and not (kinds[key][0] == "choice" and inputs.get(key) is None):
                if (key, accepted) not in changes:
                    changes.append((key, accepted))
    if not changes:
        return reasons
    n = len(changes) + 1
    columns: dict[str, list] = {}
    for i, (key, value) in enumerate(changes, start=1):
        given = inputs.get(key)
        columns.setdefault(key, [np.nan if given is None else given] * n)[i] = value
    try:
        batch = ScenarioBatch.repeat(
            base, n, {key: np.array(values) for key, values in columns.items()}, validate=False
        )
    except (InputError, ValueError):
        return reasons
    runs = _project_each(batch, 0, n)
    if runs[0] is None:
        return reasons
    made = [
        None if run is None else _schedule_values(result, run, scenario, inputs, change, schedules)
        for run, change in zip(runs, [None, *changes], strict=True)
    ]
    for i, (key, _value) in enumerate(changes, start=1):
        if key in reasons:  # (the first change tried that rules it out)
            continue
        if runs[i] is None:
            reasons[key] = (
                "econ cannot project this scenario with it changed (the scenario's other inputs "
                "rule that out): edit it in econ and export again"
            )
        elif made[i] is None:
            reasons[key] = (
                "changing it changes the months projected (the rows of the schedules): edit it "
                "in econ and export again"
            )
        else:
            moved = [
                schedule
                for schedule, values in made[i].items()
                if not _reproduces_at(values, made[0][schedule], schedule[1])
            ]
            moved.sort(key=lambda s: (s[0] != M, s))  # the Monthly lines first
            if moved:
                shown = [f"{s[0]}!{s[1]} ({_why_values(result, s, scenario)})" for s in moved[:3]]
                more = f" and {len(moved) - 3} more" if len(moved) > 3 else ""
                reasons[key] = (
                    f"written as values here and moving with it in econ: {', '.join(shown)}"
                    f"{more}; edit it in econ and export again"
                )
    return reasons


def _accepted_change(scenario: Scenario, key: str, values: Sequence) -> tuple[Any, str]:
    """The first of `values` (the changes `_changed_values` tries) that econ accepts in input
    `key`'s place, and "" (None and "" where none is tried); else None and why the input is not
    live: econ refuses the scenario with each (a construction period with a capital stack, a GPU
    price beside a system price, a loan amount beside a loan share, a retirement after the
    horizon). A cell that holds what econ refuses shows figures econ never gives."""
    from econ.scenario import ScenarioError, scenario_to_dict, validate_dict
    from econ.scenario.io import apply_overrides

    if not values:
        return None, ""
    first = ""
    data = scenario_to_dict(scenario)
    for value in values:
        try:
            validate_dict(apply_overrides(data, {key: value}))
        except ScenarioError as exc:
            first = first or str(exc)
            continue
        return value, ""
    # (the reason without the values tried: "...; both are given (gpu_price_usd=0.5, ...)")
    why = first.split(": ", 1)[-1].split(", got ")[0] if first else "it is refused"
    why = re.sub(r" \([^()]*=[^()]*\)$", "", why)
    return None, _shorten(
        f"econ refuses this scenario with it changed ({why}): edit it in econ and export again",
        VALIDATION_TEXT - len(f"{key} is not live in this workbook: "),
    )


_VALUE_SCHEDULES = {
    "throughput_multiplier": "the software-gain trajectory",
    "book_share_of_capex": "the depreciation schedule per USD of cost",
    "tax_share_of_capex": "the tax depreciation schedule per USD of cost",
    "draws_usd": "the loan econ sized, held as exported",
    "financing_cash_flow_usd": "the capital stack's flows",
}


def _why_values(result: _Resolved, key: tuple[str, str], scenario: Scenario) -> str:
    """Why a column is written as values, in a few words."""
    from econ.analysis.committed import sizes_loan

    if key[1] in _VALUE_SCHEDULES:
        return _VALUE_SCHEDULES[key[1]]
    if key[1] in LOAN_LINES and sizes_loan(scenario.financing):
        return _VALUE_SCHEDULES["draws_usd"]
    if key[1] in IMPLICIT_LINES:
        return "the formulas charge a loan's interest from its draw"
    features = _features(scenario)
    return ", ".join(features) if features else "no formula reproduces it"


def _project_each(batch, start: int, stop: int) -> list:
    """Rows start..stop-1 of a batch projected: (projection, row), or None where the engine
    refuses the row; a part the engine refuses is split until the refused rows are found."""
    from econ.engine import project

    try:
        runs = project(batch.slice(start, stop))
    except (InputError, ValueError):
        if stop - start == 1:
            return [None]
        middle = (start + stop) // 2
        return _project_each(batch, start, middle) + _project_each(batch, middle, stop)
    return [(runs, i) for i in range(stop - start)]


def _shorten(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _schedules_formulas_read(result: _Resolved, formulas: Sequence[Expr]) -> list:
    """Columns written as values that a written formula reads, and IMPLICIT_LINES."""
    read = set().union(*(e.refs() for e in formulas)) if formulas else set()
    out = [
        key
        for key, mode in result.modes.items()
        if mode == "values" and key[0] != "Summary" and key in read
    ]
    out += [(M, name) for name in IMPLICIT_LINES if result.modes.get((M, name)) == "values"]
    return sorted(set(out))


def _schedule_values(result: _Resolved, run, scenario: Scenario, inputs, change, keys):
    """The columns `keys` as the workbook would write them for the scenario with one input
    changed (`change`: (key, value), or None; `run`: (projection, row) of it), or None where its
    horizon differs from the exported one."""
    runs, i = run
    horizon = int(runs.horizon_months[i])
    months = result.env.columns[(M, "month")]
    if horizon + 1 != months.size:
        return None
    lines = {name: np.asarray(v[i, : horizon + 1]) for name, v in runs.lines.items()}
    env = _changed_env(result, {**inputs, **dict([change] if change else [])}, lines)
    info = _Info(scenario, lines, env, result.modes)
    specs = {(s.sheet, s.name): s for s in SPECS}
    out = {}
    for key in keys:
        spec = specs.get(key)
        if spec is not None and spec.values is not None:
            try:
                made = spec.values(info)
            except Missing:
                made = None
            made = np.full(months.size, np.nan) if made is None else np.array(made, dtype=float)
            if key in _FEEDS:  # only where it counts: months whose line it scales is not 0
                made[np.asarray(lines.get(_FEEDS[key], made)) == 0] = np.nan
            out[key] = made
        else:
            out[key] = lines.get(key[1], np.full(months.size, np.nan))
    return out


_FEEDS = {(M, "throughput_multiplier"): "tokens"}
"""Value schedules that matter only where the line they scale is not 0."""


def _reproduces_at(value, reference, name: str) -> bool:
    """A column of a changed scenario equals the exported one (to RELATIVE_TOLERANCE of its
    scale, money to half a cent), in the months where both are defined."""
    cent = units.HALF_CENT_USD if name.endswith("_usd") else 0.0
    value, reference = np.asarray(value, dtype=float), np.asarray(reference, dtype=float)
    both = ~np.isnan(value) & ~np.isnan(reference)
    own = np.abs(reference[both])
    scale = float(own.max()) if own.size else 0.0
    return _close(value[both], reference[both], max(scale, 1e-300), cent)


def _changed_env(result: _Resolved, inputs: Mapping, lines: Mapping[str, np.ndarray]) -> _Env:
    """The environment of the workbook's formulas for changed inputs: the inputs and derived
    figures, the engine's lines, and every other formula column made when it is asked for."""
    inputs = {**inputs, **{key: value for key, value, _, _ in CONSTANTS}}

    def column(expr: Expr, shape: tuple[int, ...]):
        def make(env: _Env):
            with np.errstate(all="ignore"):
                return np.broadcast_to(np.asarray(expr.evaluate(env), dtype=float), shape)

        return make

    shapes = {sheet: result.env.columns[(sheet, "month")].shape for sheet in ROW_SHEETS}
    shapes["Annual"] = result.env.columns[("Annual", "tax_year")].shape
    env = _Env(
        inputs,
        {
            key: column(expr, shapes[key[0]])
            for key, expr in result.formulas.items()
            if key[0] in shapes
        },
    )
    for sheet in ROW_SHEETS:
        env.columns[(sheet, "month")] = result.env.columns[(sheet, "month")]
    env.columns[("Annual", "tax_year")] = result.env.columns[("Annual", "tax_year")]
    for key, expr in result.derived.items():
        try:
            env.inputs[key] = float(expr.evaluate(env))
        except (Missing, TypeError, ValueError, ZeroDivisionError):
            continue
    for name, values in lines.items():
        env.columns[(M, name)] = values
    return env


def _field(path: str):
    """(model, field name) of a dotted input path, or None for a path inside a list."""
    if _INDEX.search(path):
        return None
    model: type[BaseModel] | None = Scenario
    *parents, leaf = path.split(".")
    for part in parents:
        if model is None or part not in model.model_fields:
            return None
        model = model_of(model.model_fields[part].annotation)
    if model is None or leaf not in model.model_fields:
        return None
    return model, leaf


def _changed_values(key: str, value, scenario: Scenario, step: int = 1) -> list:
    """Values near `value` to try for input `key` (econ accepts the first that validates):
    a relative change of INPUT_CHANGE, `step` more or less for whole numbers, another choice;
    for a blank input, a few values of the field's range."""
    from econ.batch import field_kinds
    from econ.scenario.section import field_bounds

    kind, choices = field_kinds().get(key, ("", ()))
    found = _field(key)
    bounds = field_bounds(*found) if found is not None else {}
    low = bounds.get("ge", bounds.get("gt", -math.inf))
    high = bounds.get("le", bounds.get("lt", math.inf))

    def inside(x) -> bool:
        return (
            x >= low
            and x <= high
            and not ("gt" in bounds and x <= bounds["gt"])
            and not ("lt" in bounds and x >= bounds["lt"])
        )

    if kind == "choice":
        return [c for c in choices if c != value]
    if isinstance(value, bool):
        return [not value]
    if kind == "int":
        if value is None:  # a blank month: near the month it stands for (retirement: the end)
            purchase, horizon = scenario.fleet.purchase_month, int(scenario.horizon)
            tries = [purchase + 2, purchase + 1, 1, 12, horizon // 2]
            if key.endswith("retire_month"):
                tries = [horizon - 1, *tries]
        else:
            tries = [int(value) + step, int(value) - step]
        return [x for x in dict.fromkeys(tries) if inside(x)]
    if kind == "float":
        if value is None:
            tries = [0.5, 1.0, 10.0, 100.0]
            if math.isfinite(low) and math.isfinite(high):
                tries.insert(0, (low + high) / 2)
        elif value == 0:
            step = INPUT_CHANGE * (high if math.isfinite(high) and high > 0 else 1.0)
            tries = [step, -step]
        else:
            tries = [value * (1 + INPUT_CHANGE), value * (1 - INPUT_CHANGE)]
        return [x for x in dict.fromkeys(tries) if inside(x)]
    return []


# --- Writing --------------------------------------------------------------------------------------

_HEADER_FONT = Font(bold=True, color="FFFFFF")
_HEADER_FILL = PatternFill("solid", fgColor="1F3864")
_INPUT_FONT = Font(color="0000FF")
_VALUE_FILL = PatternFill("solid", fgColor="EDEDED")
_SECTION_FONT = Font(bold=True)
_KEY_FONT = Font(color="808080")
_ILLEGAL = re.compile(r"[\000-\010\013\014\016-\037\ud800-\udfff\ufffe\uffff]")

CURRENCY = '"$"#,##0.00;[Red]-"$"#,##0.00'
CURRENCY_PER_MTOK = '"$"#,##0.0000;[Red]-"$"#,##0.0000'
PERCENT = "0.00%"
THOUSANDS = "#,##0"
DECIMAL = "#,##0.00##"
RATIO = '0.00"x"'
FACTOR = "0.000000"
DATE = "yyyy-mm-dd"


def number_format(name: str, unit: str = "") -> str:
    """Display format of a column or input by its name and unit: USD with cents, prices (per
    million tokens, GPU-hour, kWh) with four decimals, coverage ratios as `0.00x`, rates, shares
    and utilization as percentages, counts and months as whole numbers, flags (0 or 1, a sign
    -1, 0 or 1) plainly."""
    lowered = name.casefold()
    if lowered in FLAGS:  # (before the suffixes: sign_cash_flow_project_usd is no money)
        return FLAG
    if lowered.endswith("_usd_per_mtok") or unit == "USD per million tokens":
        return CURRENCY_PER_MTOK
    if "usd_per_gpu_hour" in lowered or lowered.endswith("_usd_per_kwh"):
        return PRICE
    if lowered.endswith(("_usd", "_usd_total")) or "usd_per" in lowered or unit.startswith("USD"):
        return CURRENCY
    if "dscr" in lowered or "llcr" in lowered or lowered in _RATIOS:
        return RATIO
    if unit.startswith("ratio") and not lowered.endswith(("multiplier", "factor")):
        return DECIMAL  # (a factor a year, market.price_fall_factor_annual: not a rate)
    if lowered.endswith(
        ("_annual", "_share", "_rate", "_monthly", "ltv", "utilization")
    ) or unit in (
        "fraction",
        "1/year",
        "fraction/year",
        "1/month",
    ):
        return PERCENT
    if lowered in ("tokens", "input_tokens", "tokens_total") or lowered.endswith(
        ("tokens_per_s_per_mw",)
    ):
        return THOUSANDS
    if lowered.endswith(("multiplier", "factor", "share_of_capex")):
        return FACTOR
    if lowered in _WHOLE or lowered.endswith(("_month", "_months", "_count")):
        return WHOLE
    return DECIMAL


def _input_format(path: str, unit: str, values: Sequence) -> str:
    """Display format of an input (every scenario's value of it): whole numbers for fields that
    take them (counts, months, a step's month: `fleet.gpus_per_rack` shows 72, not 72.00),
    else by its name and unit (`number_format`)."""
    from econ.batch import field_kinds

    given = [v for v in values if v is not None]
    whole = given and all(isinstance(v, int) and not isinstance(v, bool) for v in given)
    if whole or (not given and field_kinds().get(path, ("",))[0] == "int"):
        return WHOLE
    return number_format(path, unit)


PERCENT_UNITS = {
    "fraction": "%",
    "fraction of cost": "% of cost",
    "1/year": "%/year",
    "fraction/year": "%/year",
    "1/month": "%/month",
}
"""A rate's or share's unit as a percentage format shows it (0.095 shown as 9.50%)."""


def shown_unit(unit: str, fmt: str) -> str:
    """The unit as the cell's format shows the figure: a fraction (or a rate per year, "1/year")
    shown as a percentage is in "%" ("%/year"), so that the unit and the figure agree."""
    return PERCENT_UNITS.get(unit, unit) if fmt == PERCENT else unit


PRICE = '"$"#,##0.0000'
WHOLE = "#,##0"
FLAG = "0"
_RATIOS = ("moic_equity", "profitability_index")
_WHOLE = ("month", "tax_year", "months_in_year", "installments")
"""Columns of whole numbers: months and counts."""
FLAGS = (
    "in_service",
    "year_end",
    "taxable_so_far",
    "tax_installment",
    "covenant_breach",
    "dscr_breach",
    "headroom_month",
    "payback_reached",
    "sign_cash_flow_project_usd",
    "sign_cash_flow_equity_usd",
)
"""Columns of flags: 1 where something holds, else 0 (a sign: -1, 0 or 1), shown plainly."""
_SUMMARY_FORMATS = {
    "usd_per_mtok": CURRENCY_PER_MTOK,
    "pct": PERCENT,
    "months": "#,##0.0",
    "count": WHOLE,
    "ratio": RATIO,
    "tokens": THOUSANDS,
}
"""Summary formats by the metric's kind (econ.labels.metric_kind); USD by number_format."""


def summary_format(key: str) -> str:
    """Display format of a Summary row: by the metric's kind, money by its name."""
    from econ.labels import metric_kind

    kind = metric_kind(key)
    return _SUMMARY_FORMATS.get(kind) or number_format(key)


def _text(value: str) -> str:
    """Text as a cell can hold it: characters XML 1.0 cannot carry become U+FFFD, and carriage
    returns become line feeds (XML readers normalize them so; written so, every reader agrees)."""
    text = str(value).replace("\r\n", "\n").replace("\r", "\n")
    text = _ILLEGAL.sub("\ufffd", text)
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "\u2026"


def _put_text(ws, row: int, column: int, value: str):
    """A string cell that stays a string: never parsed as a formula, and quote-prefixed when it
    looks like one to the CSV writers (econ.text) or starts with an apostrophe, so that editing
    it in a spreadsheet keeps it text."""
    cell = ws.cell(row=row, column=column)
    cell.value = _text(value)
    cell.data_type = "s"
    if looks_like_formula(cell.value) or cell.value.startswith("'"):
        cell.quotePrefix = True
    return cell


def _put_value(ws, row: int, column: int, value, fmt: str | None = None):
    cell = ws.cell(row=row, column=column)
    if value is None:  # (formatted all the same: a figure typed in later shows as its kind)
        if fmt:
            cell.number_format = fmt
        return cell
    if isinstance(value, str):
        return _put_text(ws, row, column, value)
    if isinstance(value, bool | np.bool_):
        cell.value = bool(value)
    elif isinstance(value, dt.datetime | dt.date):
        cell.value = value
        cell.number_format = DATE
        return cell
    elif isinstance(value, list | tuple | Mapping):
        return _put_text(ws, row, column, json.dumps(value, default=str, ensure_ascii=False))
    else:
        number = float(value)
        if math.isnan(number) or math.isinf(number):
            return cell
        cell.value = int(number) if number.is_integer() and abs(number) < 2**53 else number
    if fmt:
        cell.number_format = fmt
    return cell


class _Cache:
    """Results of formula cells, by sheet title and coordinate, filled into the XML on save."""

    def __init__(self):
        self.values: dict[str, dict[str, Any]] = {}

    def put(self, ws, row: int, column: int, formula: str, value, fmt: str | None = None):
        cell = ws.cell(row=row, column=column)
        cell.value = "=" + formula
        if fmt:
            cell.number_format = fmt
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            value = ""
        self.values.setdefault(ws.title, {})[cell.coordinate] = value
        return cell


AS_EXPORTED = "as exported: re-run econ after changing inputs"
"""How a figure that does not recalculate is marked (its note starts so; Notes' legend)."""
REPRODUCED = "econ project SCENARIO --hold-debt --set PATH=VALUE"
"""The command that gives what this workbook gives for an input changed here: SCENARIO is the
Notes sheet's scenario_toml saved as a file, and --hold-debt holds a sized loan as exported, as
the workbook does (without it, econ sizes the loan again for the new inputs)."""
REPRODUCED_WHERE = (
    "SCENARIO: the Notes sheet's scenario_toml saved as a file; --hold-debt keeps a sized loan "
    "as exported, as this workbook does"
)
AT_EXPORT = (
    f"{AS_EXPORTED.capitalize()}. The engine's value at the exported inputs (grey, italic): it "
    f"does not recalculate when an input changes here; {REPRODUCED} gives it for other inputs "
    f"({REPRODUCED_WHERE})."
)
"""The note on cells written as the engine's values."""
WARNINGS_AT_EXPORT = (
    f"{AS_EXPORTED.capitalize()}. The engine's warnings at the exported inputs (grey, italic): "
    f"they do not follow an input changed here; {REPRODUCED} gives them for other inputs "
    f"({REPRODUCED_WHERE})."
)
_EXPORTED_FONT = Font(italic=True, color="595959")


def _exported(cell):
    """Style a figure written as the engine's value, which no input changed here moves: grey
    fill, grey italic (the Notes sheet's legend)."""
    cell.fill = _VALUE_FILL
    cell.font = _EXPORTED_FONT
    return cell


def _note(text: str):
    """A cell note (comment) by econ."""
    from openpyxl.comments import Comment

    note = Comment(_text(text), "econ")
    # tall enough for the text (about 45 characters a line of 16 pixels at this width)
    note.width, note.height = 300, max(120, 16 * (len(note.text) // 45 + 3))
    return note


def _write_debt_schedule(ws, projection: Projection, scenarios) -> None:
    """The yearly debt schedule by asset year (engine.debt_schedule_table), as values."""
    _header(ws, ["Scenario", "Asset year", *DEBT_SCHEDULE.values()])
    ws.cell(row=1, column=1).comment = _note(
        AT_EXPORT + " The Debt sheet's monthly lines are formulas where the loan is."
    )
    ws.freeze_panes = "C2"
    floors = None
    if scenarios is not None:
        floors = {
            str(name): s.financing.covenants.dscr_floor
            for name, s in zip(projection.names, scenarios, strict=True)
        }
    table = debt_schedule_table(projection.monthly, "asset", floors)
    formats = [
        "0" if c == "months" else RATIO if label.endswith("[x]") else number_format(c)
        for c, label in DEBT_SCHEDULE.items()
    ]
    for row, ((name, year), values) in enumerate(table.iterrows(), start=2):
        _put_text(ws, row, 1, str(name))
        _put_value(ws, row, 2, year, "0")
        for j, (column, fmt) in enumerate(zip(DEBT_SCHEDULE, formats, strict=True), start=3):
            _exported(_put_value(ws, row, j, values[column], fmt))


TRANCHE_KEYS = {
    "scenario": "Scenario",
    "tranche": "Tranche",
    "kind": "Kind",
    "month": "Month",
    "date": "Date",
}
"""The tranche sheets' leading columns (econ.engine.Projection.tranches' index, kind and date)
and their headers."""
NO_TRANCHES = (
    " No scenario of this workbook has capital-stack tranches (financing.tranches): its debt, "
    "if any, is financing.debt_share's loan, on the Monthly and Debt sheets."
)


def _write_tranche_sheets(monthly_ws, summary_ws, projection: Projection) -> None:
    """Each capital-stack tranche's monthly lines (Projection.tranches, long: a row per scenario,
    tranche and month) and its summary (Projection.tranche_summary), as values at the exported
    inputs, headers labelled with units (econ.tranche_tables); empty, but for the headers, where
    no scenario has tranches."""
    from econ.tranche_tables import TRANCHE_COLUMNS, TRANCHE_METRICS

    empty = not projection.tranche_counts.any()
    for ws, frame, described, what in (
        (
            monthly_ws,
            projection.tranches,
            TRANCHE_COLUMNS,
            "Each tranche's monthly lines, from econ's schedule of the tranche (econ.capital): "
            "summed over a scenario's tranches they give the debt lines of the Monthly and Debt "
            "sheets.",
        ),
        (
            summary_ws,
            projection.tranche_summary,
            TRANCHE_METRICS,
            "Each tranche's summary: econ's figures of the tranche (effective rate, a "
            "convertible's settlement) and its lines summed over the horizon.",
        ),
    ):
        frame = frame.reset_index()
        keys = [k for k in TRANCHE_KEYS if k in frame.columns]
        _header(ws, [TRANCHE_KEYS[k] for k in keys] + [described[k][0] for k in described])
        ws.cell(row=1, column=1).comment = _note(
            f"{what} {AT_EXPORT}{NO_TRANCHES if empty else ''}"
        )
        for j, key in enumerate(described, start=len(keys) + 1):
            label, meaning = described[key]
            ws.cell(row=1, column=j).comment = _note(f"{label}: {meaning}.")
        ws.freeze_panes = f"{get_column_letter(len(keys) + 1)}2"
        formats = [FLAG if k == "converted" else number_format(k) for k in described]
        columns = [frame[k].tolist() for k in keys] + [frame[k].to_numpy() for k in described]
        for i in range(len(frame)):
            r = i + 2
            for j, key in enumerate(keys, start=1):
                value = columns[j - 1][i]
                if key == "month":
                    _put_value(ws, r, j, value, "0")
                elif key == "date":
                    _put_value(ws, r, j, value.date())
                else:
                    _put_text(ws, r, j, str(value))
            for j, fmt in enumerate(formats, start=len(keys) + 1):
                _exported(_put_value(ws, r, j, columns[j - 1][i], fmt))


def _header(ws, names: Sequence[str], widths: Mapping[str, float] | None = None):
    for j, name in enumerate(names, start=1):
        cell = _put_text(ws, 1, j, name)
        cell.font = _HEADER_FONT
        cell.fill = _HEADER_FILL
        cell.alignment = Alignment(wrap_text=True, vertical="top")
        width = (widths or {}).get(name) or min(max(len(name) + 2, 11), 40)
        ws.column_dimensions[get_column_letter(j)].width = width


def build_workbook(
    projection: Projection, scenarios: Sequence[Scenario] | None, stamp: Stamp
) -> tuple[Workbook, _Cache, list[_Resolved]]:
    """The workbook (openpyxl) and the cached results of its formula cells."""
    n = len(projection)
    if scenarios is not None:
        check_projected(projection, scenarios, WorkbookError)
    horizons = np.asarray(projection.horizon_months, dtype=int)
    if int((horizons + 1).sum()) + 1 > MAX_ROWS:
        raise WorkbookError(
            f"{n} scenarios make {int((horizons + 1).sum()):,} monthly rows, more than a workbook "
            f"should hold ({MAX_ROWS:,}); expected fewer scenarios, or write Parquet instead"
        )
    tranche_rows = int((projection.tranche_counts * (horizons + 1)).sum())
    if tranche_rows + 1 > MAX_ROWS:
        raise WorkbookError(
            f"{n} scenarios make {tranche_rows:,} rows of their capital stacks' tranches (a row "
            f"per tranche and month), more than a workbook should hold ({MAX_ROWS:,}); expected "
            "fewer scenarios, or write Parquet instead"
        )
    resolved = [
        _resolve(projection, k, None if scenarios is None else scenarios[k]) for k in range(n)
    ]
    engine_columns = [c for c in projection.monthly.columns if c != "date"]

    def present(sheet: str, name: str) -> bool:
        return any(r.modes.get((sheet, name), "absent") != "absent" for r in resolved)

    columns = {
        M: ["scenario", "month", "date", *engine_columns]
        + [
            s.name
            for s in SPECS
            if s.sheet == M and s.name not in engine_columns and present(M, s.name)
        ],
        "Debt": ["scenario", "month"]
        + list(
            dict.fromkeys(s.name for s in SPECS if s.sheet == "Debt" and present("Debt", s.name))
        ),
        "Depreciation": ["scenario", "month"]
        + list(
            dict.fromkeys(
                s.name
                for s in SPECS
                if s.sheet == "Depreciation" and present("Depreciation", s.name)
            )
        ),
        "Annual": ["scenario", "tax_year", *TAX_YEAR_DATES]
        + list(
            dict.fromkeys(
                s.name for s in SPECS if s.sheet == "Annual" and present("Annual", s.name)
            )
        ),
    }
    summary_frame = flat_summary(projection)
    summary_keys = [c for c in summary_frame.columns if c not in SUMMARY_TEXT_ROWS]
    letters = {
        sheet: {name: get_column_letter(j) for j, name in enumerate(names, start=1)}
        for sheet, names in columns.items()
    }
    blocks = []
    row, annual_row = 2, 2
    for k in range(n):
        rows = int(horizons[k]) + 1
        years = max(1, -(-int(horizons[k]) // units.MONTHS_PER_YEAR))
        block = {sheet: (row, row + rows - 1) for sheet in ROW_SHEETS}
        block["Annual"] = (annual_row, annual_row + years - 1)
        blocks.append(block)
        row += rows
        annual_row += years

    wb = Workbook()
    wb.remove(wb.active)
    sheets = {title: wb.create_sheet(title) for title in SHEETS}
    cache = _Cache()
    names: list[dict[str, str]] = [{} for _ in range(n)]
    _write_assumptions(wb, sheets["Assumptions"], scenarios, resolved, names, cache)
    layout = _Layout(
        letters=letters,
        blocks=blocks,
        names=names,
        summary_rows={key: SUMMARY_FIRST_ROW + i for i, key in enumerate(summary_keys)},
        summary_columns=[get_column_letter(3 + k) for k in range(n)],
    )

    # Row-aligned sheets and Annual.
    for sheet_name in (*ROW_SHEETS, "Annual"):
        ws = sheets[sheet_name]
        _header(ws, columns[sheet_name])
        ws.freeze_panes = "D2" if sheet_name == M else "C2"
        exported: dict[int, str] = {}  # column -> why it is written as values (a scenario's)
        for k in range(n):
            r0, r1 = blocks[k][sheet_name]
            res = resolved[k]
            name = str(projection.names[k])
            start = np.datetime64(projection.start_dates[k], "M")
            horizon = int(horizons[k])
            for i, r in enumerate(range(r0, r1 + 1)):
                _put_text(ws, r, 1, name)
                if sheet_name == "Annual":
                    _put_value(ws, r, 2, i + 1, "0")
                    for j, first_or_last in enumerate(tax_year_months(i + 1, horizon), start=3):
                        day = (start + np.timedelta64(first_or_last, "M")).astype("datetime64[D]")
                        _put_value(ws, r, j, day.item()).number_format = MONTH_DATE
                else:
                    _put_value(ws, r, 2, i, "0")
                if sheet_name == M:
                    day = (start + np.timedelta64(i, "M")).astype("datetime64[D]").item()
                    _put_value(ws, r, 3, day)
            first_data = {M: 4, "Annual": 3 + len(TAX_YEAR_DATES)}.get(sheet_name, 3)
            for j, column in enumerate(columns[sheet_name][first_data - 1 :], start=first_data):
                key = (sheet_name, column)
                mode = res.modes.get(key, "absent")
                if mode == "absent":
                    continue
                fmt = number_format(column)
                values = res.values.get(key)
                if mode == "formula":
                    expr = res.formulas[key]
                    for i, r in enumerate(range(r0, r1 + 1)):
                        ctx = _Ctx(layout, k, sheet_name, r)
                        cache.put(ws, r, j, expr.render(ctx), _as_cached(values[i]), fmt)
                else:
                    for i, r in enumerate(range(r0, r1 + 1)):
                        _exported(_put_value(ws, r, j, values[i], fmt))
                    if j not in exported:
                        why = dict(res.notes).get(column, "")
                        why = why.removeprefix("values: ") or _VALUE_SCHEDULES.get(column, "")
                        exported[j] = AT_EXPORT + (f" Why: {why}." if why else "")
        # Each header's note says what the column holds, with its unit (and why it is values).
        for j, column in enumerate(columns[sheet_name], start=1):
            text = column_note(sheet_name, column)
            ws.cell(row=1, column=j).comment = _note(
                text + (f"\n\n{exported[j]}" if j in exported else "")
            )

    _write_summary(sheets["Summary"], summary_frame, resolved, layout, cache, projection)
    _write_charts(sheets["Charts"], sheets, layout, projection, resolved)
    _write_debt_schedule(sheets["Debt schedule"], projection, scenarios)
    _write_tranche_sheets(sheets["Tranches"], sheets["Tranche summary"], projection)
    labels = [
        (f"{sheet}!{name}", column_note(sheet, name))
        for sheet in (M, "Annual", "Depreciation", "Debt")
        for name in columns[sheet]
    ]
    _write_notes(sheets["Notes"], projection, resolved, stamp, labels, scenarios)
    _set_properties(wb, stamp)
    return wb, cache, resolved


_SPECS_BY_KEY = {(spec.sheet, spec.name): spec for spec in reversed(SPECS)}
"""Each column's Spec (its first, where several candidates' Specs share a column)."""
_INDEX_NOTES = {
    ("Annual", "tax_year"): (
        "year",
        "tax year (asset year) k: months 12k-11..12k, year 1 with month 0; the last year ends "
        "at the horizon",
    ),
    ("Annual", "first_month"): ("month", "the date of the tax year's first month"),
    ("Annual", "last_month"): ("month", "the date of the tax year's last month"),
}


def column_note(sheet: str, name: str) -> str:
    """What a column of a schedule sheet holds, as the Notes sheet and its header's note say it:
    "Label [unit]: meaning". The engine's columns (and the views of them) are described by
    econ.labels.COLUMN_NOTES, the workbook's own columns by their Spec's label and unit; a
    tax year's sum says so."""
    spec = _SPECS_BY_KEY.get((sheet, name))
    unit, meaning = _INDEX_NOTES.get((sheet, name), ("", ""))
    own = spec is not None and spec.label and spec.label != "from Monthly"
    if not meaning and name in COLUMN_NOTES and not own:
        unit, meaning = COLUMN_NOTES[name]
        if sheet == "Annual" and spec is not None:
            meaning = f"{meaning} (summed over the tax year's months)"
    elif not meaning:
        unit, meaning = (spec.unit if spec else "") or column_unit(name), spec.label if spec else ""
    unit = shown_unit(unit, number_format(name))
    label = (COLUMNS.get(name) or summary_label(name)[0]).strip()  # (its unit apart)
    return f"{label}{f' [{unit}]' if unit else ''}: {meaning or 'see the column name'}"


TAX_YEAR_DATES = ("first_month", "last_month")
"""Annual's columns dating each tax year: its first and its last month (year 1 from month 0,
the purchase month, to month 12; the last year ends at the horizon), as the months' dates."""
MONTH_DATE = "yyyy-mm"


def tax_year_months(year: int, horizon: int) -> tuple[int, int]:
    """The first and last month of tax year `year` (asset year: months 12y-11..12y, year 1 with
    month 0; the last ends at the horizon), as Projection.annual groups them."""
    first = 0 if year == 1 else units.MONTHS_PER_YEAR * (year - 1) + 1
    return first, min(units.MONTHS_PER_YEAR * year, horizon)


def _as_cached(value):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return ""
    return value


PER_SCENARIO = ("value", "source", "provenance", "live")
"""Assumptions columns of each scenario, after input, unit and description."""


def _assumption_column(k: int, column: str = "value") -> int:
    return 4 + len(PER_SCENARIO) * k + PER_SCENARIO.index(column)


def _live_text(path: str) -> str:
    """The `live` cell of a live input: yes, and the command that gives a change of it; for one
    of the loan's own terms (live only where no loan is sized, so there is none to hold), the
    command without --hold-debt, which refuses a change of the loan's own terms."""
    from econ.analysis.committed import loan_terms

    command = REPRODUCED.replace(" --hold-debt", "") if loan_terms([path]) else REPRODUCED
    return f"yes: {command.replace('PATH', path)} gives a change made here"


def _write_assumptions(wb, ws, scenarios, resolved, names, cache: _Cache) -> None:
    n = len(resolved)
    header = ["input", "unit", "description"]
    for k in range(n):
        suffix = "" if n == 1 else f" ({k + 1})"
        header += [f"{column}{suffix}" for column in PER_SCENARIO]
    _header(ws, header, {"input": 40, "description": 60})
    for k in range(n):
        for column, width in zip(PER_SCENARIO, (18, 60, 13, 40), strict=True):
            letter = get_column_letter(_assumption_column(k, column))
            ws.column_dimensions[letter].width = width
    ws.freeze_panes = "D2"
    if scenarios is None:
        _put_text(ws, 2, 1, "the scenarios were not given to the writer: no inputs to show")
        return
    rows: dict[str, _InputRow] = {}
    taken: set[str] = set()  # defined names, case-folded
    for k, scenario in enumerate(scenarios):
        flat = scenario_inputs(scenario)
        explicit = _explicit_paths(scenario)
        for path, value in flat:
            if path not in rows:
                unit, description = _field_info(path)
                rows[path] = _InputRow(path, unit, description, [None] * n, [""] * n, [""] * n)
            source = _source_of(path, scenario.sources)
            rows[path].values[k] = value
            rows[path].sources[k] = source
            rows[path].flags[k] = provenance_flag(source, path in explicit)
    checks = _Validations(ws, names, resolved)
    r = 2
    for path, item in rows.items():
        fmt = _input_format(path, item.unit, item.values)
        _put_text(ws, r, 1, path)
        _put_text(ws, r, 2, shown_unit(item.unit, fmt))
        _put_text(ws, r, 3, item.description)
        for k in range(n):
            j = _assumption_column(k)
            cell = _put_value(ws, r, j, item.values[k], fmt)
            live = path in resolved[k].live
            reason = resolved[k].not_live.get(path, NOT_READ)
            if live:
                cell.font = _INPUT_FONT
                checks.bounds(cell, path, k, scenarios[k])
            else:
                cell.fill = _VALUE_FILL
                checks.locked(cell, path, item.values[k], reason)
            _put_text(ws, r, j + 1, item.sources[k])
            _put_text(ws, r, j + 2, item.flags[k])
            _put_text(ws, r, j + 3, _live_text(path) if live else f"no: {reason}")
            _define(wb, names[k], taken, path, k, n, f"Assumptions!${get_column_letter(j)}${r}")
        r += 1

    r += 1
    _put_text(ws, r, 1, "Derived (formulas)").font = _SECTION_FONT
    r += 1
    _put_text(ws, r, 1, "calc.horizon_months")
    _put_text(ws, r, 2, "months")
    _put_text(ws, r, 3, "months projected after month 0 (rows of the schedules; not a live input)")
    for k in range(n):
        j = _assumption_column(k)
        cell = _put_value(ws, r, j, resolved[k].env.inputs["calc.horizon_months"], "0")
        cell.fill = _VALUE_FILL
        reason = "the schedules have a row per month, fixed at export: edit it in econ"
        checks.locked(cell, "calc.horizon_months", cell.value, reason)
        _put_text(ws, r, j + 3, f"no: {reason}")
        _define(
            wb,
            names[k],
            taken,
            "calc.horizon_months",
            k,
            n,
            f"Assumptions!${get_column_letter(j)}${r}",
        )
    r += 1
    constants_at = r + len(DERIVED) + 2
    const_rows = {key: constants_at + i for i, (key, *_rest) in enumerate(CONSTANTS)}
    derived_rows = {key: r + i for i, (key, *_rest) in enumerate(DERIVED)}
    # Names first, so that derived formulas can refer to one another.
    for key, row_of in (*derived_rows.items(), *const_rows.items()):
        for k in range(n):
            reference = f"Assumptions!${get_column_letter(_assumption_column(k))}${row_of}"
            _define(wb, names[k], taken, key, k, n, reference)
    layout = _Layout(letters={}, blocks=[{} for _ in range(n)], names=names)
    for key, expr, unit, description in DERIVED:
        row_of = derived_rows[key]
        _put_text(ws, row_of, 1, key)
        _put_text(ws, row_of, 2, shown_unit(unit, number_format(key, unit)))
        _put_text(ws, row_of, 3, description)
        for k in range(n):
            if key not in resolved[k].derived:
                continue
            j = _assumption_column(k)
            value = resolved[k].env.inputs[key]
            fmt = number_format(key, unit)
            if key in resolved[k].frozen_derived:  # its inputs are not live: a value
                cell = _exported(_put_value(ws, row_of, j, value, fmt))
                reason = resolved[k].not_live[key]
                checks.locked(cell, key, value, reason)
                _put_text(ws, row_of, j + 3, f"no: {reason}")
                continue
            formula = expr.render(_Ctx(layout, k, "Assumptions", row_of))
            cache.put(ws, row_of, j, formula, value, fmt)
            _put_text(ws, row_of, j + 3, "formula")
    _put_text(ws, constants_at - 1, 1, "Constants (econ.units)").font = _SECTION_FONT
    for key, value, unit, description in CONSTANTS:
        row_of = const_rows[key]
        _put_text(ws, row_of, 1, key)
        _put_text(ws, row_of, 2, unit)
        _put_text(ws, row_of, 3, description)
        for k in range(n):
            _put_value(ws, row_of, _assumption_column(k), value, DECIMAL)
    checks.write()


VALIDATION_TEXT = 255
"""Characters of a data validation's message (Excel's limit; a title holds 32)."""


HORIZON_BOUNDS: dict[str, tuple[Expr | None, Expr | None, str]] = {
    "fleet.purchase_month": (None, _horizon - 1, "before the horizon's last month"),
    "fleet.retire_month": (purchase + 1, _horizon, "after the purchase, within the horizon"),
    "fleet.service_start_month": (
        purchase + 1,
        retire,
        "after the purchase, no later than the retirement (calc.retire_month)",
    ),
    "fleet.deployment_ramp_months": (None, _horizon, "within the horizon"),
    "utilization.ramp_months": (None, _horizon, "within the horizon"),
    "depreciation.in_service_month": (
        None,
        retire - purchase,
        "no later than the GPUs retire, in months after the purchase",
    ),
}
"""Bounds econ's scenario validation puts on an input by other inputs and the horizon
(econ.scenario.models: _check_service_window, _check_depreciation_start, _fits_horizon): (low,
high, in words), formulas over the named cells, so a live purchase month moves them."""

HALL_BOUNDED = (
    "facility.kw_per_rack",
    "fleet.gpu_count",
    "fleet.gpus_per_rack",
    "power.host_overhead_share",
    "power.kw_per_gpu",
)
"""Inputs the hall bounds above (econ.scenario.power_models: check_fleet_in_hall, the rack's kW
within facility.hall_max_kw_per_rack and the racks within facility.floor_m2;
check_hall_capacity, the fleet's IT load within facility.critical_kw): their live cells are held
to the largest value econ accepts with the other inputs as exported (`_largest_accepted`)."""


def _largest_accepted(scenario: Scenario, path: str, whole: bool, high: float) -> float | None:
    """The largest value of input `path` (HALL_BOUNDED) up to `high` (its field's bound) that
    econ accepts with the scenario's other inputs as exported, or None where the hall sets no
    such bound: found by bisection over econ's own validation, so that a cell holds no value
    econ refuses (hall-10mw-hgx-b200-air: power.kw_per_gpu 2.1, a rack of 30.34 kW in a 30 kW
    hall, recalculated while econ refuses it)."""
    from econ.scenario import ScenarioError, scenario_to_dict, validate_dict
    from econ.scenario.io import apply_overrides

    facility = scenario.facility
    limits = (facility.hall_max_kw_per_rack, facility.floor_m2, facility.critical_kw)
    value = _inputs_of(scenario).get(path)
    if path not in HALL_BOUNDED or all(x is None for x in limits) or not value or value < 0:
        return None
    data = scenario_to_dict(scenario)

    def accepted(x: float) -> bool:
        try:
            validate_dict(apply_overrides(data, {path: int(x) if whole else x}))
        except ScenarioError:
            return False
        return True

    # (up to the field's bound, and no further than a million times the value: no hall's)
    cap = min(high, float(value) * 1e6)
    low = up = float(value)
    while True:
        up = min(up * 2, cap)
        if not accepted(up):
            break
        if up >= cap:
            return None
        low = up
    while (up - low > 1) if whole else (up - low > 1e-9 * up):
        middle = (low + up) // 2 if whole else (low + up) / 2
        low, up = (middle, up) if accepted(middle) else (low, middle)
    return low


class _Validations:
    """Data validation of the Assumptions inputs: a live input within its field's bounds
    (econ.scenario.section.field_bounds; whole numbers for counts and months, a list for a
    choice) and those the scenario's validation sets by other inputs and the horizon
    (HORIZON_BOUNDS), an input that is not live held at its value; each with a message naming
    the field and what it takes. Cells of one rule share one DataValidation."""

    def __init__(self, ws, names: Sequence[Mapping[str, str]] = (), resolved: Sequence = ()):
        self.ws = ws
        self.names, self.resolved = names, resolved
        self.rules: dict[tuple, list[str]] = {}
        self.pending: list[tuple] = []  # (cell, path, scenario): bounded when all are named

    def _add(self, cell, rule: tuple) -> None:
        self.rules.setdefault(rule, []).append(cell.coordinate)

    def _limit(self, expr: Expr | None, k: int) -> tuple[str, float] | None:
        """A HORIZON_BOUNDS bound of scenario k: (formula over its names, value at export), or
        None where a name it reads is not written."""
        if expr is None or k >= len(self.names):
            return None
        layout = _Layout(letters={}, blocks=[{}] * len(self.names), names=list(self.names))
        try:
            text = expr.render(_Ctx(layout, k, "Assumptions", 0))
            value = float(expr.evaluate(self.resolved[k].env))
        except (KeyError, Missing, TypeError, ValueError):
            return None
        return text, value

    def bounds(self, cell, path: str, k: int = 0, scenario: Scenario | None = None) -> None:
        """Hold a live input to its bounds (written by `write`, once every cell is named)."""
        self.pending.append((cell, path, k, scenario))

    def _bounds(self, cell, path: str, k: int, scenario: Scenario | None) -> None:
        from econ.batch import field_kinds
        from econ.scenario.section import field_bounds

        found = _field(path)
        kind, choices = field_kinds().get(path, ("", ()))
        if found is None or not kind:
            return
        model, name = found
        optional = type(None) in typing.get_args(model.model_fields[name].annotation)
        if kind == "choice":
            listed = ",".join(choices)
            text = f"{path}: one of {', '.join(choices)}" + (" (or blank)" if optional else "")
            self._add(cell, ("list", None, f'"{listed}"', None, optional, text, "stop"))
            return
        bounds = field_bounds(model, name)
        low = bounds.get("ge", bounds.get("gt"))
        high = bounds.get("le", bounds.get("lt"))
        whole = kind == "int"
        if whole:  # a strict bound of a whole number is the next whole number
            low = None if low is None else (low + 1 if "gt" in bounds else low)
            high = None if high is None else (high - 1 if "lt" in bounds else high)
        elif "gt" in bounds or "lt" in bounds:  # (the spreadsheet's bounds are inclusive)
            nudge = lambda x, up: x + (1 if up else -1) * 1e-9 * max(1.0, abs(x))  # noqa: E731
            low = None if low is None else (nudge(low, True) if "gt" in bounds else low)
            high = None if high is None else (nudge(high, False) if "lt" in bounds else high)
        what = "a whole number" if whole else "a number"
        parts = []
        if "ge" in bounds:
            parts.append(f"at least {bounds['ge']:,g}")
        if "gt" in bounds:
            parts.append(f"above {bounds['gt']:,g}")
        if "le" in bounds:
            parts.append(f"at most {bounds['le']:,g}")
        if "lt" in bounds:
            parts.append(f"below {bounds['lt']:,g}")
        low_text = None if low is None else _number_text(low)
        high_text = None if high is None else _number_text(high)
        by_others = HORIZON_BOUNDS.get(path)
        if by_others is not None:
            below, above = self._limit(by_others[0], k), self._limit(by_others[1], k)
            if below is not None:
                low_text = below[0] if low is None else f"MAX({low_text},{below[0]})"
            if above is not None:
                high_text = above[0] if high is None else f"MIN({high_text},{above[0]})"
            if below is not None and above is not None:
                parts.append(f"{by_others[2]} ({below[1]:,g} to {above[1]:,g} as exported)")
            elif below is not None or above is not None:
                side, value = ("from", below[1]) if below is not None else ("up to", above[1])
                parts.append(f"{by_others[2]} ({side} {value:,g} as exported)")
        high_value = math.inf if high is None else high
        top = None if scenario is None else _largest_accepted(scenario, path, whole, high_value)
        if top is not None:  # (below the field's bound; no HORIZON_BOUNDS input is HALL_BOUNDED)
            high_text = _number_text(top)
            parts.append(
                f"up to {top:,g} beside the other inputs as exported (the most econ accepts)"
            )
        text = f"{path}: {what}" + (f", {' and '.join(parts)}" if parts else "")
        text += " (or blank)" if optional else ""
        text += "; econ refuses other values"
        kind = "whole" if whole else "decimal"
        if low_text is not None and high_text is not None:
            rule = (kind, "between", low_text, high_text)
        elif low_text is not None:
            rule = (kind, "greaterThanOrEqual", low_text, None)
        elif high_text is not None:
            rule = (kind, "lessThanOrEqual", high_text, None)
        else:
            rule = (kind, "between", "-1E+307", "1E+307")
        self._add(cell, (*rule, optional, text, "stop"))

    def locked(self, cell, path: str, value, reason: str) -> None:
        text = f"{path} is not live in this workbook: {reason}"
        if isinstance(value, bool) or value is None:
            rule = ("textLength", "equal", "0", None)
        elif isinstance(value, int | float):
            rule = ("decimal", "equal", _number_text(value), None)
        else:
            return  # text (names, descriptions, lists): no formula reads it
        self._add(cell, (*rule, value is None, text, "stop"))

    def write(self) -> None:
        from openpyxl.worksheet.datavalidation import DataValidation

        for cell, path, k, scenario in self.pending:
            self._bounds(cell, path, k, scenario)

        for (kind, operator, first, second, blank, text, style), cells in self.rules.items():
            check = DataValidation(
                type=kind,
                operator=operator,
                formula1=first,
                formula2=second,
                allow_blank=blank,
                showErrorMessage=True,
                showInputMessage=True,
                errorStyle=style,
                errorTitle="econ input",
                error=_text(text)[:VALIDATION_TEXT],
                promptTitle="econ input",
                prompt=_text(text)[:VALIDATION_TEXT],
            )
            for cell in cells:
                check.add(cell)
            self.ws.add_data_validation(check)


def _define(
    wb, names: dict[str, str], taken: set[str], key: str, k: int, n: int, reference: str
) -> None:
    """Name the cell of input `key` of scenario k (`market_price_usd_per_mtok`, `_2` with several
    scenarios); paths inside lists (vintages, steps) and names a spreadsheet refuses stay unnamed,
    as no formula reads them."""
    if _INDEX.search(key) or key.startswith("vintages"):
        return
    name = _name_for(key, k, n)
    # Names are case-blind in spreadsheets: a second name differing only in case is left out.
    if not excel_name_ok(name) or name.casefold() in taken:
        return
    taken.add(name.casefold())
    wb.defined_names[name] = DefinedName(name, attr_text=reference)
    names[key] = name


def _null_text(metric: str, warnings: Sequence[str]) -> str:
    stem = metric.removeprefix("cost_usd_per_mtok_")
    for warning in warnings:
        if metric in warning or (stem != metric and "lcot_usd_per_mtok" in warning):
            return "n/a: " + warning
    return "n/a (see Notes)"


SUMMARY_KEY = "Key"
"""Header of the Summary column holding each row's summary key (`npv_usd`), for programs."""
SUMMARY_TEXT_ROWS = ("scenario", "warnings")
"""Summary keys written as text rows: the scenario names (row 2) and the warnings (last row)."""
SUMMARY_FIRST_ROW = 3
"""First metric row of the Summary sheet (row 1 headers, row 2 the scenario names)."""


CHECK_OK = "ok"
"""What a check row shows where the inputs are as econ takes them."""
_INPUT_TOKENS_REFUSED = (
    "econ refuses these inputs: an input price (market.input_price_usd_per_mtok above 0) needs "
    "the input tokens served per output token (throughput.input_tokens_per_output_token above "
    "0); set the input price to 0, or give the input tokens per output token"
)
CHECKS: tuple[tuple[str, str, Expr], ...] = (
    (
        "check.one_hardware_price",
        "Check: one hardware price",
        IF(
            eq(ISBLANK(Name("capex.gpu_price_usd")), ISBLANK(Name("capex.system_price_usd"))),
            Text(
                "econ refuses these inputs: give exactly one of capex.gpu_price_usd and "
                "capex.system_price_usd, the other blank"
            ),
            Text(CHECK_OK),
        ),
    ),
    (
        "check.one_term_loan_size",
        "Check: one size of the term loan",
        IF(
            ISBLANK(Name("financing.debt_usd")),
            Text(CHECK_OK),
            IF(
                gt(Name("financing.debt_share"), 0),
                Text(
                    "econ refuses these inputs: give the term loan as financing.debt_usd or as "
                    "financing.debt_share, not both (the share 0 beside an amount)"
                ),
                Text(CHECK_OK),
            ),
        ),
    ),
    (
        "check.input_tokens_for_input_price",
        "Check: input tokens for the input price",
        IF(
            gt(Name("market.input_price_usd_per_mtok"), 0),
            IF(
                ISBLANK(Name("throughput.input_tokens_per_output_token")),
                Text(_INPUT_TOKENS_REFUSED),
                IF(
                    le(Name("throughput.input_tokens_per_output_token"), 0),
                    Text(_INPUT_TOKENS_REFUSED),
                    Text(CHECK_OK),
                ),
            ),
            Text(CHECK_OK),
        ),
    ),
    (
        "check.debt_within_capex",
        "Check: debt within the capex",
        IF(
            gt(
                Cell("Summary", "debt_usd"),
                Cell("Summary", "capex_usd_total") + units.HALF_CENT_USD,
            ),
            Text(
                "the debt exceeds the capex (a loan-to-cost above 100%): the loan is held as "
                "exported while the capex changed here; econ sizes or caps the loan: change the "
                "inputs in econ and export again"
            ),
            Text(CHECK_OK),
        ),
    ),
    (
        "check.months_within_horizon",
        "Check: months within the horizon",
        IF(
            OR(
                ge(purchase, _horizon),
                le(retire, purchase),
                gt(retire, _horizon),
                gt(Name("depreciation.in_service_month"), retire - purchase),
                gt(Name("fleet.deployment_ramp_months"), _horizon),
                gt(Name("utilization.ramp_months"), _horizon),
                eq(
                    IF(
                        ISBLANK(Name("fleet.service_start_month")),
                        0,
                        IF(
                            OR(
                                le(Name("fleet.service_start_month"), purchase),
                                gt(Name("fleet.service_start_month"), retire),
                            ),
                            1,
                            0,
                        ),
                    ),
                    1,
                ),
            ),
            Text(
                "econ refuses these inputs: the purchase before the horizon's end, "
                "fleet.retire_month (and fleet.service_start_month) after the purchase and "
                "within the horizon, depreciation.in_service_month no later than the GPUs "
                "retire (in months after the purchase), the ramps within the horizon"
            ),
            Text(CHECK_OK),
        ),
    ),
)
"""Rows below the Summary's warnings (key, label, formula): each shows CHECK_OK, or, red, what is
wrong with the inputs typed here: two inputs econ takes one at a time, an input price without
input tokens (a blank ratio: the revenue formulas show #VALUE!; 0: no input revenue), a loan held
as exported that a live change leaves larger than the capex, or months outside the horizon
(HORIZON_BOUNDS: data validation refuses them where they are typed, not where they are
pasted)."""
_CHECK_FILL = PatternFill("solid", fgColor="FFC7CE")
_CHECK_FONT = Font(color="9C0006")


def _summary_value_headers(n: int) -> list[str]:
    return ["Value"] if n == 1 else [f"Value ({k + 1})" for k in range(n)]


def _write_summary(ws, frame, resolved, layout, cache: _Cache, projection: Projection) -> None:
    """One metric per row: label, unit, a value per scenario (formula or engine value), key."""
    n = len(frame)
    values = _summary_value_headers(n)
    key_column = 3 + n
    _header(
        ws,
        ["Metric", "Unit", *values, SUMMARY_KEY],
        {"Metric": 46, "Unit": 14, SUMMARY_KEY: 34} | dict.fromkeys(values, 22),
    )
    ws.freeze_panes = f"C{SUMMARY_FIRST_ROW}"
    _put_text(ws, 2, 1, "Scenario").font = _SECTION_FONT
    _put_text(ws, 2, key_column, "scenario").font = _KEY_FONT
    for k in range(n):
        _put_text(ws, 2, 3 + k, str(frame["scenario"].iloc[k])).font = _SECTION_FONT
    for key, r in layout.summary_rows.items():
        label, unit = summary_label(key)
        cell = _put_text(ws, r, 1, label.strip())
        if label.startswith(" "):  # a part of the metric above ("of which power")
            cell.alignment = Alignment(indent=2)
        _put_text(ws, r, 2, unit)
        _put_text(ws, r, key_column, key).font = _KEY_FONT
        fmt = summary_format(key)
        for k in range(n):
            j = 3 + k
            entry = resolved[k].summary.get(key)
            if entry is not None and entry[0] == "formula":
                ctx = _Ctx(layout, k, "Summary", r)
                cache.put(ws, r, j, entry[2].render(ctx), _as_cached(entry[1]), fmt)
                continue
            value = frame[key].iloc[k]
            if isinstance(value, str):
                cell = _put_text(ws, r, j, value)
            elif value is None or (isinstance(value, float) and math.isnan(value)):
                cell = _put_text(ws, r, j, _null_text(key, projection.warnings[k]))
            else:
                cell = _put_value(ws, r, j, value, fmt)
            _exported(cell).comment = _note(AT_EXPORT)
    r = SUMMARY_FIRST_ROW + len(layout.summary_rows)
    if "warnings" in frame.columns:
        _put_text(ws, r, 1, "Warnings")
        _put_text(ws, r, key_column, "warnings").font = _KEY_FONT
        for k in range(n):
            text = frame["warnings"].iloc[k]
            cell = _put_text(ws, r, 3 + k, "" if text is None else str(text))
            cell.alignment = Alignment(wrap_text=True, vertical="top")
            _exported(cell).comment = _note(WARNINGS_AT_EXPORT)
        r += 1
    _write_checks(ws, r, resolved, layout, cache)


def _write_checks(ws, r: int, resolved, layout: _Layout, cache: _Cache) -> None:
    """The CHECKS rows from row r, a formula per scenario (its cached result evaluated as the
    other formulas are), red where the check fails (conditional formatting)."""
    from openpyxl.formatting.rule import FormulaRule

    n = len(resolved)
    if not any(res.env is not None and res.derived for res in resolved):
        return  # (no scenarios given: no inputs to check)
    first = r
    for key, label, expr in CHECKS:
        written = False
        for k, res in enumerate(resolved):
            try:
                value = expr.evaluate(res.env)
                formula = expr.render(_Ctx(layout, k, "Summary", r))
            except (Missing, KeyError, TypeError, ValueError):
                continue  # (an input this scenario has no named cell for)
            cache.put(ws, r, 3 + k, formula, str(value))
            written = True
        if written:
            _put_text(ws, r, 1, label)
            _put_text(ws, r, 3 + n, key).font = _KEY_FONT
            r += 1
    if r > first:
        cells = f"C{first}:{get_column_letter(2 + n)}{r - 1}"
        rule = FormulaRule(
            formula=[f'AND(C{first}<>"",C{first}<>"{CHECK_OK}")'],
            fill=_CHECK_FILL,
            font=_CHECK_FONT,
        )
        ws.conditional_formatting.add(cells, rule)


def read_summary(sheet):
    """The Summary sheet as pandas reads it (header row 1) -> one row per scenario and a column per
    summary key, as econ.reporting.flat_summary (for `econ verify` and other programs)."""
    import pandas as pd

    if SUMMARY_KEY not in sheet.columns:
        raise WorkbookError(
            f"the Summary sheet has no {SUMMARY_KEY} column; expected a workbook written by an "
            "econ with one metric per row"
        )
    keys = [str(key) for key in sheet[SUMMARY_KEY].tolist()]
    columns = [c for c in sheet.columns if str(c).startswith("Value")]
    rows = [dict(zip(keys, sheet[c].tolist(), strict=True)) for c in columns]
    return pd.DataFrame(rows, columns=keys)


CHART_ROWS = 17
"""Rows of the Charts sheet per scenario: a title row and charts 15 rows (7.5 cm) high."""
REVENUE_COSTS = ("power_usd", "facility_usd", "opex_usd", "depreciation_usd", "interest_usd")
"""Costs stacked against revenue on the revenue chart (Annual sheet, per tax year)."""


def _series(ws, letters: Mapping[str, str], column: str, rows: tuple[int, int], title: str):
    """A chart series over rows of one column of `ws`, or None when the sheet lacks the column."""
    if column not in letters:
        return None
    j = column_index_from_string(letters[column])
    values = Reference(ws, min_col=j, min_row=rows[0], max_row=rows[1])
    return Series(values, title=title)


def _categories(ws, letters: Mapping[str, str], column: str, rows: tuple[int, int]):
    j = column_index_from_string(letters[column])
    return Reference(ws, min_col=j, min_row=rows[0], max_row=rows[1])


def _chart_axes(chart, x_title: str, y_title: str, y_format: str) -> None:
    chart.x_axis.title = x_title
    chart.y_axis.title = y_title
    chart.y_axis.numFmt = y_format
    chart.y_axis.majorGridlines = ChartLines()
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.x_axis.tickLblPos = "low"  # below the plot, also where values are negative
    chart.legend.position = "b"
    chart.display_blanks = "gap"
    chart.width, chart.height = 16.0, 7.5


def _revenue_chart(sheets, layout: _Layout, k: int):
    """Revenue (line) against the costs stacked (bars), per tax year, from the Annual sheet."""
    ws, letters = sheets["Annual"], layout.letters["Annual"]
    rows = layout.blocks[k]["Annual"]
    bars = BarChart()
    bars.type, bars.grouping, bars.overlap = "col", "stacked", 100
    for column in REVENUE_COSTS:
        series = _series(ws, letters, column, rows, column_label(column))
        if series is not None:
            bars.series.append(series)
    bars.set_categories(_categories(ws, letters, "tax_year", rows))
    bars.title = "Revenue against costs per tax year"
    _chart_axes(bars, "tax year", "USD", THOUSANDS)
    revenue = _series(ws, letters, "revenue_usd", rows, column_label("revenue_usd"))
    if revenue is not None:
        line = LineChart()
        line.series.append(revenue)
        bars += line
    return bars


def _line_chart(title: str, y_title: str, y_format: str, parts, layout: _Layout, rows, sheets):
    """Lines over `rows` of the row-aligned sheets: parts are (sheet, column, series title)."""
    chart = LineChart()
    chart.title = title
    for sheet, column, label in parts:
        series = _series(sheets[sheet], layout.letters[sheet], column, rows, label)
        if series is not None:
            series.smooth = False
            chart.series.append(series)
    chart.set_categories(_categories(sheets[M], layout.letters[M], "month", rows))
    _chart_axes(chart, "month", y_title, y_format)
    chart.x_axis.tickLblSkip = chart.x_axis.tickMarkSkip = units.MONTHS_PER_YEAR
    return chart


def _defined_rows(values, block: tuple[int, int]) -> tuple[int, int] | None:
    """Rows of a block from the first to the last month where a ratio is defined (debt service;
    a covenant test): outside them the ratio cells hold an empty text, which spreadsheets plot
    as 0, so a ratio chart covers only these months."""
    if values is None:
        return None
    defined = np.flatnonzero(~np.isnan(np.asarray(values, dtype=float)))
    if defined.size == 0:
        return None
    return block[0] + int(defined[0]), block[0] + int(defined[-1])


def _dscr_chart(projection: Projection, k: int, resolved: _Resolved, layout: _Layout, sheets):
    """The DSCR chart: the DSCR the covenant tests (Debt!dscr_test, over its trailing window
    from its first test month) against the covenant's floor, over the tested months; the
    monthly DSCR where the scenario has no DSCR covenant (or no test is written). (None, why)
    where there is nothing to chart."""
    block = layout.blocks[k][M]
    nothing = "no debt service: no DSCR to chart"
    tested = resolved.modes.get(("Debt", "dscr_test"), "absent") != "absent"
    if tested and ("Debt", "dscr_floor") in resolved.modes:
        rows = _defined_rows(resolved.values.get(("Debt", "dscr_test")), block)
        parts = [
            ("Debt", "dscr_test", DSCR_TESTED),
            ("Debt", "dscr_floor", "Covenant DSCR floor"),
        ]
        title = "Tested DSCR and the covenant floor"
        if rows is None and np.any(~np.isnan(resolved.values.get(("Debt", "dscr"), [np.nan]))):
            nothing = "no month with debt service is tested by the DSCR covenant: no DSCR to chart"
    else:
        horizon = int(projection.horizon_months[k])
        lines = projection.lines.get("dscr")
        rows = None if lines is None else _defined_rows(lines[k, : horizon + 1], block)
        parts, title = [("Debt", "dscr", "DSCR")], "DSCR (no DSCR covenant)"
    if rows is None:
        return None, nothing
    chart = _line_chart(title, "x", RATIO, parts, layout, rows, sheets)
    return chart, "DSCR: not in this workbook (written without the scenarios)"


DSCR_TESTED = "DSCR tested (trailing test window)"
"""The DSCR chart's series of Debt!dscr_test: the ratio the covenant compares with its floor."""


def _write_charts(ws, sheets, layout: _Layout, projection: Projection, resolved) -> None:
    """Per scenario, three charts over the workbook's own cells, so they follow a changed input:
    revenue against costs per tax year, the tested DSCR with the covenant floor, cumulative cash
    flow. A chart with nothing to show (no debt service; a workbook written without the
    scenarios, whose sheets lack the charted lines) is replaced by a sentence saying so."""
    ws.column_dimensions["A"].width = 12
    cash = [
        (M, "cumulative_cash_flow_project_usd", "Project"),
        (M, "cumulative_cash_flow_equity_usd", "Equity"),
    ]
    missing = "not in this workbook (written without the scenarios)"
    for k, name in enumerate(projection.names):
        top = 1 + k * CHART_ROWS
        _put_text(ws, top, 1, str(name)).font = _SECTION_FONT
        months = layout.blocks[k][M]
        slots = [
            (_revenue_chart(sheets, layout, k), f"revenue and costs per tax year: {missing}"),
            _dscr_chart(projection, k, resolved[k], layout, sheets),
            (
                _line_chart("Cumulative cash flow", "USD", THOUSANDS, cash, layout, months, sheets),
                f"cumulative cash flow: {missing}",
            ),
        ]
        for i, (chart, note) in enumerate(slots):
            column = 1 + 10 * i
            if chart is None or not chart.series:
                _put_text(ws, top + 2, column, note)
            else:
                ws.add_chart(chart, f"{get_column_letter(column)}{top + 1}")


SCENARIO_TOML_ITEM = "scenario_toml"
"""Notes item holding each scenario's TOML, so `econ verify` can recompute the workbook."""
MAX_CELL_CHARS = TEXT_LIMIT
"""Most characters a spreadsheet cell holds (Excel's limit)."""


def toml_pieces(text: str, limit: int = MAX_CELL_CHARS) -> list[str]:
    """A scenario's TOML in pieces a cell holds (at most `limit` characters), each ending at a
    line's end where one falls within the limit (a longer line is cut where the limit falls):
    the Notes sheet's consecutive `scenario_toml` rows of one scenario, which `econ verify`
    joins. A table of 700 prices has 48,648 characters; one cell held a note saying so, and
    `econ verify` refused the workbook as holding malformed TOML."""
    pieces = []
    while len(text) > limit:
        end = text.rfind("\n", 0, limit) + 1 or limit
        pieces.append(text[:end])
        text = text[end:]
    return [*pieces, text]


def _write_notes(
    ws, projection: Projection, resolved, stamp: Stamp, labels=(), scenarios=None
) -> None:
    _header(ws, ["section", "scenario", "item", "text"], {"text": 100, "item": 30, "scenario": 30})
    ws.freeze_panes = "A2"
    rows: list[tuple[str, str, str, Any]] = [
        ("provenance", "", "econ_version", stamp.econ_version),
        ("provenance", "", "econ_code", stamp.econ_code or ""),
        ("provenance", "", CREATED_FIELD, stamp.created_utc),
        ("provenance", "", "seed", "" if stamp.seed is None else str(stamp.seed)),
    ]
    rows += [("provenance", "", f"catalog {name}", v) for name, v in sorted(stamp.catalogs.items())]
    for k, name in enumerate(projection.names):
        rows.append(("provenance", str(name), "scenario_sha256", stamp.sha256_of(k)))
    for scenario in scenarios or ():
        from econ.scenario.io import dumps

        for piece in toml_pieces(dumps(scenario)):
            rows.append(("scenario", scenario.name, SCENARIO_TOML_ITEM, piece))
    for k, name in enumerate(projection.names):
        for warning in projection.warnings[k]:
            rows.append(("warning", str(name), "", warning))
    for k, name in enumerate(projection.names):
        for line, text in resolved[k].notes:
            rows.append(("values", str(name), line, text))
    rows += [("column", "", column, text) for column, text in labels]
    rows += [
        (
            "legend",
            "",
            "blue",
            "live inputs (Assumptions, live = yes): change one and every formula (black) "
            f"recalculates as {REPRODUCED} gives it ({REPRODUCED_WHERE}); a figure in grey "
            f"italic does not: {AS_EXPORTED}",
        ),
        ("legend", "", "black", "formulas: change a live input and they recalculate"),
        (
            "legend",
            "",
            "grey italic",
            f"{AS_EXPORTED}: the engine's values at the exported inputs, which do not "
            "recalculate (each Summary figure so has a note saying it, each column so a note on "
            "its header, and the Debt schedule and tranche sheets one on A1): Summary rows no "
            "formula gives (the break-even price, which econ solves for), the warnings, schedule "
            "columns written as values, derived figures written as their values, a capital "
            "stack's tranches",
        ),
        (
            "legend",
            "",
            "grey",
            "inputs that are not live (Assumptions, live = no: and why): held at their value by "
            "data validation; edit them in econ and export again",
        ),
        (
            "legend",
            "",
            "rows",
            "the schedules have one row per month of the horizon: changing the horizon or "
            "adding steps needs a new export (those inputs are not live)",
        ),
        (
            "legend",
            "",
            "throughput_multiplier",
            "the software-gain trajectory as values (tokens per GPU relative to "
            "throughput.tokens_per_s_per_gpu); tokens scale with that input",
        ),
    ]
    for i, (section, scenario, item, text) in enumerate(rows, start=2):
        _put_text(ws, i, 1, section)
        _put_text(ws, i, 2, scenario)
        _put_text(ws, i, 3, item)
        _put_text(ws, i, 4, str(text))


def _set_properties(wb, stamp: Stamp) -> None:
    created = (
        dt.datetime.strptime(stamp.created_utc, "%Y-%m-%dT%H:%M:%SZ") if stamp.created_utc else None
    )
    wb.properties.creator = f"econ {stamp.econ_version}"
    wb.properties.title = "econ projection"
    if created is not None:
        wb.properties.created = created
    wb.calculation.fullCalcOnLoad = True
    from openpyxl.packaging.custom import StringProperty

    for key, value in stamp.metadata().items():
        wb.custom_doc_props.append(StringProperty(name=key, value=_text(value) or "-"))


# --- Saving with cached results -------------------------------------------------------------------

_FORMULA_CELL = re.compile(rb'<c r="([A-Z]+[0-9]+)"([^>]*)><f>([^<]*)</f><v(?: ?/>|></v>)</c>')
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def _escape(text: str) -> bytes:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").encode("utf-8")


def _fill_cached(xml: bytes, values: Mapping[str, Any]) -> bytes:
    filled = 0

    def replace(match: re.Match) -> bytes:
        nonlocal filled
        ref = match.group(1).decode()
        if ref not in values:
            return match.group(0)
        filled += 1
        value = values[ref]
        attrs = match.group(2)
        if isinstance(value, bool):
            kind, text = b' t="b"', b"1" if value else b"0"
        elif isinstance(value, str):
            kind, text = b' t="str"', _escape(value)
        else:
            kind, text = b"", repr(float(value)).encode()
        return b'<c r="%s"%s%s><f>%s</f><v>%s</v></c>' % (
            match.group(1),
            attrs,
            kind,
            match.group(3),
            text,
        )

    out = _FORMULA_CELL.sub(replace, xml)
    if filled != len(values):
        raise RuntimeError(f"filled {filled} of {len(values)} cached formula results")
    return out


def sheet_parts(archive: zipfile.ZipFile) -> dict[str, str]:
    """Sheet title -> part name, read from the workbook and its relationships."""
    workbook = archive.read("xl/workbook.xml").decode("utf-8")
    rels = archive.read("xl/_rels/workbook.xml.rels").decode("utf-8")
    targets = dict(re.findall(r'<Relationship[^>]*Id="([^"]+)"[^>]*Target="([^"]+)"', rels))
    targets |= {
        rid: target
        for target, rid in re.findall(r'<Relationship[^>]*Target="([^"]+)"[^>]*Id="([^"]+)"', rels)
    }
    out = {}
    for title, rid in re.findall(r'<sheet[^>]*name="([^"]+)"[^>]*r:id="([^"]+)"', workbook):
        target = targets[rid].lstrip("/")
        out[_unescape(title)] = target if target.startswith("xl/") else f"xl/{target}"
    return out


def _unescape(text: str) -> str:
    return (
        text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    )


def _package(wb: Workbook, cache: _Cache, stamp: Stamp) -> bytes:
    raw = io.BytesIO()
    wb.save(raw)
    source = zipfile.ZipFile(io.BytesIO(raw.getvalue()))
    parts = sheet_parts(source)
    by_part = {parts[title]: values for title, values in cache.values.items()}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename in by_part:
                data = _fill_cached(data, by_part[item.filename])
            elif item.filename == "docProps/core.xml" and stamp.created_utc:
                # openpyxl stamps the save time as modified; the creation time is the stamp's.
                data = re.sub(
                    rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)",
                    rb"\g<1>" + stamp.created_utc.encode() + rb"\g<2>",
                    data,
                )
            info = zipfile.ZipInfo(item.filename, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            target.writestr(info, data)
    return out.getvalue()


def workbook_bytes(
    projection: Projection,
    scenarios: Sequence[Scenario] | None = None,
    *,
    stamp: Stamp | None = None,
    seed: int | None = None,
    created=None,
) -> bytes:
    """The .xlsx file of a projection, as bytes (for a download button or a writer): the second
    of `written_workbook`, whose parameters it takes."""
    return written_workbook(projection, scenarios, stamp=stamp, seed=seed, created=created)[1]


def written_workbook(
    projection: Projection,
    scenarios: Sequence[Scenario] | None = None,
    *,
    stamp: Stamp | None = None,
    seed: int | None = None,
    created=None,
) -> tuple[Workbook, bytes]:
    """The workbook of a projection as openpyxl holds it (each cell's formula, number format and
    type, which `econ verify` compares with a file's) and its .xlsx file, as bytes.

    A scenario that reads a measured curve file is the workbook's as econ.embedding.embeddable
    gives it (the curve resolved to its figures, named by file name and SHA-256 in its source):
    the workbook names no folder of this machine and `econ verify` recomputes it without the file.

    Parameters
    ----------
    projection : the engine's projection of `scenarios`
    scenarios : the validated scenarios, in projection order; without them the workbook holds
        the engine's values only (no Assumptions, no formulas)
    stamp : provenance stamp (default: econ.embedding.embedded_stamp of the scenarios, `seed`
        and `created`)
    """
    if scenarios is not None:
        scenarios = list(scenarios)
        if stamp is None:
            stamp = embedded_stamp(projection, scenarios, seed=seed, created=created)
        projection, scenarios = embedded(projection, scenarios)
    elif stamp is None:
        stamp = make_stamp(projection, scenarios, seed=seed, created=created)
    wb, cache, _ = build_workbook(projection, scenarios, stamp)
    return wb, _package(wb, cache, stamp)


def formula_report(
    projection: Projection, scenarios: Sequence[Scenario]
) -> list[dict[str, list[str]]]:
    """Per scenario: which engine lines and metrics are formulas and which are values (and why)."""
    out = []
    for k, scenario in enumerate(scenarios):
        res = _resolve(projection, k, scenario)
        out.append(
            {
                "formulas": sorted(
                    [
                        name
                        for (sheet, name), mode in res.modes.items()
                        if sheet == M and mode == "formula"
                    ]
                    + [name for name, (mode, _, _) in res.summary.items() if mode == "formula"]
                ),
                "values": [f"{line}: {text}" for line, text in res.notes],
            }
        )
    return out


__all__ = [
    "RELATIVE_TOLERANCE",
    "SHEETS",
    "WorkbookError",
    "build_workbook",
    "excel_name_ok",
    "formula_report",
    "line_scale",
    "number_format",
    "provenance_flag",
    "read_summary",
    "toml_pieces",
    "sheet_parts",
    "workbook_bytes",
    "written_workbook",
]
