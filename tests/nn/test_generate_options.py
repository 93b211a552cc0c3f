"""generate's top_p, stop_ids and on_token: what each does, against the
plain runs it must agree with, and their bad values refused by name."""

import numpy as np
import pytest

from netcl_lite.nn import DecoderConfig, DecoderLM
from netcl_lite.nn.model import sample_next


@pytest.fixture(scope="module")
def model(queue):
    return DecoderLM(queue, DecoderConfig(
        vocab_size=24, dim=16, n_layers=2, n_heads=4, n_kv_heads=2,
        max_seq_len=40, hidden_dim=24, seed=5))


def test_top_p_keeps_the_smallest_set_that_reaches_it():
    p = np.array([0.05, 0.4, 0.1, 0.3, 0.15])
    rng = np.random.default_rng(0)
    drawn = {sample_next(np.log(p), top_p=0.75, rng=rng) for _ in range(400)}
    assert drawn == {1, 3, 4}             # 0.4 + 0.3 = 0.7 < 0.75, + 0.15
    drawn = {sample_next(np.log(p), top_p=0.4, rng=rng) for _ in range(100)}
    assert drawn == {1}                   # the top id alone reaches 0.4
    # top_p 1 and None draw the same numbers as before top_p existed
    a = [sample_next(np.log(p), rng=np.random.default_rng(3)) for _ in range(5)]
    b = [sample_next(np.log(p), top_p=1.0, rng=np.random.default_rng(3))
         for _ in range(5)]
    assert a == b


def test_top_p_frequencies(model):
    """Ids outside the nucleus are never drawn; inside, in proportion."""
    z = np.array([2.0, 1.0, 0.5, -1.0, -3.0])
    p = np.exp(z) / np.exp(z).sum()
    rng = np.random.default_rng(1)
    draws = np.array([sample_next(z, top_p=0.9, rng=rng) for _ in range(4000)])
    keep = np.cumsum(p) - p < 0.9                 # ids needed to reach 0.9
    counts = np.bincount(draws, minlength=5) / len(draws)
    assert (counts[~keep] == 0).all()
    want = p * keep / (p * keep).sum()
    assert np.abs(counts - want).max() < 0.03


def test_on_token_streams_every_id(model):
    seen = []
    out = model.generate([1, 2, 3], 10, temperature=0.8, top_p=0.9, seed=4,
                         on_token=seen.append)
    assert seen == out and len(out) == 10
    assert out == model.generate([1, 2, 3], 10, temperature=0.8, top_p=0.9,
                                 seed=4, use_cache=False)


def test_stop_ids_end_a_row_with_the_stop_id(model):
    free = model.generate([1, 2, 3], 20, temperature=0.0, stop_ids=())
    assert model.stop_ids == () and model.generate(
        [1, 2, 3], 20, temperature=0.0) == free      # no stop ids by default
    stop = free[5]
    first = free.index(stop)
    seen = []
    got = model.generate([1, 2, 3], 20, temperature=0.0, stop_ids=[stop],
                         on_token=seen.append)
    assert got == free[:first + 1] and got[-1] == stop and seen == got
    model.stop_ids = (stop,)                         # a file's default
    try:
        assert model.generate([1, 2, 3], 20, temperature=0.0) == got
        assert model.generate([1, 2, 3], 20, temperature=0.0,
                              stop_ids=()) == free
    finally:
        model.stop_ids = ()


def test_stop_ids_in_a_batch_end_each_row_alone(model):
    prompts = np.array([[1, 2, 3], [4, 5, 6]])
    free = model.generate(prompts, 12, temperature=0.0, stop_ids=())
    stop = free[0][3]
    got = model.generate(prompts, 12, temperature=0.0, stop_ids=[stop])
    for row, full in zip(got, free):
        cut = full.index(stop) + 1 if stop in full else len(full)
        assert row == full[:cut]


@pytest.mark.parametrize("kwargs,message", [
    (dict(top_p=0.0), "top_p must be None or in"),
    (dict(top_p=1.5), "top_p must be None or in"),
    (dict(top_p=True), "top_p must be None or in"),
    (dict(stop_ids=[24]), r"stop_ids must be None or ids in \[0, 24\)"),
    (dict(stop_ids=5), "stop_ids must be None or ids"),
    (dict(stop_ids=["a"]), "stop_ids must be None or ids"),
    (dict(on_token=3), "on_token must be a function"),
    (dict(prompt=[[1, 2], [3, 4]], on_token=print), "for a single prompt"),
])
def test_bad_arguments_are_named(model, kwargs, message):
    args = dict(prompt=[1, 2], max_new_tokens=3)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        model.generate(**args)
