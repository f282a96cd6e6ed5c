"""Operating costs other than power and the facility: staff, maintenance, insurance, software,
and selling, general and administrative costs (SG&A)."""

from __future__ import annotations

import numpy as np

from econ.units import nominal_monthly_rate


def _col(values):
    return np.asarray(values, dtype=float)[:, None]


def opex_usd_per_month(
    staff_usd_per_month,
    site_open,
    maintenance_share_of_capex_annual,
    insurance_share_of_capex_annual,
    capex_usd,
    in_service,
    gpus_in_service,
    software_usd_per_gpu_month,
):
    """Monthly operating cost of a fleet [USD/month, array (n, T)].

        opex_m = S * open_m + (s_maint + s_ins) / 12 * K * service_m + N_m * w

    Staff S are paid while the site is open; maintenance and insurance are annual shares of the
    capitalized cost K (a nominal annual rate, charged as a twelfth each month in service); software
    w is paid per GPU in service N_m.

    Parameters
    ----------
    staff_usd_per_month : array (n,)  [USD/month]
    site_open, in_service : bool arrays (n, T)  months the site is open, months the GPUs serve
    maintenance_share_of_capex_annual, insurance_share_of_capex_annual : arrays (n,)  [fraction/year]
    capex_usd : array (n,)  capitalized cost of the GPUs [USD]
    gpus_in_service : array (n, T)  [GPUs]
    software_usd_per_gpu_month : array (n,)  [USD/GPU-month]
    """
    share_monthly = nominal_monthly_rate(
        np.asarray(maintenance_share_of_capex_annual, dtype=float) + insurance_share_of_capex_annual
    )
    return (
        _col(staff_usd_per_month) * site_open
        + _col(share_monthly * capex_usd) * in_service
        + gpus_in_service * _col(software_usd_per_gpu_month)
    )


def sga_usd_per_month(revenue_usd, sga_share_of_revenue):
    """Selling, general and administrative costs as a share of revenue [USD/month, array (n, T)].

        SGA_m = a * R_m

    Parameters
    ----------
    revenue_usd : array (n, T)  revenue of each month [USD/month]
    sga_share_of_revenue : array (n,)  a, a share of revenue [fraction, 0 <= a < 1]
    """
    return np.asarray(revenue_usd, dtype=float) * _col(sga_share_of_revenue)
