#!/bin/bash
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/*, or called from your prolog): reads the
# job's GPUs' energy counters from this node's wattlab exporter into WATTLAB_SPOOL (docs/deploy.md).
# Settings: /etc/wattlab/slurm.env (or the file WATTLAB_SLURM_ENV names), sourced if present.
# Always exits 0: a failing Prolog drains the node; a failed reading is reported by the epilog.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
conf=${WATTLAB_SLURM_ENV:-/etc/wattlab/slurm.env}
if [ -r "$conf" ]; then set -a; . "$conf"; set +a; fi
spool=${WATTLAB_SPOOL:-/var/spool/wattlab}
mkdir -p "$spool" 2>/dev/null
python3 "$here/wattlab_job_energy.py" begin >>"$spool/wattlab-slurm.log" 2>&1
exit 0
