"""Deferred income tax from book-tax differences of an asset, vectorized over scenarios.

This module owns the temporary difference between the asset's book carrying amount and its tax
basis, the deferred tax liability it creates (ASC 740-10-25-20 and 30-2; IAS 12.15), the monthly
deferred tax expense, and the unused tax losses carried forward (the deferred tax asset of
ASC 740-10-25-29, IAS 12.34). The current (cash) tax with losses carried forward is in
:mod:`econ.tax`.

Monthly arrays are ``(n, T)`` over months ``0..T-1``; annual arrays ``(n, Y)``; rates ``(n,)``.

Identity the tests check: with ``TD`` the temporary difference and ``NOL`` the unused losses,
``current tax + rate · ΔTD - rate · ΔNOL = rate · book pre-tax income`` in every tax year, i.e. the
total tax expense is the statutory rate times book income when no valuation allowance is needed.

References
----------
.. [1] FASB ASC 740-10 (Income Taxes): 25-20 (temporary differences), 30-2 and 30-8 (measurement
   at the enacted rate), 25-29 (deferred tax assets for carryforwards).
.. [2] IASB IAS 12 *Income Taxes*, paragraphs 5, 15, 34, 47.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from econ.arrays import add_at_months, cumsum_months, snap_to_zero
from econ.errors import InputError
from econ.tax import annual_sums, income_taxed_to_date_usd

__all__ = [
    "VALUATION_ALLOWANCES",
    "DeferredTax",
    "DeferredTaxError",
    "deferred_tax",
    "deferred_tax_with_losses",
    "loss_carryforward_usd",
]

VALUATION_ALLOWANCES = ("none", "beyond_reversing_liabilities")
"""Valuation allowance policies for the deferred tax asset of losses carried forward (codes 0, 1)."""


class DeferredTaxError(InputError):
    """Invalid deferred tax input: names the argument, the value and what was expected."""


@dataclass(frozen=True)
class DeferredTax:
    """Deferred tax of an asset, monthly.

    Attributes (arrays (n, T)) [USD]
    ----------
    temporary_difference_usd : book carrying amount less tax basis at the end of each month;
        positive (tax depreciation ahead of book) is a taxable temporary difference
    liability_usd : deferred tax liability, ``rate · temporary difference``; negative is a
        deferred tax asset
    expense_usd : deferred tax expense of the month, the change in the liability; negative is a
        deferred tax benefit
    losses_unused_usd : array (n,) or None  tax losses carried forward and still unused after the
        last month (deferred_tax_with_losses; None where losses are not counted)
    """

    temporary_difference_usd: np.ndarray
    liability_usd: np.ndarray
    expense_usd: np.ndarray
    losses_unused_usd: np.ndarray | None = None


def _monthly(x, name: str, shape=None, finite=True) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim != 2:
        raise DeferredTaxError(f"{name} must be an array (n, T) of months, got shape {a.shape}")
    if shape is not None and a.shape != shape:
        raise DeferredTaxError(f"{name} must have shape {shape}, got {a.shape}")
    if finite and not np.all(np.isfinite(a)):
        raise DeferredTaxError(f"{name} must hold finite amounts [USD]")
    return a


def deferred_tax(
    book_depreciation_usd,
    tax_depreciation_usd,
    tax_rate,
    *,
    book_gain_usd=None,
    tax_gain_usd=None,
    impairment_usd=None,
) -> DeferredTax:
    """Deferred tax liability and expense from book and tax depreciation [USD, arrays (n, T)].

    The asset starts with equal book cost and tax basis, so the temporary difference at the end of
    month ``m`` is

        TD_m = Σ_{j<=m} (tax depreciation_j - book depreciation_j - impairment_j
                         + book gain_j - tax gain_j)

    (an impairment lowers the carrying amount but is not deductible until disposal; at disposal
    the book and tax gains differ by exactly the TD then, so it returns to 0). The liability is
    ``rate · TD_m`` and the deferred tax expense of month ``m`` its change, at the enacted rate
    (ASC 740-10-30-8). The rate is constant over the schedule.

    Parameters
    ----------
    book_depreciation_usd, tax_depreciation_usd : arrays (n, T)  [USD]
    tax_rate : array (n,)  income tax rate [fraction, 0 <= rate < 1]
    book_gain_usd, tax_gain_usd : arrays (n, T) or None  gain on disposal (negative = loss) in the
        books and for tax [USD]; both or neither
    impairment_usd : array (n, T) or None  book impairment losses, negative for reversals [USD]

    Returns
    -------
    DeferredTax
    """
    book = _monthly(book_depreciation_usd, "book_depreciation_usd")
    tax = _monthly(tax_depreciation_usd, "tax_depreciation_usd", book.shape)
    n = book.shape[0]
    rate = np.asarray(tax_rate, dtype=float)
    try:
        rate = np.broadcast_to(rate, (n,))
    except ValueError:
        raise DeferredTaxError(
            f"tax_rate must be a scalar or one rate per scenario ({n}), got shape {rate.shape}"
        ) from None
    bad = ~((rate >= 0) & (rate < 1))
    if bad.any():
        raise DeferredTaxError(
            f"tax_rate = {float(rate[bad][0]):g}: expected a rate from 0 to below 1 [fraction]"
        )
    if (book_gain_usd is None) != (tax_gain_usd is None):
        raise DeferredTaxError(
            "give both book_gain_usd and tax_gain_usd (the same sale in the books and for tax) "
            "or neither"
        )
    change = tax - book
    if impairment_usd is not None:
        change = change - _monthly(impairment_usd, "impairment_usd", book.shape)
    if book_gain_usd is not None:
        change = (
            change
            + _monthly(book_gain_usd, "book_gain_usd", book.shape)
            - _monthly(tax_gain_usd, "tax_gain_usd", book.shape)
        )
    difference = cumsum_months(change)
    liability = rate[:, None] * difference
    expense = np.diff(liability, axis=1, prepend=0.0)
    return DeferredTax(difference, liability, expense)


def loss_carryforward_usd(annual_taxable_usd, loss_limit=None):
    """Tax losses carried forward and not yet used at the end of each year [USD, array (n, Y)].

    With ``C_k`` the cumulative taxable income to the end of year ``k`` and ``T_k`` the income
    taxed so far (:func:`econ.tax.income_taxed_to_date_usd`: ``max(0, max_{j<=k} C_j)`` without
    a loss limit), the loss still available is ``T_k - C_k``. Times the tax rate it is the
    deferred tax asset for the carryforward (ASC 740-10-25-29; IAS 12.34), before any valuation
    allowance.

    Parameters
    ----------
    annual_taxable_usd : array (n, Y)  taxable income of each year, losses negative [USD]
    loss_limit : array (n,) or None  share of a year's income the losses may offset (the US 80%
        limit, IRC §172(a)(2)); None: no limit
    """
    taxable = np.asarray(annual_taxable_usd, dtype=float)
    if taxable.ndim != 2:
        raise DeferredTaxError(
            f"annual_taxable_usd must be an array (n, Y) of years, got shape {taxable.shape}"
        )
    return income_taxed_to_date_usd(taxable, loss_limit) - cumsum_months(taxable)


def deferred_tax_with_losses(
    book_pre_tax_income_usd, taxable_income_usd, tax_rate, last_month, allowance=0, loss_limit=None
):
    """Current and deferred tax expense under ASC 740, losses carried forward included [USD].

    The net deferred tax liability at the end of each tax year y is

        DTL_y = rate * TD_y - rate * NOL_y + VA_y

    with TD the temporary difference (the running sum of book pre-tax income less taxable income:
    tax depreciation ahead of book, an impairment not yet deductible), NOL the losses carried
    forward and not yet used (:func:`loss_carryforward_usd`) and VA the valuation allowance. With
    no allowance (code 0: realization more likely than not, ASC 740-10-30-5(e)) the year's tax
    expense, current plus deferred, is the statutory rate times book pre-tax income, as it must
    be with no permanent differences. With ``beyond_reversing_liabilities`` (code 1) the asset
    is recognized only up to the liability of the taxable temporary differences whose reversal
    will absorb the losses (ASC 740-10-30-18(a)): VA_y = max(0, rate NOL_y - L max(0, rate TD_y)),
    L the loss limit (1 without one): under the US 80% limit the reversals are taxable income the
    losses may offset only up to L of (PwC, Income taxes guide, 5.5 and Example TX 5-5; Deloitte,
    Roadmap: Income Taxes, 5.3).

    Month by month, the current tax expense is rate * taxable income_m, plus in each year's last
    month rate * (NOL_y - NOL_{y-1}), so that it sums to the year's tax due; the deferred expense
    is rate * (book - taxable)_m, less that NOL change and plus the allowance's change in the
    year's last month. So the total expense is rate * book pre-tax income in every month but the
    year ends of a year whose allowance changes, and the liability (the deferred expense's running
    sum) is DTL_y at every year end.

    Parameters
    ----------
    book_pre_tax_income_usd, taxable_income_usd : arrays (n, T)  0 after `last_month` [USD]
    tax_rate : array (n,)  [fraction, 0 <= rate < 1]
    last_month : int array (n,)  final month of each projection
    allowance : int array (n,) or int  index into VALUATION_ALLOWANCES
    loss_limit : array (n,) or None  as :func:`loss_carryforward_usd`

    Returns
    -------
    current_tax_expense_usd : array (n, T)
    DeferredTax  (temporary difference, net liability, deferred expense; arrays (n, T); the
        losses still unused after the last year, (n,))
    """
    # Amounts that overflowed (inf, NaN from extreme inputs) pass through: the engine names the
    # metrics they make undefined (econ.undefined).
    book = _monthly(book_pre_tax_income_usd, "book_pre_tax_income_usd", finite=False)
    taxable = _monthly(taxable_income_usd, "taxable_income_usd", book.shape, finite=False)
    n, months = book.shape
    rate = np.broadcast_to(np.asarray(tax_rate, dtype=float), (n,))[:, None]
    nol = loss_carryforward_usd(annual_sums(taxable), loss_limit)
    years = nol.shape[1]
    year_end = np.minimum(
        np.minimum(12 * np.arange(1, years + 1)[None, :], np.asarray(last_month)[:, None]),
        months - 1,
    )
    nol_change = np.zeros((n, months))
    add_at_months(nol_change, year_end, rate * np.diff(nol, axis=1, prepend=0.0))
    current = rate * taxable + nol_change
    book_less_taxable = book - taxable
    deferred = rate * book_less_taxable - nol_change
    difference = cumsum_months(book_less_taxable)
    code = np.broadcast_to(np.asarray(allowance), (n,))
    if np.any(code == 1):
        td_end = np.take_along_axis(difference, year_end, axis=1)
        # the reversals are income the losses may offset only up to the loss limit's share
        share = 1.0 if loss_limit is None else np.broadcast_to(loss_limit, (n,))[:, None]
        reversing = share * np.maximum(rate * td_end, 0.0)
        va = np.maximum(rate * nol - reversing, 0.0) * (code == 1)[:, None]
        add_at_months(deferred, year_end, np.diff(va, axis=1, prepend=0.0))
    # (a liability that is 0 in exact arithmetic is 0, not 3e-10 USD)
    liability = snap_to_zero(cumsum_months(deferred))
    return current, DeferredTax(difference, liability, deferred, nol[:, -1])
