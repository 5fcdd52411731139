#!/bin/sh
# Copies the Triton Mamba-2 kernels of state-spaces/mamba (Apache-2.0) from a
# checkout or bare snapshot of that repository into .devbench/ (git-ignored),
# without the package's CUDA-extension imports, for mamba2_kernels.py.
# Usage: tools/devbench/setup.sh /path/to/state-spaces/mamba/.git [REV]
set -eu
repo=$1
rev=${2:-HEAD}
dst=.devbench/mamba_ssm
mkdir -p "$dst/ops/triton" "$dst/utils"
: >"$dst/__init__.py"
: >"$dst/ops/__init__.py"
for f in __init__ ssd_bmm ssd_chunk_scan ssd_chunk_state ssd_state_passing ssd_combined \
	selective_state_update layernorm_gated k_activations softplus; do
	git -C "$repo" show "$rev:mamba_ssm/ops/triton/$f.py" >"$dst/ops/triton/$f.py"
done
for f in __init__ torch determinism; do
	git -C "$repo" show "$rev:mamba_ssm/utils/$f.py" >"$dst/utils/$f.py"
done
git -C "$repo" rev-parse "$rev" >.devbench/mamba_ssm.rev
