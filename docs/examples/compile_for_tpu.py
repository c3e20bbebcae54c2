"""Compiles a JAX function for a TPU topology on a machine without TPUs and
writes the optimized HLO that tpusim reads (docs/ci.md).

Needs `pip install "jax[tpu]"` (which brings libtpu); no TPU is attached.

    python3 compile_for_tpu.py --topology v5e:2x2 --out hlo/mlp.hlo
"""
import argparse
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import topologies
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def mlp(x, w1, w2):
    return jnp.dot(jax.nn.relu(jnp.dot(x, w1)), w2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--topology", default="v5e:2x2",
                        help="TPU topology name, e.g. v5e:2x2, v4:2x2x1, tpu7x:2x2x1")
    parser.add_argument("--out", required=True, type=pathlib.Path)
    args = parser.parse_args()

    # The devices of a TPU slice that is described, not attached.
    topology = topologies.get_topology_desc(topology_name=args.topology, platform="tpu")
    mesh = Mesh(np.array(topology.devices), ("data",))
    batch = NamedSharding(mesh, P("data", None))
    replicated = NamedSharding(mesh, P())

    shapes = (
        jax.ShapeDtypeStruct((8 * len(topology.devices), 512), jnp.bfloat16, sharding=batch),
        jax.ShapeDtypeStruct((512, 2048), jnp.bfloat16, sharding=replicated),
        jax.ShapeDtypeStruct((2048, 512), jnp.bfloat16, sharding=replicated),
    )
    compiled = jax.jit(mlp).lower(*shapes).compile()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(compiled.as_text())  # HLO after XLA's TPU optimizations


if __name__ == "__main__":
    main()
