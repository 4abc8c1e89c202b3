"""A five-row, one-feature linear-SVM data set shared by the driver's tests."""
import jax.numpy as jnp

from regbayes.potentials import SVMData

N_ROWS = 5


def make_data():
    return SVMData(
        X=jnp.asarray([[1.0], [0.4], [-0.7], [1.5], [-0.3]], jnp.float32),
        y=jnp.asarray([1.0, 1.0, 1.0, -1.0, -1.0], jnp.float32),
        C=jnp.asarray(2.0, jnp.float32),
        margin=jnp.asarray(1.0, jnp.float32),
        prior_scale=jnp.asarray(2.0, jnp.float32),
    )
