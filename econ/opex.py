"""Operating costs other than power and the facility: staff, maintenance, insurance, software,
and selling, general and administrative costs (SG&A)."""

from __future__ import annotations

import numpy as np

from econ.units import nominal_monthly_rate


def _col(values):
    return np.asarray(values, dtype=float)[:, None]


def opex_usd_per_month(
    staff_usd_per_month,
    staffed,
    maintenance_share_of_capex_annual,
    insurance_share_of_capex_annual,
    capex_usd,
    in_service,
    gpus_in_service,
    software_usd_per_gpu_month,
    warranty_months=0,
    service_start_month=0,
):
    """Monthly operating cost of a fleet [USD/month, array (n, T)].

        opex_m = S * staffed_m + K / 12 * (s_maint * [m >= m_0 + W] + s_ins) * service_m + N_m * w

    Staff S are paid in the months given (the engine's: from the site's opening to the fleet's
    last month in service, so not once every GPU is retired); maintenance and insurance are annual
    shares of the capitalized cost K (a nominal annual rate, charged as a twelfth each month in
    service); software w is paid per GPU in service N_m. Maintenance starts when the vendor's
    warranty of W months, counted from the first month in service m_0, has run out: repairs under
    warranty cost the owner nothing, and a support contract is bought after it (W = 0: from the
    first month).

    Parameters
    ----------
    staff_usd_per_month : array (n,)  [USD/month]
    staffed, in_service : bool arrays (n, T)  months the staff are paid, months the GPUs serve
    maintenance_share_of_capex_annual, insurance_share_of_capex_annual : arrays (n,)  [fraction/year]
    capex_usd : array (n,)  capitalized cost of the GPUs [USD]
    gpus_in_service : array (n, T)  [GPUs]
    software_usd_per_gpu_month : array (n,)  [USD/GPU-month]
    warranty_months : array (n,) or scalar  W, months of warranty from the first month in service
        [months]
    service_start_month : int array (n,) or scalar  m_0, each fleet's first month in service
        [month index]
    """
    maintenance = np.asarray(maintenance_share_of_capex_annual, dtype=float)
    insurance = np.asarray(insurance_share_of_capex_annual, dtype=float)
    warranty = np.broadcast_to(np.asarray(warranty_months, dtype=float), maintenance.shape)
    capex = np.asarray(capex_usd, dtype=float)
    cost = _col(staff_usd_per_month) * staffed + gpus_in_service * _col(software_usd_per_gpu_month)
    covered = (warranty > 0) & (maintenance > 0)
    if not covered.any():  # maintenance from the first month in service: one share
        return cost + _col(nominal_monthly_rate(maintenance + insurance) * capex) * in_service
    months = np.arange(np.shape(in_service)[-1])[None, :]
    first_paid = np.broadcast_to(np.asarray(service_start_month), maintenance.shape) + warranty
    share = _col(nominal_monthly_rate(insurance)) + _col(nominal_monthly_rate(maintenance)) * (
        months >= first_paid[:, None]
    )
    return cost + _col(capex) * share * in_service


def sga_usd_per_month(revenue_usd, sga_share_of_revenue):
    """Selling, general and administrative costs as a share of revenue [USD/month, array (n, T)].

        SGA_m = a * R_m

    Parameters
    ----------
    revenue_usd : array (n, T)  revenue of each month [USD/month]
    sga_share_of_revenue : array (n,)  a, a share of revenue [fraction, 0 <= a < 1]
    """
    return np.asarray(revenue_usd, dtype=float) * _col(sga_share_of_revenue)
