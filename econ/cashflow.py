"""Cash-flow identities of a projection's monthly ledger (docs/methodology.md: outflows
negative)."""

from __future__ import annotations


def project_cash_flow_usd(ebitda_usd, capex_usd, proceeds_usd, income_tax_usd):
    """Unlevered (project) cash flow: EBITDA - capex + sale proceeds - income tax paid [USD].

    Tax is the tax the project pays with its interest deducted, as in the engine's ledger.
    """
    return ebitda_usd - capex_usd + proceeds_usd - income_tax_usd


def equity_cash_flow_usd(project_cash_flow, financing_cash_flow_usd):
    """Levered (equity) cash flow: project cash flow plus the financing cash flow (debt drawn
    less fees, capped calls, cash interest and principal repaid, including any repaid when the
    projection ends) [USD]."""
    return project_cash_flow + financing_cash_flow_usd


def cash_flow_available_for_debt_service_usd(ebitda_usd, income_tax_usd):
    """CFADS: EBITDA less income tax paid [USD] (the numerator of the DSCR)."""
    return ebitda_usd - income_tax_usd


def net_income_usd(pre_tax_income_usd, income_tax_usd, deferred_tax_expense_usd):
    """Net income: pre-tax income less current and deferred tax expense [USD] (ASC 740)."""
    return pre_tax_income_usd - income_tax_usd - deferred_tax_expense_usd
