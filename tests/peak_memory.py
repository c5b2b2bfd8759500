"""The start of a child script that measures peak memory: ``growth(run)`` is the peak RSS while ``run()``
runs, over the RSS before it (bytes; Linux ``/proc``), with Dask's blocks and threads as on 2 cores.
``child_result`` runs such a script in a fresh interpreter and reads what it prints last."""

import json
import subprocess
import sys

PRELUDE = '''
import gc, json, resource, sys
import dask
import numpy as np, xarray as xr
import xcorrstat

dask.system.CPU_COUNT = 2  # blocks and threads as on a 2-core machine, whatever this one has
dask.config.set(num_workers=2)

def status(key):  # KiB
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":"))

def growth(run):
    """Peak RSS while ``run()`` runs, over the RSS before it (bytes)."""
    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak (VmHWM, ru_maxrss's counterpart) restarts from the current RSS
    before = status("VmRSS")
    run()
    return (status("VmHWM") - before) * 1024
'''


def child_result(code, budget, timeout=600):
    """The JSON of the last line printed by a fresh interpreter running ``code`` with ``budget`` as its argument."""
    proc = subprocess.run([sys.executable, "-c", code, str(budget)], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])
