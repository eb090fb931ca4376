"""A window's result as plain Python data: per domain energy ± its 95 % uncertainty, the gain
systematic, the estimator, mean and peak power, telemetry and issues; SIMULATED when it is."""
import ctypes
import math


class Issue:
    """One issue on a domain's energy: a stable code ("shorter_than_update") and its text."""

    __slots__ = ("code", "text")

    def __init__(self, code, text):
        self.code = code
        self.text = text

    def to_dict(self):
        return {"code": self.code, "text": self.text}

    def __repr__(self):
        return f"Issue({self.code!r}, {self.text!r})"

    def __eq__(self, other):
        return isinstance(other, Issue) and (self.code, self.text) == (other.code, other.text)


class DomainResult:
    """The energy of one domain ("gpu:0", "cpu:0/package") over one window."""

    __slots__ = ("domain", "parent", "simulated", "available", "energy_j", "uncertainty_j", "systematic_j",
                 "mean_power_w", "peak_power_w", "estimator", "cross_check_j", "readings_used", "issues",
                 "telemetry")

    def to_dict(self):
        d = {k: getattr(self, k) for k in self.__slots__}
        d["issues"] = [i.to_dict() for i in self.issues]
        d["telemetry"] = dict(self.telemetry)
        return d

    def __repr__(self):
        tag = " SIMULATED" if self.simulated else ""
        if not self.available:
            why = "; ".join(i.text for i in self.issues) or "no estimate"
            return f"<{self.domain}: no estimate ({why}){tag}>"
        return (f"<{self.domain}: {self.energy_j:.3f} J ± {self.uncertainty_j:.3f} J (gain ± {self.systematic_j:.3f} J), "
                f"mean {self.mean_power_w:.1f} W, peak {self.peak_power_w:.1f} W, {self.estimator}{tag}>")


def _text(b):
    return b.decode("utf-8", "replace") if b is not None else ""


def _number(x):
    return None if math.isnan(x) else x


class Result:
    """A window's result. `domains` holds each domain's; the top-level energy_j, uncertainty_j,
    systematic_j, mean_power_w and peak_power_w are totals over the root domains (those no other
    domain contains: "gpu:0/memory" is part of "gpu:0" and not added again): energies, systematics,
    mean and peak powers add up (the peak sum bounds the combined peak from above), the independent
    uncertainties add in quadrature. `final` False: provisional (the timeline does not yet cover the
    window's end)."""

    __slots__ = ("id", "name", "t_begin_ns", "t_end_ns", "dur_s", "final", "simulated", "counts", "labels",
                 "domains")

    @classmethod
    def _from_handle(cls, lib, h, parents):
        r = cls()
        r.id = lib.wattlab_result_id(h)
        r.name = _text(lib.wattlab_result_name(h))
        r.t_begin_ns = lib.wattlab_result_t_begin_ns(h)
        r.t_end_ns = lib.wattlab_result_t_end_ns(h)
        r.dur_s = lib.wattlab_result_dur_s(h)
        r.final = bool(lib.wattlab_result_final(h))
        r.simulated = bool(lib.wattlab_result_simulated(h))
        r.counts = {_text(lib.wattlab_result_count_key(h, i)): lib.wattlab_result_count_value(h, i)
                    for i in range(lib.wattlab_result_count_count(h))}
        r.labels = {_text(lib.wattlab_result_label_key(h, i)): _text(lib.wattlab_result_label_value(h, i))
                    for i in range(lib.wattlab_result_label_count(h))}
        value = ctypes.c_double()
        r.domains = []
        for d in range(lib.wattlab_result_domain_count(h)):
            e = DomainResult()
            e.domain = _text(lib.wattlab_result_domain_id(h, d))
            e.parent = parents.get(e.domain, "")
            e.simulated = bool(lib.wattlab_result_domain_simulated(h, d))
            e.available = bool(lib.wattlab_result_available(h, d))
            e.energy_j = _number(lib.wattlab_result_energy_j(h, d))
            e.uncertainty_j = _number(lib.wattlab_result_uncertainty_j(h, d))
            e.systematic_j = _number(lib.wattlab_result_systematic_j(h, d))
            e.mean_power_w = _number(lib.wattlab_result_mean_power_w(h, d))
            e.peak_power_w = _number(lib.wattlab_result_peak_power_w(h, d))
            e.estimator = _text(lib.wattlab_result_estimator(h, d))
            e.cross_check_j = _number(lib.wattlab_result_cross_check_j(h, d))
            e.readings_used = lib.wattlab_result_readings_used(h, d)
            e.issues = [Issue(_text(lib.wattlab_issue_code_name(lib.wattlab_result_issue_code(h, d, i))),
                              _text(lib.wattlab_result_issue_text(h, d, i)))
                        for i in range(lib.wattlab_result_issue_count(h, d))]
            e.telemetry = {}
            for f in range(lib.wattlab_telemetry_count()):
                if lib.wattlab_result_telemetry(h, d, f, ctypes.byref(value)):
                    e.telemetry[_text(lib.wattlab_telemetry_name(f))] = value.value
            r.domains.append(e)
        return r

    # Totals over the root domains.
    def _roots(self):
        return [d for d in self.domains if not d.parent]

    @property
    def available(self):
        roots = self._roots()
        return bool(roots) and all(d.available for d in roots)

    def _sum(self, field):
        if not self.available:
            return None
        return sum(getattr(d, field) for d in self._roots())

    @property
    def energy_j(self):
        return self._sum("energy_j")

    @property
    def uncertainty_j(self):
        if not self.available:
            return None
        return math.sqrt(sum(d.uncertainty_j ** 2 for d in self._roots()))

    @property
    def systematic_j(self):
        return self._sum("systematic_j")

    @property
    def mean_power_w(self):
        return self._sum("mean_power_w")

    @property
    def peak_power_w(self):
        return self._sum("peak_power_w")

    @property
    def estimator(self):
        """The estimators of the root domains, distinct, in order, joined with ", "."""
        seen = []
        for d in self._roots():
            if d.estimator and d.estimator not in seen:
                seen.append(d.estimator)
        return ", ".join(seen)

    @property
    def issues(self):
        """Every domain's issues, each as Issue with the domain's id before its text."""
        return [Issue(i.code, f"{d.domain}: {i.text}") for d in self.domains for i in d.issues]

    def domain(self, domain_id):
        """The result of one domain by id ("gpu:0"); KeyError when the window has none."""
        for d in self.domains:
            if d.domain == domain_id:
                return d
        raise KeyError(domain_id)

    def to_dict(self):
        """Plain data (JSON-serializable): the window, its totals and every domain's result."""
        return {"id": self.id, "name": self.name, "t_begin_ns": self.t_begin_ns, "t_end_ns": self.t_end_ns,
                "dur_s": self.dur_s, "final": self.final, "simulated": self.simulated,
                "energy_j": self.energy_j, "uncertainty_j": self.uncertainty_j, "systematic_j": self.systematic_j,
                "mean_power_w": self.mean_power_w, "peak_power_w": self.peak_power_w, "estimator": self.estimator,
                "counts": dict(self.counts), "labels": dict(self.labels),
                "domains": [d.to_dict() for d in self.domains]}

    def rows(self):
        """One flat dict per domain (window fields, domain fields, count.* and label.* columns): the
        rows Meter.windows() returns, which pandas.DataFrame takes as they are."""
        out = []
        for d in self.domains:
            row = {"window_id": self.id, "name": self.name, "t_begin_ns": self.t_begin_ns, "t_end_ns": self.t_end_ns,
                   "dur_s": self.dur_s, "final": self.final}
            row.update({k: getattr(d, k) for k in ("domain", "parent", "simulated", "available", "energy_j",
                                                   "uncertainty_j", "systematic_j", "mean_power_w", "peak_power_w",
                                                   "estimator", "cross_check_j", "readings_used")})
            row["issues"] = "; ".join(i.text for i in d.issues)
            row.update({f"count.{k}": v for k, v in self.counts.items()})
            row.update({f"label.{k}": v for k, v in self.labels.items()})
            row.update({f"telemetry.{k}": v for k, v in d.telemetry.items()})
            out.append(row)
        return out

    def __repr__(self):
        state = "" if self.final else " PROVISIONAL"
        tag = " SIMULATED" if self.simulated else ""
        head = f"<wattlab.Result {self.name!r} #{self.id}: {self.dur_s:.6f} s"
        if self.available:
            head += (f", {self.energy_j:.3f} J ± {self.uncertainty_j:.3f} J (gain ± {self.systematic_j:.3f} J), "
                     f"mean {self.mean_power_w:.1f} W, peak {self.peak_power_w:.1f} W, {self.estimator}")
        else:
            head += ", no estimate"
        if self.counts:
            head += ", " + ", ".join(f"{k}={v:g}" for k, v in self.counts.items())
        lines = [head + state + tag + ">"]
        if len(self.domains) > 1 or not self.available:
            lines += [f"  {d!r}" for d in self.domains]
        for i in self.issues:
            lines.append(f"  issue {i.code}: {i.text}")
        return "\n".join(lines)
