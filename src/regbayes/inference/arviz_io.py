"""The one place that talks to ArviZ's API (it is being reorganised: keep changes here)."""
from __future__ import annotations

import numpy as np

from .result import SampleResult


#: ``SampleResult.stats`` fields stored under ArviZ's conventional name.
ARVIZ_NAMES = {"acceptance": "acceptance_rate"}


def to_inference_data(result: SampleResult, var_name: str = "eta", dims=None, coords=None):
    """An :class:`arviz.InferenceData` with the draws and ``sample_stats``: ``step_size``
    and every field the kernel recorded (``result.stats``: its potential, thermostat,
    ... ; ``acceptance`` as ArviZ's ``acceptance_rate``)."""
    import arviz as az

    n_chains, n_draws = result.positions.shape[:2]
    stats = {"step_size": np.broadcast_to(result.step_size, (n_chains, n_draws)).copy()}
    stats.update({ARVIZ_NAMES.get(name, name): np.asarray(values) for name, values in result.stats.items()})
    return az.from_dict(
        posterior={var_name: result.positions},
        sample_stats=stats,
        dims=dims,
        coords=coords,
    )


def diagnostics(idata, var_name: str = "eta") -> dict:
    """Minimum bulk ESS and maximum rank-normalised R-hat over all coordinates of ``var_name``.

    R-hat needs at least two chains and is NaN otherwise.
    """
    import arviz as az

    ess = az.ess(idata, var_names=[var_name])[var_name].values
    n_chains = idata.posterior.sizes["chain"]
    rhat = az.rhat(idata, var_names=[var_name])[var_name].values if n_chains > 1 else np.array(np.nan)
    return {"min_ess": float(np.nanmin(ess)), "max_rhat": float(np.nanmax(rhat)) if n_chains > 1 else float("nan")}
