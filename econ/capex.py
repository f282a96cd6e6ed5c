"""Capital cost of a GPU fleet: what is paid at purchase and capitalized."""

from __future__ import annotations

import numpy as np


def capex_usd_per_gpu(
    hardware_usd_per_gpu,
    networking_usd_per_gpu=0.0,
    storage_usd_per_gpu=0.0,
    installation_usd_per_gpu=0.0,
    spares_share=0.0,
):
    """Capitalized cost per GPU [USD/GPU].

    Hardware plus its spares, network fabric, storage and installation. Installation and integration
    are capitalized (ASC 360-10-30: costs to bring an asset to working condition), so they are
    depreciated with the hardware, never expensed nor left out.

    Parameters
    ----------
    hardware_usd_per_gpu : numeric  GPU price including its share of the server [USD/GPU]
    networking_usd_per_gpu, storage_usd_per_gpu, installation_usd_per_gpu : numeric  [USD/GPU]
    spares_share : numeric  spares bought as a share of hardware cost [fraction]
    """
    hardware = np.asarray(hardware_usd_per_gpu, dtype=float)
    return (
        hardware * (1.0 + np.asarray(spares_share, dtype=float))
        + networking_usd_per_gpu
        + storage_usd_per_gpu
        + installation_usd_per_gpu
    )


def hardware_usd_per_gpu(gpu_price_usd, system_price_usd, gpus_per_system):
    """Hardware price per GPU from a per-GPU price, or a system price where that is NaN [USD/GPU]."""
    gpu_price = np.asarray(gpu_price_usd, dtype=float)
    per_system = np.asarray(system_price_usd, dtype=float) / np.asarray(
        gpus_per_system, dtype=float
    )
    return np.where(np.isnan(gpu_price), per_system, gpu_price)
