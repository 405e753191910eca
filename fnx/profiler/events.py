"""What the profiler records: one ``FunctionEvent`` per op call or ``record_function``
range, and their averages by name (``key_averages``), printed as PyTorch's table.

Times are host microseconds (``time.perf_counter_ns``). An event's *self* time is its
time less that of the events nested in it (an op's decomposition, the ops inside a
``record_function`` range).
"""
from __future__ import annotations

import json

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList"]


class FunctionEvent:
    """One recorded call: ``name``, ``start_us``/``end_us``, ``thread``, ``input_shapes``
    (with ``record_shapes``), the events nested in it (``cpu_children``)."""

    def __init__(self, name, start_us, thread, input_shapes=None, parent=None,
                 is_user_annotation=False):
        self.name = name
        self.start_us = start_us
        self.end_us = start_us
        self.thread = thread
        self.input_shapes = input_shapes or []
        self.cpu_parent = parent
        self.cpu_children = []
        self.is_user_annotation = is_user_annotation
        self.count = 1

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    def __repr__(self):
        return (f"<FunctionEvent name={self.name} cpu_time={_format_us(self.cpu_time_total)} "
                f"self_cpu_time={_format_us(self.self_cpu_time_total)} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them), summed."""

    def __init__(self, key, input_shapes=None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.is_user_annotation = False

    def add(self, event) -> None:
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.is_user_annotation = event.is_user_annotation

    @property
    def cpu_time(self) -> float:
        """The average time per call."""
        return self.cpu_time_total / max(self.count, 1)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time="
                f"{_format_us(self.self_cpu_time_total)} cpu_time={_format_us(self.cpu_time)} "
                f"input_shapes={self.input_shapes}>")


_SORT_KEYS = {"cpu_time_total", "self_cpu_time_total", "cpu_time", "count"}


class EventList(list):
    """A list of events (or of averages) that prints as PyTorch's profiler table."""

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """The events grouped by name (and input shapes), in first-seen order."""
        groups: dict = {}
        for e in self:
            shapes = str(e.input_shapes) if group_by_input_shape else None
            avg = groups.get((e.key, shapes))
            if avg is None:
                avg = groups[(e.key, shapes)] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None)
            avg.add(e)
        return EventList(groups.values())

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """The events as a text table: self and total time, their share of the whole,
        average time and calls, and the input shapes when they were grouped by them."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise ValueError(f"sort_by must be one of {sorted(_SORT_KEYS)} (fnx records "
                                 f"host time only), got {sort_by!r}")
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        total = self.self_cpu_time_total or 1.0
        shapes = any(getattr(e, "input_shapes", None) for e in rows) and \
            all(isinstance(e, FunctionEventAvg) for e in rows)
        width = min(max_name_column_width,
                    max([len("Name")] + [len(e.key) for e in rows]) + 2)
        cols = [("Name", width), ("Self CPU %", 12), ("Self CPU", 12), ("CPU total %", 12),
                ("CPU total", 12), ("CPU time avg", 12), ("# of Calls", 12)]
        if shapes:
            cols.append(("Input Shapes", max_shapes_column_width))
        rule = "  ".join("-" * w for _, w in cols)
        lines = [header] if header else []
        lines += [rule, "  ".join(n.rjust(w) for n, w in cols), rule]
        for e in rows:
            name = e.key if len(e.key) <= width else e.key[:width - 3] + "..."
            cells = [name.rjust(width),
                     f"{100 * e.self_cpu_time_total / total:.2f}%".rjust(12),
                     _format_us(e.self_cpu_time_total).rjust(12),
                     f"{100 * e.cpu_time_total / total:.2f}%".rjust(12),
                     _format_us(e.cpu_time_total).rjust(12),
                     _format_us(e.cpu_time).rjust(12), str(e.count).rjust(12)]
            if shapes:
                cells.append(str(e.input_shapes)[:max_shapes_column_width])
            lines.append("  ".join(cells))
        lines.append(rule)
        lines.append(f"Self CPU time total: {_format_us(self.self_cpu_time_total)}")
        return "\n".join(lines) + "\n"

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto)."""
        trace = {"traceEvents": [
            {"name": e.name, "ph": "X", "ts": e.start_us, "dur": e.cpu_time_total,
             "pid": 0, "tid": e.thread,
             "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
             "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}}
            for e in self if isinstance(e, FunctionEvent)], "displayTimeUnit": "ms"}
        with open(path, "w") as f:
            json.dump(trace, f)


def _format_us(us: float) -> str:
    """PyTorch's time format: seconds, milliseconds or microseconds, three decimals."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"
