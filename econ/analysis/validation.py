"""Checks of overridden batch columns against the scenario's own rules, without pydantic per row.

Sweeps and Monte Carlo replace numeric columns of a batch built from one validated base scenario
(`ScenarioBatch.repeat`), so the values they put in never pass through the pydantic models. This
module applies the same rules to whole columns at once:

- field bounds (`gt`, `ge`, `lt`, `le`), read from the models' own field metadata, so a bound
  added to a model is enforced here without a change;
- kinds: integer fields take whole numbers, choice fields take one of their names, only optional
  fields (`capex.gpu_price_usd`, `horizon_months`, ...) take "absent" (NaN);
- the cross-field rules that overrides can break: exactly one of the two capex prices; a price for
  contracted GPUs (or a rental series that prices them); input token prices with the input tokens
  per output token they need; ramps, throughput steps, purchase and retirement months within the
  horizon; no column of a field a rental series is compiled with;
- and, as a backstop for rules added to the models later, full pydantic validation of a sample of
  rows (`validate_rows`).

Every error names the field path, the row and the value, and what was expected.
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache

import numpy as np
from pydantic import BaseModel, ValidationError

from econ.batch import check_scenario, field_kinds, refuse_series_compiled
from econ.errors import InputError
from econ.scenario.errors import shortened
from econ.scenario.models import Scenario
from econ.scenario.section import NONE_WORD
from econ.text import closest_names

PRICE_PATHS = ("capex.gpu_price_usd", "capex.system_price_usd")
"""Alternative capex prices: a batch that overrides one of them clears the other."""


class BatchInputError(InputError):
    """An override, grid, table or sampled value that breaks a scenario rule."""


@dataclass(frozen=True)
class FieldSpec:
    """What a numeric scenario field accepts, from its pydantic declaration.

    Attributes
    ----------
    path : dotted path, e.g. "capex.gpu_price_usd"
    kind : "float", "int" or "choice" (stored as the index of the choice)
    choices : names of the choices (choice fields only)
    nullable : True when the field may be absent (None, NaN in a batch)
    gt, ge, lt, le : bounds (None when absent)
    description : the field's description, with its unit
    """

    path: str
    kind: str
    choices: tuple[str, ...] = ()
    nullable: bool = False
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    description: str = ""

    def expected(self) -> str:
        """The accepted values in words, e.g. "a number > 0 and <= 1"."""
        if self.kind == "choice":
            return "one of: " + ", ".join(self.choices)
        ops = ((">", self.gt), (">=", self.ge), ("<", self.lt), ("<=", self.le))
        bounds = " and ".join(f"{op} {_g(v)}" for op, v in ops if v is not None)
        noun = "a whole number" if self.kind == "int" else "a number"
        return f"{noun} {bounds}".strip() if bounds else noun

    def outside(self, values: np.ndarray) -> np.ndarray:
        """Mask of finite values outside the bounds."""
        bad = np.zeros(values.shape, dtype=bool)
        with np.errstate(invalid="ignore"):
            if self.gt is not None:
                bad |= values <= self.gt
            if self.ge is not None:
                bad |= values < self.ge
            if self.lt is not None:
                bad |= values >= self.lt
            if self.le is not None:
                bad |= values > self.le
        return bad & np.isfinite(values)


def _g(value: float) -> str:
    return f"{value:g}"


NOT_INPUTS = {"schema_version": "is the scenario file's format version, not an input"}
"""Numeric scenario fields that no batch varies, and why (`--grid schema_version=1` ran)."""


@cache
def field_specs() -> dict[str, FieldSpec]:
    """Dotted path -> FieldSpec for every numeric batch column (`econ.batch.field_kinds`), but
    the fields that are not inputs (NOT_INPUTS)."""
    specs = {}
    for path, (kind, choices) in field_kinds().items():
        if path in NOT_INPUTS:
            continue
        info = _field_info(path)
        bounds = {}
        for item in info.metadata:
            for name in ("gt", "ge", "lt", "le"):
                value = getattr(item, name, None)
                if value is not None:
                    bounds[name] = float(value)
        args = typing.get_args(info.annotation)
        union = typing.get_origin(info.annotation) in (typing.Union, types.UnionType)
        specs[path] = FieldSpec(
            path=path,
            kind=kind,
            choices=tuple(str(c) for c in choices),
            nullable=union and type(None) in args,
            description=info.description or "",
            **bounds,
        )
    return specs


def _field_info(path: str):
    model: type[BaseModel] = Scenario
    *parents, leaf = path.split(".")
    for part in parents:
        annotation = model.model_fields[part].annotation
        model = next(
            a
            for a in (annotation, *typing.get_args(annotation))
            if isinstance(a, type) and issubclass(a, BaseModel)
        )
    return model.model_fields[leaf]


def resolve_path(path: str, what: str = "field") -> FieldSpec:
    """The spec of a numeric field, or BatchInputError naming close matches and the valid paths."""
    specs = field_specs()
    if path in specs:
        return specs[path]
    close = closest_names(path, specs)  # utilization.share for utilization.shar, not its siblings
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    if path in NOT_INPUTS:
        raise BatchInputError(
            f"{what} {shortened(path)} {NOT_INPUTS[path]}; expected a numeric input such as "
            "utilization.share (docs/inputs.md lists the fields)"
        )
    if _is_scenario_field(path):
        reason = "is a scenario field but not a numeric one (batches override numbers and choices)"
    else:
        reason = "is not a field of the scenario"
    section = path.split(".")[0]
    near = sorted(p for p in specs if p.split(".")[0] == section and "." in path)
    if near:
        listed = f"expected one of {section}'s: " + ", ".join(near)
    else:  # (all 137 paths would be a screenful: the sections, and where the paths are listed)
        sections = sorted({p.split(".")[0] for p in specs if "." in p})
        tops = sorted(p for p in specs if "." not in p)
        listed = (
            "expected a numeric field: "
            + ", ".join(tops)
            + ", or SECTION.FIELD with SECTION one of "
            + ", ".join(sections)
            + " (docs/inputs.md lists the fields)"
        )
    raise BatchInputError(f"{what} {shortened(path)} {reason}; {hint}{listed}")


def _is_scenario_field(path: str) -> bool:
    model: object = Scenario
    for part in path.split("."):
        fields = getattr(model, "model_fields", {})
        if part not in fields:
            return False
        annotation = fields[part].annotation
        model = next(
            (
                a
                for a in (annotation, *typing.get_args(annotation))
                if isinstance(a, type) and issubclass(a, BaseModel)
            ),
            None,
        )
    return True


RowLabel = str | Callable[[int], str]
"""How messages name a row: a word numbered from `row_offset` ("row" gives "row 2"), or a
function of the row's index (a grid point named by its values)."""


def _where(source: str | None, row: int | None, row_label: RowLabel, row_offset: int) -> str:
    parts = [source] if source else []
    if row is not None:
        parts.append(row_label(row) if callable(row_label) else f"{row_label} {row + row_offset}")
    return ", ".join(parts)


def refuse_quoted_number(option: str, path: str, text: str, value) -> None:
    """A value written in quotes on the command line (`'"0.5"'`) is TOML text, not a number:
    refused for a numeric field, as `--set` refuses it (a choice name may be quoted)."""
    if resolve_path(path).kind == "choice" or not isinstance(value, str) or text[:1] not in "\"'":
        return
    try:
        float(value)
    except ValueError:
        raise BatchInputError(f"{option} {path}: {text} is text; expected a number") from None
    raise BatchInputError(
        f"{option} {path}: {text} is a number written as text; expected the number without quotes"
    )


def coerce_column(
    path: str,
    values: Iterable | np.ndarray,
    *,
    source: str | None = None,
    row_label: RowLabel = "row",
    row_offset: int = 0,
    nan_is_empty: bool = True,
) -> np.ndarray:
    """Turn raw values (numbers, numeric text, choice names) into a batch column and check it.

    Parameters
    ----------
    path : dotted path of a numeric field
    values : one value per row; choice fields take the choice names (or their indices)
    source, row_label, row_offset : how errors name the input and its rows, e.g. "grid.csv",
        "row", 1 for rows numbered from 1
    nan_is_empty : whether a float NaN leaves the field empty (a table's missing cell, as
        pandas holds it); False for values typed one by one (a grid, a range), where None or
        "none" does and NaN is refused. Text "nan" is refused either way.

    Returns
    -------
    numpy.ndarray
        float64 column (int8 choice indices for choice fields), bounds checked.
    """
    spec = resolve_path(path)
    raw = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=object)
    if raw.ndim != 1:
        # nested lists ([[0.6, 0.7], [0.8]]) are one item each, refused below as not a number:
        # flattened, [[0.6, 0.7]] would have become two rows without a word
        items = list(values) if raw.ndim else [values]
        raw = np.empty(len(items), dtype=object)
        for row, item in enumerate(items):
            raw[row] = item
    where = lambda row: _where(source, row, row_label, row_offset)  # noqa: E731
    if spec.kind == "choice":
        index = {name: i for i, name in enumerate(spec.choices)}
        out = np.empty(len(raw), dtype=np.int8)
        for row, value in enumerate(raw):  # choice columns are short lists of names
            if isinstance(value, int | np.integer) and 0 <= int(value) < len(spec.choices):
                out[row] = int(value)
            elif str(value) in index:
                out[row] = index[str(value)]
            else:
                raise BatchInputError(
                    f"{where(row)}: {path} = {value!r}: expected {spec.expected()}".lstrip(": ")
                )
        return out
    numbers = _to_float(raw, path, where)
    _refuse_nan(spec, raw, numbers, where, nan_is_empty)
    check_values(spec, numbers, source=source, row_label=row_label, row_offset=row_offset)
    return numbers


def given_column(path: str, values, *, row_label: str = "row") -> np.ndarray:
    """A column given from Python (`ScenarioBatch.repeat`) as batch values, vectorized.

    Numbers become float64 (the bounds are checked by `check_values`); choice fields take their
    names or their indices (int8). Text for a numeric field is refused, as load_scenario refuses
    "0.5" for a number: only text read from a table goes through `coerce_column`.
    """
    spec = resolve_path(path)
    raw = np.asarray(values)
    if raw.ndim == 0:
        raw = raw.reshape(1)
    kind = raw.dtype.kind
    where = lambda row: _where(None, row, row_label, 0)  # noqa: E731

    def refuse(row: int, expected: str):
        value = raw[row].item() if isinstance(raw[row], np.generic) else raw[row]
        raise BatchInputError(f"{where(row)}: {path} = {value!r}: expected {expected}")

    if spec.kind == "choice":
        if kind in "iu":
            bad = (raw < 0) | (raw >= len(spec.choices))
            if bad.any():
                refuse(int(np.flatnonzero(bad)[0]), f"{spec.expected()} (or its index)")
            return raw.astype(np.int8)
        if kind in "US":
            names, inverse = np.unique(raw, return_inverse=True)
            index = {name: i for i, name in enumerate(spec.choices)}
            for j, name in enumerate(names.tolist()):
                if name not in index:
                    refuse(int(np.flatnonzero(inverse.ravel() == j)[0]), spec.expected())
            return np.array([index[name] for name in names.tolist()], np.int8)[inverse.ravel()]
        return coerce_column(path, raw, row_label=row_label)  # mixed names and indices: few
    if kind in "iuf":
        return raw.astype(float)
    if kind == "O":
        text = np.frompyfunc(lambda v: isinstance(v, str | bytes | bool | np.bool_), 1, 1)
        flagged = text(raw).astype(bool)
        if not flagged.any():
            try:
                return raw.astype(float)  # None becomes NaN: absent, for an optional field
            except (TypeError, ValueError):
                pass
        for row, value in enumerate(raw):
            if flagged[row] or not isinstance(value, int | float | np.number | type(None)):
                noun = "text" if isinstance(value, str | bytes) else type(value).__name__
                refuse(row, f"{spec.expected()}, not {noun}")
    refuse(0, f"{spec.expected()}, not {'text' if kind in 'US' else f'{raw.dtype} values'}")


def _to_float(raw: np.ndarray, path: str, where) -> np.ndarray:
    # true/false are not numbers (numpy would take them for 1 and 0), as load_scenario says
    flat = raw.ravel()
    row = None
    if raw.dtype.kind in "bO":
        row = next((i for i, v in enumerate(flat) if isinstance(v, bool | np.bool_)), None)
    if row is not None:
        raise BatchInputError(
            f"{where(row)}: {path} = {str(bool(flat[row])).lower()}: expected a number, "
            "not true or false".lstrip(": ")
        )
    try:
        return raw.astype(float)
    except (TypeError, ValueError):
        pass
    out = np.empty(len(raw))
    for row, value in enumerate(raw):
        try:
            if isinstance(value, bool | np.bool_):
                raise TypeError
            empty = value is None or str(value).strip().lower() in ("", NONE_WORD)
            out[row] = math.nan if empty else float(value)
        except (TypeError, ValueError):
            raise BatchInputError(
                f"{where(row)}: {path} = {shortened(value)}: expected a number".lstrip(": ")
            ) from None
    return out


def _refuse_nan(spec: FieldSpec, raw: np.ndarray, numbers: np.ndarray, where, nan_is_empty):
    """Refuse a NaN that is not an empty cell: the text "nan" anywhere, and a float NaN where
    `nan_is_empty` is False. An empty value is None, "", "none" (NONE_WORD) or, where
    `nan_is_empty`, a float NaN: `--grid PATH=1.2,nan` removed an optional field (a DSCR
    covenant) without a word, where `--set PATH=nan` is refused."""
    empty = np.flatnonzero(np.isnan(numbers))
    if not empty.size or (nan_is_empty and raw.dtype.kind == "f"):
        return
    for row in empty.tolist():
        value = raw[row]
        if value is None or (isinstance(value, float | np.floating) and nan_is_empty):
            continue
        if isinstance(value, str) and value.strip().lower() in ("", NONE_WORD):
            continue
        shown = shortened(value) if isinstance(value, str) else "nan"
        expected = "a number" + (f", or {NONE_WORD} to leave the field empty" * spec.nullable)
        raise BatchInputError(
            f"{where(row)}: {spec.path} = {shown}: not a number (NaN); expected {expected}".lstrip(
                ": "
            )
        )


def check_values(
    spec: FieldSpec,
    values: np.ndarray,
    *,
    source: str | None = None,
    row_label: RowLabel = "row",
    row_offset: int = 0,
) -> None:
    """Raise BatchInputError at the first row whose value the field does not accept."""
    if spec.kind == "choice":
        bad = (values < 0) | (values >= len(spec.choices))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise BatchInputError(
                f"{_where(source, row, row_label, row_offset)}: {spec.path} = {values[row]!r}: "
                f"expected a choice index below {len(spec.choices)} ({', '.join(spec.choices)})"
            )
        return
    problems = [
        (~np.isfinite(values) & ~np.isnan(values), "a finite number"),
        (np.isnan(values) if not spec.nullable else np.zeros(values.shape, bool), None),
        (spec.outside(values), spec.expected()),
    ]
    if spec.kind == "int":
        problems.append(((values != np.round(values)) & np.isfinite(values), spec.expected()))
    for mask, expected in problems:
        if mask.any():
            rows = np.flatnonzero(mask)
            row = int(rows[0])
            value = values[row]
            if expected is None:
                expected = f"a value ({spec.expected()}); the field cannot be left empty"
            # counted in the label's word: a range's two ends are "values", not "rows"
            noun = f"{row_label}s" if isinstance(row_label, str) else "rows"
            more = f" ({len(rows):,} of {len(values):,} {noun})" if len(rows) > 1 else ""
            where = _where(source, row, row_label, row_offset)
            raise BatchInputError(
                f"{where}: {spec.path} = {_show(value)}: expected {expected}{more}".lstrip(": ")
            )


def _show(value) -> str:
    value = float(value)
    if math.isnan(value):
        return "empty (NaN)"
    return f"{value:g}" if abs(value) < 1e15 else repr(value)


def prepare_columns(base: Scenario, columns: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Columns ready for `ScenarioBatch.repeat`: the capex price given clears the other one.

    A scenario prices hardware per GPU or per system, never both; a sweep over
    `capex.gpu_price_usd` on a base priced per system means "price per GPU instead". Row by row:
    where the column given is empty (a tornado's runs that leave that price at the base's, none)
    the other keeps the base's value.
    """
    out = dict(columns)
    given = [p for p in PRICE_PATHS if p in out]
    if len(given) == 1:
        other = PRICE_PATHS[1 - PRICE_PATHS.index(given[0])]
        kept = _base_value(base, other)
        empty = np.isnan(np.asarray(out[given[0]], dtype=float))
        out[other] = np.where(empty, np.nan if kept is None else float(kept), np.nan)
    return out


def check_rules(
    base: Scenario,
    columns: Mapping[str, np.ndarray],
    n: int,
    *,
    source: str | None = None,
    row_label: RowLabel = "row",
    row_offset: int = 0,
) -> None:
    """Cross-field rules of the scenario models, on whole columns (base values where not given).

    Covers the rules overrides can break: one capex price, a contract price when GPUs are
    contracted, and ramps, throughput steps, purchase and retirement months within the horizon.
    """
    check_scenario(base, what="base")
    if not columns:
        return
    refuse_series_compiled(base, columns)

    def col(path: str) -> np.ndarray:
        if path in columns:
            return np.asarray(columns[path], dtype=float)
        value = _base_value(base, path)
        return np.full(n, np.nan if value is None else float(value))

    def fail(mask: np.ndarray, message) -> None:
        if mask.any():
            row = int(np.flatnonzero(mask)[0])
            where = _where(source, row, row_label, row_offset)
            raise BatchInputError(f"{where}: {message(row)}".lstrip(": "))

    gpu, system = col(PRICE_PATHS[0]), col(PRICE_PATHS[1])
    fail(
        np.isnan(gpu) == np.isnan(system),
        lambda r: (
            "give exactly one of capex.gpu_price_usd and capex.system_price_usd, got "
            f"capex.gpu_price_usd = {_show(gpu[r])}, capex.system_price_usd = {_show(system[r])}"
        ),
    )
    share, price = col("market.contract_share"), col("market.contract_usd_per_gpu_hour")
    fail(  # a scenario priced from a rental series has its first contract at the series' price
        (share > 0) & (price <= 0) & (base.market.rental_series is None),
        lambda r: (
            f"market.contract_share = {share[r]:g} but market.contract_usd_per_gpu_hour = "
            f"{price[r]:g}; expected a price above 0 for contracted GPUs"
        ),
    )
    _check_token_mix(base, col, fail)
    explicit = col("horizon_months")
    life_months = np.maximum(1, np.rint(col("depreciation.life_years") * 12))
    horizon = np.where(np.isnan(explicit), life_months, explicit)
    for path in ("fleet.deployment_ramp_months", "utilization.ramp_months"):
        months = col(path)
        fail(
            months > horizon,
            lambda r, p=path, m=months: (
                f"{p} = {m[r]:g} months, longer than the horizon of "
                f"{horizon[r]:g} months; expected a ramp that ends within the horizon"
            ),
        )
    last_step = max((s.month for s in base.throughput.steps), default=0)
    fail(
        last_step > horizon,
        lambda r: (
            f"the base scenario's throughput step at month {last_step} is beyond the "
            f"horizon of {horizon[r]:g} months (horizon_months / depreciation.life_years)"
        ),
    )
    if "fleet.purchase_month" in field_specs():
        purchase, retire = col("fleet.purchase_month"), col("fleet.retire_month")
        fail(
            purchase >= horizon,
            lambda r: (
                f"fleet.purchase_month = {purchase[r]:g}, at or after the end of the "
                f"horizon ({horizon[r]:g} months); expected a purchase before month {horizon[r]:g}"
            ),
        )
        fail(
            ~np.isnan(retire) & ((retire <= purchase) | (retire > horizon)),
            lambda r: (
                f"fleet.retire_month = {retire[r]:g}; expected a month after the purchase "
                f"month ({purchase[r]:g}) and no later than the horizon ({horizon[r]:g})"
            ),
        )


def _check_token_mix(base: Scenario, col, fail) -> None:
    """The token mix's rules (econ.scenario.market_models.Market, models._check_token_mix)."""
    price = col("market.input_price_usd_per_mtok")
    cached = col("market.cached_input_price_usd_per_mtok")
    hit = col("market.cache_hit_share")
    ratio = col("throughput.input_tokens_per_output_token")
    fail(
        (hit > 0) & np.isnan(cached),
        lambda r: (
            f"market.cache_hit_share = {hit[r]:g} but market.cached_input_price_usd_per_mtok is "
            "not set; expected the price of input tokens served from the cache"
        ),
    )
    fail(
        (cached > 0) & ~(price > 0),
        lambda r: (
            f"market.cached_input_price_usd_per_mtok = {cached[r]:g} but "
            f"market.input_price_usd_per_mtok = {price[r]:g}; expected an input price above 0"
        ),
    )
    fail(
        (price > 0) & (ratio == 0),
        lambda r: (
            f"market.input_price_usd_per_mtok = {price[r]:g} but "
            "throughput.input_tokens_per_output_token = 0; expected a ratio above 0"
        ),
    )
    from_source = base.throughput.measured is not None or base.throughput.simulated is not None
    fail(
        (price > 0) & np.isnan(ratio) & (not from_source),
        lambda r: (
            f"market.input_price_usd_per_mtok = {price[r]:g} but "
            "throughput.input_tokens_per_output_token is not set and the throughput is a fixed "
            "figure; expected the input tokens served per output token"
        ),
    )


def _base_value(base: Scenario, path: str):
    node: object = base
    for part in path.split("."):
        if node is None:  # a field of an optional section the base leaves out
            return None
        node = getattr(node, part)
    if isinstance(node, str):  # a choice: its index, as in a batch
        return field_specs()[path].choices.index(node)
    return node


def row_overrides(columns: Mapping[str, np.ndarray], row: int) -> dict[str, object]:
    """Plain {path: value} of one row (choice names, ints, None for absent)."""
    specs = field_specs()
    out: dict[str, object] = {}
    for path, values in columns.items():
        spec = specs[path]
        value = values[row]
        if spec.kind == "choice":
            out[path] = spec.choices[int(value)]
        elif np.isnan(value):
            out[path] = None
        elif spec.kind == "int":
            out[path] = int(value)
        else:
            out[path] = float(value)
    return out


def validate_rows(
    base: Scenario,
    columns: Mapping[str, np.ndarray],
    rows: Iterable[int],
    *,
    source: str | None = None,
    row_label: RowLabel = "row",
    row_offset: int = 0,
) -> None:
    """Full pydantic validation of some rows: the backstop for rules not mirrored above."""
    if not columns:
        return
    data = base.model_dump(mode="python")
    for row in rows:
        item = _deep_copy(data)
        for path, value in row_overrides(columns, row).items():
            node = item
            *parents, leaf = path.split(".")
            for part in parents:
                if node.get(part) is None:  # an optional section the base leaves out
                    node[part] = {}
                node = node[part]
            node[leaf] = value
        try:
            Scenario.model_validate(item)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in err["loc"])
            message = err["msg"].removeprefix("Value error, ")
            where = _where(source, row, row_label, row_offset)
            value = err.get("input")
            if isinstance(value, dict):  # a rule over a whole table: its message names the fields
                field = f"{loc}: " if loc else ""
            else:
                field = f"{loc} = {value!r}: " if loc and "input" in err else ""
            raise BatchInputError(f"{where}: {field}{message}".lstrip(": ")) from None


def _deep_copy(value):
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


def check_columns(
    base: Scenario,
    columns: Mapping[str, np.ndarray],
    n: int,
    *,
    source: str | None = None,
    row_label: RowLabel = "row",
    row_offset: int = 0,
    sample_rows: int = 8,
) -> None:
    """All checks of overridden columns: values, cross-field rules, pydantic on sample rows.

    `sample_rows` rows, spread evenly over the n rows, also go through the pydantic models.
    """
    where = {"source": source, "row_label": row_label, "row_offset": row_offset}
    columns = prepare_columns(base, columns)
    for path, values in columns.items():
        check_values(resolve_path(path, what="column"), np.asarray(values), **where)
    check_rules(base, columns, n, **where)
    if sample_rows and n:
        rows = np.unique(np.linspace(0, n - 1, min(sample_rows, n)).astype(int))
        validate_rows(base, columns, rows.tolist(), **where)
