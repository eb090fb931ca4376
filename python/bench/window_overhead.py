"""What opening and closing a window costs from Python: the median and p99 of one
`with m.window(...)` (open + close through ctypes, on the caller's thread, timer included), of
`m.open()` + `w.close()`, and of the Zeus face's begin_window + end_window, against a 5 us budget
for the median. The meter runs on real time (its sampler thread reading the simulated GPU unless
--device says otherwise).

    WATTLAB_LIBRARY=build/release/src/capi/libwattlab.so.1 python3 python/bench/window_overhead.py
Exit status 0: PASS (every median within budget), 1: FAIL.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import wattlab  # noqa: E402
from wattlab.zeus import ZeusMonitor  # noqa: E402

BUDGET_US = 5.0


def quantiles(samples_ns):
    s = sorted(samples_ns)
    return s[len(s) // 2] / 1e3, s[min(len(s) - 1, int(len(s) * 0.99))] / 1e3


def time_each(fn, n):
    clock = time.perf_counter_ns
    out = [0] * n
    for i in range(n):
        t0 = clock()
        fn()
        out[i] = clock() - t0
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="sim")
    ap.add_argument("-n", type=int, default=100_000, help="windows per variant")
    ap.add_argument("--warmup", type=int, default=10_000)
    args = ap.parse_args()

    zeus = ZeusMonitor(devices=args.device)
    m = zeus.meter

    def with_window():
        with m.window("step"):
            pass

    def open_close():
        m.open("step").close()

    def zeus_window():
        zeus.begin_window("step", sync_execution=False)
        zeus.end_window("step", sync_execution=False)

    print(f"wattlab {wattlab.library_version()} ({wattlab.library_path()}), Python {sys.version.split()[0]}, "
          f"{m!r}, {args.n} windows per variant")
    ok = True
    for label, fn in (("with m.window()", with_window), ("m.open().close()", open_close),
                      ("zeus begin/end_window", zeus_window)):
        time_each(fn, args.warmup)
        med, p99 = quantiles(time_each(fn, args.n))
        verdict = "PASS" if med <= BUDGET_US else "FAIL"
        ok = ok and med <= BUDGET_US
        print(f"{label:24s} median {med:6.2f} us  p99 {p99:6.2f} us  {verdict} (median <= {BUDGET_US:g} us)")
    zeus.close()
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
