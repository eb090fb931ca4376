"""The energy of a `generate()` call with its tokens counted: one wattlab window around the call, the
new tokens of every sequence on it, and the energy per token with its 95 % uncertainty.

    from wattlab.integrations import measure_generate
    g = measure_generate(meter, model, input_ids=ids, attention_mask=mask, max_new_tokens=128)
    print(g.tokens, g.energy_per_token_j, g.energy_per_token_u95_j)   # waits for the final result
    text = tokenizer.batch_decode(g.sequences)

A sequence's new tokens are the output after the prompt (a decoder-only model returns the prompt,
left padding included, before what it generated; an encoder-decoder model returns the decoder's
start token first): up to and including its first end-of-sequence token where one is known (the
rest is padding, whatever the pad token is), else every token that is not the pad token.
"""
from ._framework import DEFAULT_SYNC, resolve_sync

__all__ = ["measure_generate", "count_new_tokens", "Generation"]


def _rows(x):
    """A 2-D batch of token ids (a tensor, an array, nested lists) as lists of ints."""
    if x is None:
        return []
    if hasattr(x, "tolist"):
        x = x.tolist()
    rows = [list(r) for r in x]
    return rows


def _ids(value):
    """A token id or several (an int, a list, a tensor) as a set of ints; empty for None."""
    if value is None:
        return set()
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple, set)):
        return {int(v) for v in value}
    return {int(value)}


def count_new_tokens(sequences, prompt_len, eos_token_ids=(), pad_token_id=None):
    """The new tokens of each output sequence: those after the first `prompt_len` ids, up to and
    including the first end-of-sequence id (any of eos_token_ids), or where none is known, those that
    are not pad_token_id."""
    eos = _ids(eos_token_ids)
    pad = _ids(pad_token_id)
    counts = []
    for row in _rows(sequences):
        new = [int(t) for t in row[prompt_len:]]
        if eos:
            ends = [i for i, t in enumerate(new) if t in eos]
            counts.append(ends[0] + 1 if ends else len(new))
        else:
            counts.append(sum(1 for t in new if t not in pad))
    return counts


def _setting(name, kwargs, model):
    """A generation setting as generate() resolves it: the call's keyword, then the call's
    generation_config, then the model's generation_config, then the model's config."""
    if kwargs.get(name) is not None:
        return kwargs[name]
    for source in (kwargs.get("generation_config"), getattr(model, "generation_config", None),
                   getattr(model, "config", None)):
        value = getattr(source, name, None)
        if value is not None:
            return value
    return None


class Generation:
    """One measured generate() call: `output` (what generate returned), `sequences` (its token ids),
    `tokens` (new tokens, all sequences), `tokens_per_sequence`, `prompt_tokens` (the prompt's tokens
    that are not padding, per input row), `window` (its wattlab window, counts `tokens`,
    `prompt_tokens`, `sequences`), `result` (waits for the final one), and the energy per new token
    with its 95 % uncertainty."""

    def __init__(self, output, sequences, window, tokens_per_sequence, prompt_tokens):
        self.output = output
        self.sequences = sequences
        self.window = window
        self.tokens_per_sequence = tokens_per_sequence
        self.tokens = sum(tokens_per_sequence)
        self.prompt_tokens = prompt_tokens

    @property
    def result(self):
        return self.window.result

    def _per_token(self, field):
        value = getattr(self.result, field)
        if value is None or self.tokens == 0:
            return None
        return value / self.tokens

    @property
    def energy_per_token_j(self):
        """The window's energy over its new tokens (None without tokens or without an estimate)."""
        return self._per_token("energy_j")

    @property
    def energy_per_token_u95_j(self):
        """Its 95 % uncertainty: the window's over its tokens (the count is exact)."""
        return self._per_token("uncertainty_j")

    def to_dict(self):
        r = self.result
        return {"window_id": r.id, "dur_s": r.dur_s, "final": r.final, "simulated": r.simulated,
                "tokens": self.tokens, "tokens_per_sequence": list(self.tokens_per_sequence),
                "prompt_tokens": self.prompt_tokens, "energy_j": r.energy_j, "energy_u95_j": r.uncertainty_j,
                "systematic_j": r.systematic_j, "energy_per_token_j": self.energy_per_token_j,
                "energy_per_token_u95_j": self.energy_per_token_u95_j, "estimator": r.estimator}

    def __repr__(self):
        r = self.result
        tag = " SIMULATED" if r.simulated else ""
        state = "" if r.final else " PROVISIONAL"
        if self.energy_per_token_j is None:
            return f"<wattlab.Generation {self.tokens} tokens, no energy per token{state}{tag}>"
        return (f"<wattlab.Generation {self.tokens} tokens in {r.dur_s:.3f} s: {r.energy_j:.3f} J ± "
                f"{r.uncertainty_j:.3f} J, {self.energy_per_token_j:.4f} J/token ± "
                f"{self.energy_per_token_u95_j:.4f} J/token{state}{tag}>")


def measure_generate(meter, model, inputs=None, *, name="generate", sync=DEFAULT_SYNC, **generate_kwargs):
    """Calls model.generate(inputs, **generate_kwargs) inside a window named `name` on `meter`, with
    `sync` (default: torch.cuda.synchronize where CUDA is available) before each edge, counts the
    new tokens onto the window and returns a Generation."""
    sync = resolve_sync(sync)
    args = () if inputs is None else (inputs,)
    window = meter.open(name, sync)
    try:
        output = model.generate(*args, **generate_kwargs)
    finally:
        window.close()
    sequences = getattr(output, "sequences", None)
    if sequences is None and isinstance(output, dict):
        sequences = output.get("sequences")
    if sequences is None:
        sequences = output
    prompt = inputs if inputs is not None else generate_kwargs.get("input_ids")
    prompt_rows = _rows(prompt)
    pad = _setting("pad_token_id", generate_kwargs, model)
    if getattr(getattr(model, "config", None), "is_encoder_decoder", False):
        decoder_prompt = _rows(generate_kwargs.get("decoder_input_ids"))
        prompt_len = len(decoder_prompt[0]) if decoder_prompt else 1  # the decoder's start token
    else:
        prompt_len = len(prompt_rows[0]) if prompt_rows else 0  # inputs_embeds alone: only new tokens come back
    per_sequence = count_new_tokens(sequences, prompt_len, _setting("eos_token_id", generate_kwargs, model), pad)
    mask = _rows(generate_kwargs.get("attention_mask"))
    if mask:
        prompt_tokens = sum(int(v) for row in mask for v in row)
    else:
        pad_ids = _ids(pad)
        prompt_tokens = sum(1 for row in prompt_rows for t in row if int(t) not in pad_ids)
    window.count(tokens=sum(per_sequence), prompt_tokens=prompt_tokens, sequences=len(per_sequence))
    return Generation(output, sequences, window, per_sequence, prompt_tokens)
