#!/bin/bash
# Slurm Epilog: reads the job's GPUs' energy counters again and writes the job's GPU energy on this
# node, with its uncertainty, to WATTLAB_JOB_DIR/JOB_ID/NODE.json (docs/deploy.md). The job's total
# across nodes: wattlab_job_energy.py total WATTLAB_JOB_DIR/JOB_ID.
# Settings: /etc/wattlab/slurm.env (or the file WATTLAB_SLURM_ENV names), sourced if present.
# Always exits 0: a failing Epilog drains the node; what went wrong is in the result file.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
conf=${WATTLAB_SLURM_ENV:-/etc/wattlab/slurm.env}
if [ -r "$conf" ]; then set -a; . "$conf"; set +a; fi
spool=${WATTLAB_SPOOL:-/var/spool/wattlab}
mkdir -p "$spool" 2>/dev/null
python3 "$here/wattlab_job_energy.py" end >>"$spool/wattlab-slurm.log" 2>&1
exit 0
