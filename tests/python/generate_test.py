"""wattlab.integrations.measure_generate around stand-ins of transformers models' generate() on the
simulated GPU: new tokens counted per sequence (left padding, end-of-sequence, pad equal to EOS,
several EOS ids, encoder-decoder outputs, a generate output object), the counts on the window, the
energy per token and its uncertainty against the window's result and the simulator's known power."""
import types

import pytest

import wattlab
from wattlab.integrations import count_new_tokens, measure_generate

T0_NS = 1000 * 10**9
SIM = dict(devices="sim", sim_workload="step 400W 600s", sim_gain_error=0.0, sim_seed=11, virtual_clock=T0_NS)


class Ids:
    """A tensor of token ids as far as the helper uses one: tolist()."""

    def __init__(self, rows):
        self.rows = rows

    def tolist(self):
        return [list(r) for r in self.rows]


class Model:
    """generate() takes 2 s of virtual time and returns the prompt (if decoder-only) then `new`."""

    def __init__(self, meter, new, eos=None, pad=None, encoder_decoder=False, wrap=False, fail=False):
        self.meter = meter
        self.new = new
        self.config = types.SimpleNamespace(is_encoder_decoder=encoder_decoder, eos_token_id=None, pad_token_id=None)
        self.generation_config = types.SimpleNamespace(eos_token_id=eos, pad_token_id=pad)
        self.wrap = wrap
        self.fail = fail
        self.calls = []

    def generate(self, inputs=None, **kwargs):
        self.calls.append((inputs, kwargs))
        self.meter.advance(2)
        if self.fail:
            raise RuntimeError("CUDA out of memory (test)")
        prompt = (inputs or kwargs.get("input_ids")).tolist()
        if self.config.is_encoder_decoder:
            rows = [[0] + n for n in self.new]
        else:
            rows = [p + n for p, n in zip(prompt * (len(self.new) // len(prompt)), self.new)]
        out = Ids(rows)
        return types.SimpleNamespace(sequences=out, scores=None) if self.wrap else out


@pytest.fixture
def vm():
    m = wattlab.Meter(**SIM)
    m.advance(3)
    yield m
    m.close()


def test_tokens_counted_and_energy_per_token(vm):
    edges = []
    model = Model(vm, new=[[11, 12, 2, 0, 0], [13, 14, 15, 16, 17]], eos=2, pad=0)
    ids = Ids([[0, 0, 5, 6], [7, 8, 9, 10]])  # left-padded prompts
    mask = Ids([[0, 0, 1, 1], [1, 1, 1, 1]])
    g = measure_generate(vm, model, input_ids=ids, attention_mask=mask, max_new_tokens=5,
                         sync=lambda: edges.append(vm.now_ns()))
    assert edges == [T0_NS + 3 * 10**9, T0_NS + 5 * 10**9]
    assert model.calls == [(None, {"input_ids": ids, "attention_mask": mask, "max_new_tokens": 5})]
    assert g.tokens_per_sequence == [3, 5] and g.tokens == 8  # up to and including the first EOS
    assert g.prompt_tokens == 6 and g.output is g.sequences
    vm.advance(3)
    r = g.result
    assert r.final and r.simulated and r.name == "generate" and r.dur_s == pytest.approx(2.0)
    assert r.counts == {"tokens": 8.0, "prompt_tokens": 6.0, "sequences": 2.0}
    assert abs(r.energy_j - 800.0) <= r.uncertainty_j + 1.0
    assert g.energy_per_token_j == pytest.approx(r.energy_j / 8)
    assert g.energy_per_token_u95_j == pytest.approx(r.uncertainty_j / 8)
    assert abs(g.energy_per_token_j - 100.0) <= g.energy_per_token_u95_j + 0.2
    assert "SIMULATED" in repr(g) and "J/token" in repr(g)
    d = g.to_dict()
    assert d["tokens"] == 8 and d["energy_per_token_j"] == g.energy_per_token_j and d["simulated"]


@pytest.mark.parametrize("new, eos, pad, counts", [
    ([[11, 2, 2, 2], [12, 13, 14, 2]], 2, 2, [2, 4]),  # pad is EOS (GPT-2): the first EOS counts, the rest pads
    ([[11, 12, 0, 0], [12, 13, 14, 15]], None, 0, [2, 4]),  # no EOS known: the pad tokens are not counted
    ([[11, 3, 0, 0], [2, 0, 0, 0]], [2, 3], 0, [2, 1]),  # several EOS ids
    ([[11, 12, 13], [14, 15, 16]], None, None, [3, 3]),  # neither: every new token
])
def test_end_of_sequence_and_padding(vm, new, eos, pad, counts):
    g = measure_generate(vm, Model(vm, new, eos=eos, pad=pad), Ids([[5, 6], [7, 8]]), sync=None)
    assert g.tokens_per_sequence == counts
    assert g.prompt_tokens == (4 if pad is None else sum(1 for t in [5, 6, 7, 8] if t != pad))


def test_the_call_settings_come_before_the_models(vm):
    model = Model(vm, new=[[11, 9, 12, 3, 0]], eos=9, pad=0)
    g = measure_generate(vm, model, Ids([[5]]), sync=None, eos_token_id=[3])
    assert g.tokens_per_sequence == [4]  # 9 is the model's EOS, 3 the call's
    g = measure_generate(vm, model, Ids([[5]]), sync=None, generation_config=types.SimpleNamespace(eos_token_id=12))
    assert g.tokens_per_sequence == [3]


def test_a_generate_output_with_several_sequences_per_prompt(vm):
    model = Model(vm, new=[[11, 2, 0], [12, 13, 2], [14, 15, 16], [2, 0, 0]], eos=2, pad=0, wrap=True)
    g = measure_generate(vm, model, input_ids=Ids([[5, 6], [7, 8]]), num_return_sequences=2, sync=None)
    assert g.sequences is g.output.sequences
    assert g.tokens_per_sequence == [2, 3, 3, 1] and g.prompt_tokens == 4
    vm.advance(3)
    assert g.result.counts["sequences"] == 4.0


def test_an_encoder_decoder_output_starts_with_the_decoder_start_token(vm):
    model = Model(vm, new=[[11, 12, 1, 0], [13, 1, 0, 0]], eos=1, pad=0, encoder_decoder=True)
    g = measure_generate(vm, model, input_ids=Ids([[5, 6, 7, 8, 9, 10]] * 2), sync=None)
    assert g.tokens_per_sequence == [3, 2] and g.prompt_tokens == 12


def test_a_failed_generate_closes_its_window(vm):
    with pytest.raises(RuntimeError, match="out of memory"):
        measure_generate(vm, Model(vm, new=[], fail=True), Ids([[5]]), sync=None)
    vm.advance(3)
    [row] = vm.windows()
    assert row["name"] == "generate" and row["final"] and row["dur_s"] == pytest.approx(2.0)
    assert not any(k.startswith("count.") for k in row)


def test_no_new_tokens_gives_no_energy_per_token(vm):
    g = measure_generate(vm, Model(vm, new=[[2, 0]], eos=2, pad=0), Ids([[5]]), sync=None)
    vm.advance(3)
    assert g.tokens_per_sequence == [1]
    g = measure_generate(vm, Model(vm, new=[[]]), Ids([[5]]), sync=None)
    vm.advance(3)
    assert g.tokens == 0 and g.energy_per_token_j is None and "no energy per token" in repr(g)


def test_count_new_tokens_takes_lists_and_tensors():
    assert count_new_tokens([[1, 2, 3, 4, 9, 0]], 2, eos_token_ids=9, pad_token_id=0) == [3]
    scalar = types.SimpleNamespace(tolist=lambda: 0)  # a 0-d tensor
    vector = types.SimpleNamespace(tolist=lambda: [9, 4])  # a 1-d tensor
    assert count_new_tokens(Ids([[1, 2, 3, 0]]), 1, pad_token_id=scalar) == [2]
    assert count_new_tokens(Ids([[1, 2, 4, 0], [1, 9, 0, 0]]), 1, eos_token_ids=vector, pad_token_id=scalar) == [2, 1]
    assert count_new_tokens([], 3) == []
