"""Two threads on one device: forward passes and training give the results
that one thread gives, on one shared queue or on a queue per thread (as
chapter 11 trains its runs), and a Tape belongs to the thread that opened
it.

The threaded runs happen in a child process, so that a crash (a segfault in
the OpenCL driver) fails this test instead of ending the test session.
"""

import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import sys, threading
    import numpy as np
    import pyopencl as cl
    import netcl_lite.autograd as ag
    from netcl_lite.core.device import manager
    from netcl_lite.nn import DecoderConfig, DecoderLM
    from netcl_lite.optim import AdamW

    queue = manager.default("auto").queue
    CFG = dict(vocab_size=32, dim=16, n_layers=2, n_heads=2, n_kv_heads=1,
               max_seq_len=12, hidden_dim=24, seed=0)

    def forward(model, seed):
        ids = np.random.default_rng(seed).integers(0, 32, size=(2, 10))
        return [model(ids).value.to_host() for _ in range(ROUNDS)]

    def train(seed, on=None):
        model = DecoderLM(on or queue, DecoderConfig(**CFG))
        opt = AdamW(model.parameters(), lr=1e-2)
        rng = np.random.default_rng(seed)
        losses = []
        for _ in range(ROUNDS):
            x = rng.integers(0, 32, size=(2, 8))
            with ag.Tape() as tape:
                loss = model.loss(x, (x + 1) % 32)
            opt.zero_grad()
            tape.backward(loss)
            opt.step()
            losses.append(float(loss.value.to_host()))
        return losses

    def in_threads(jobs):
        results, errors = [None] * len(jobs), []
        def run(i, job):
            try:
                results[i] = job()
            except BaseException as err:   # reported by the parent
                errors.append(repr(err))
        threads = [threading.Thread(target=run, args=(i, job))
                   for i, job in enumerate(jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        return results

    ROUNDS = int(sys.argv[1])
    shared = DecoderLM(queue, DecoderConfig(**CFG))
    alone = [forward(shared, 1), forward(shared, 2), train(3), train(4)]
    together = in_threads([lambda: forward(shared, 1), lambda: forward(shared, 2),
                           lambda: train(3), lambda: train(4)])
    for a, b in zip(alone, together):
        for x, y in zip(a, b):
            assert np.array_equal(x, y), (x, y)
    own = in_threads([lambda: train(3, cl.CommandQueue(queue.context)),
                      lambda: train(4, cl.CommandQueue(queue.context))])
    assert own == alone[2:], (own, alone[2:])     # a queue each: the same bits

    # thread B generates with a KV cache while thread A holds an open Tape
    opened, done = threading.Event(), threading.Event()
    def hold_tape():
        with ag.Tape():
            opened.set()
            done.wait(60)
    holder = threading.Thread(target=hold_tape)
    holder.start()
    opened.wait(60)
    try:
        out = in_threads([lambda: shared.generate([1, 2], 4, temperature=0.0)])
    finally:
        done.set()
        holder.join()
    assert out[0] == shared.generate([1, 2], 4, temperature=0.0)
    print("ok")
""")


def run_child(rounds):
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(rounds)], capture_output=True,
        text=True, timeout=600, env=dict(os.environ),
    )


def test_two_threads_match_one_thread():
    done = run_child(rounds=6)
    assert done.returncode == 0 and "ok" in done.stdout, (
        f"exit code {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}"
    )


# Thread A keeps a trace open while thread B traces its own launches and
# hides some of them with ``untraced`` (as the tuner does): each trace holds
# exactly its own thread's launches, whatever the other thread does.
TRACES = textwrap.dedent("""
    import threading
    import numpy as np
    from netcl_lite.core.device import manager
    from netcl_lite.core.program import trace, untraced
    from netcl_lite.core.tensor import Tensor
    from netcl_lite.core.tensor_ops import add_tensors, scale_tensor

    queue = manager.default("auto").queue
    x = Tensor.from_host(queue, np.ones(8))
    a_open, b_hiding, a_done, b_done = (threading.Event() for _ in range(4))
    logs, errors = {}, []

    def wait(event):
        assert event.wait(60), "the other thread never got there"

    def a():                       # three scales, one while B hides its adds
        with trace() as log:
            scale_tensor(x, 2.0)
            a_open.set()
            wait(b_hiding)
            scale_tensor(x, 2.0)
            a_done.set()
            wait(b_done)
            scale_tensor(x, 2.0)
        logs["a"] = log

    def b():                       # an add, a hidden add, an add
        wait(a_open)
        with trace() as log:
            add_tensors(x, x)
            with untraced():
                b_hiding.set()
                add_tensors(x, x)
                wait(a_done)
            add_tensors(x, x)
        b_done.set()
        logs["b"] = log

    def run(job):
        try:
            job()
        except BaseException as err:
            errors.append(repr(err))
            for event in (a_open, b_hiding, a_done, b_done):
                event.set()

    threads = [threading.Thread(target=run, args=(job,)) for job in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert logs["a"] == ["elementwise.cl:scale_forward"] * 3, logs["a"]
    assert logs["a"].allocations == [32] * 3, logs["a"].allocations
    assert logs["b"] == ["elementwise.cl:add_forward"] * 2, logs["b"]
    assert logs["b"].allocations == [32] * 2, logs["b"].allocations
    print("ok")
""")


def test_a_trace_holds_its_own_threads_launches():
    done = subprocess.run([sys.executable, "-c", TRACES], capture_output=True,
                          text=True, timeout=600, env=dict(os.environ))
    assert done.returncode == 0 and "ok" in done.stdout, (
        f"exit code {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}"
    )
