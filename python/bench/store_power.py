"""Power readings of a wattlab store (SQLite), integrated the way the meter's timeline holds them."""
import bisect


def sample_buffer(db, run):
    """(times_ns, watts) of a run's driver sample-buffer readings of domain 0, in time order."""
    rows = db.execute("select t_ns, value from readings where run_id=? and domain_index=0"
                      " and kind='power_sample_w' order by t_ns", (run,)).fetchall()
    return [t for t, _ in rows], [v for _, v in rows]


def hold_back(times_ns, watts, a_ns, b_ns):
    """Energy (J) and covered time (ns) over [a, b]; sample i covers (t[i-1], t[i]]."""
    energy_j, covered_ns = 0.0, 0
    i = max(bisect.bisect_right(times_ns, a_ns), 1)
    while i < len(times_ns) and times_ns[i - 1] < b_ns:
        lo, hi = max(times_ns[i - 1], a_ns), min(times_ns[i], b_ns)
        if hi > lo:
            energy_j += watts[i] * (hi - lo) * 1e-9
            covered_ns += hi - lo
        i += 1
    return energy_j, covered_ns
