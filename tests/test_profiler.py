"""fnx.profiler: which events are recorded (op calls, nesting, record_function ranges,
compiled calls, backward), how times add up, schedules, traces, and the old
fnx.autograd.profiler face."""
import json
import os
import time

import pytest

import fnx
from fnx.profiler import (ProfilerAction, ProfilerActivity, profile, record_function,
                          schedule, tensorboard_trace_handler)


def test_ops_and_ranges_are_recorded_nested():
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("block"):
            y = fnx.ones(2, 3) @ fnx.ones(3, 4)
            time.sleep(0.01)
        z = y.relu()
    assert z.shape == (2, 4)
    events = prof.events()
    names = [e.name for e in events]
    assert names == ["block", "aten::ones", "aten::ones", "aten::matmul", "aten::mm",
                     "aten::relu"]
    block, matmul, mm = events[0], events[3], events[4]
    assert block.is_user_annotation and mm.cpu_parent is matmul and matmul.cpu_parent is block
    assert block.cpu_time_total >= 10_000                   # the sleep, in microseconds
    # self times partition the top-level events' totals
    top = [e for e in events if e.cpu_parent is None]
    assert sum(e.self_cpu_time_total for e in events) == \
        pytest.approx(sum(e.cpu_time_total for e in top))
    assert mm.input_shapes == [[2, 3], [3, 4]]
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["aten::ones"].count == 2
    assert avg["aten::ones"].cpu_time == pytest.approx(avg["aten::ones"].cpu_time_total / 2)
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=3)
    assert table.count("\n") == 3 + 4 + 1 and "Self CPU time total" in table
    by_shape = prof.key_averages(group_by_input_shape=True)
    assert "Input Shapes" in by_shape.table()
    with pytest.raises(ValueError, match="sort_by must be one of"):
        prof.key_averages().table(sort_by="cuda_time_total")


def test_backward_and_compiled_calls_are_recorded():
    lin = fnx.nn.Linear(3, 2)
    step = fnx.compile(lambda x: lin(x).sum())
    x = fnx.randn(4, 3, requires_grad=True)
    step(x)                                             # compiled before profiling
    with profile() as prof:
        lin(x).sum().backward()
        step(x)
    names = [e.name for e in prof.events()]
    assert "aten::addmm" in names and names.count("aten::mm") >= 1      # forward, backward
    assert any(n.startswith("fnx.compile: ") for n in names)
    outside = fnx.ones(1)
    assert len(prof.events()) == len(names) and outside.shape == (1,)   # stopped recording


def test_schedule_records_the_active_steps_and_hands_over_traces(tmp_path):
    s = schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    assert [s(i) for i in range(10)] == [
        ProfilerAction.NONE, ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
        ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE, ProfilerAction.WARMUP,
        ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE]
    seen = []

    def ready(prof):
        seen.append(sorted({e.name for e in prof.events()}))
        tensorboard_trace_handler(str(tmp_path), worker_name="w")(prof)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        sched = schedule(wait=1, warmup=0, active=2, repeat=1)
    with profile(schedule=sched, on_trace_ready=ready) as prof:
        for step in range(5):
            fnx.full((2,), float(step)).sum()           # aten::full, aten::sum every step
            if step == 2:
                fnx.zeros(1)
            prof.step()
    assert seen == [["aten::full", "aten::sum", "aten::zeros"]]      # steps 1 and 2 only
    files = os.listdir(tmp_path)
    assert len(files) == 1 and files[0].startswith("w.") and files[0].endswith(".pt.trace.json")
    trace = json.load(open(tmp_path / files[0]))
    assert {e["name"] for e in trace["traceEvents"]} == {"aten::full", "aten::sum", "aten::zeros"}
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in trace["traceEvents"])


def test_record_function_without_a_profiler_and_as_decorator():
    @record_function("helper")
    def helper():
        return fnx.ones(1) + 1
    assert helper().item() == 2.0                      # nothing records: no effect
    with profile() as prof:
        helper()
    assert [e.name for e in prof.events()][:2] == ["helper", "aten::ones"]


def test_autograd_profiler_face(tmp_path):
    with fnx.autograd.profiler.profile(record_shapes=True) as prof:
        fnx.arange(6).reshape(2, 3).sum()
    assert [e.name for e in prof.function_events] == ["aten::arange", "aten::reshape",
                                                      "aten::view", "aten::sum"]
    total = prof.total_average()
    assert total.count == 4
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    assert len(json.load(open(tmp_path / "t.json"))["traceEvents"]) == 4
    with fnx.autograd.profiler.profile(enabled=False) as off:
        fnx.ones(1)
    assert len(off.function_events) == 0
    assert fnx.autograd.profiler.record_function is record_function
    assert __import__("fnx.autograd.profiler", fromlist=["profile"]).profile is \
        fnx.autograd.profiler.profile
