#!/usr/bin/env python3
"""The energy per token of a real transformers generate(), measured with
wattlab.integrations.measure_generate: a small causal LM with random weights (tiny_lm.py, no
download), a batch of random prompts of different lengths, left-padded, greedy decoding, repeated.
Prints each call's new tokens, energy ± its 95 % uncertainty and J/token ± U95, and checks:

  - every call's result is final;
  - the new tokens counted by the helper equal those counted here with torch (up to and including
    the first EOS of each sequence, else all it generated).

    cmake --build --preset release --target wattlab_shared
    WATTLAB_LIBRARY=build/release/src/capi/libwattlab.so.1 python3 python/bench/generate_h200.py --json generate.json

Exit status 0: every check passed; 1: one failed; 2: torch or transformers missing, or bad usage.
"""
import argparse
import json
import statistics
import sys

import tiny_lm

EOS, PAD = 2, 0  # tiny_lm's configurations


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="auto", help="wattlab devices: auto | nvml | sim (default auto)")
    ap.add_argument("--db", help="store the run in this SQLite file")
    ap.add_argument("--model", choices=sorted(tiny_lm.CONFIGS), default="llama")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--prompt", type=int, default=128, help="longest prompt (the shortest is half)")
    ap.add_argument("--new", type=int, default=256, help="max_new_tokens")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", help="write every call's record here")
    return ap.parse_args()


def prompts(torch, batch, longest, vocab_size):
    """Random prompts of lengths from longest/2 to longest, left-padded, and their attention mask."""
    ids = tiny_lm.random_tokens(torch, batch, longest, vocab_size, seed=1)
    mask = torch.ones_like(ids)
    for i in range(batch):
        pad = (longest // 2) * (batch - 1 - i) // max(batch - 1, 1)
        ids[i, :pad] = PAD
        mask[i, :pad] = 0
    return ids, mask


def torch_counts(torch, sequences, prompt_len):
    """New tokens per sequence, counted with tensor operations: up to the first EOS, else all."""
    new = sequences[:, prompt_len:]
    is_eos = new == EOS
    first = is_eos.int().argmax(dim=1)
    return torch.where(is_eos.any(dim=1), first + 1, torch.full_like(first, new.shape[1])).tolist()


def main():
    a = parse()
    torch, transformers = tiny_lm.require("generate_h200.py", "torch", "transformers")
    import wattlab
    from wattlab.integrations import measure_generate

    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    model, config = tiny_lm.build(torch, transformers, a.model, device)
    if cuda:
        model = model.to(torch.bfloat16)
    model.eval()
    ids, mask = prompts(torch, a.batch, a.prompt, config.vocab_size)
    ids, mask = ids.to(device), mask.to(device)
    settings = dict(max_new_tokens=a.new, do_sample=False, pad_token_id=PAD, eos_token_id=EOS)
    with torch.no_grad():
        model.generate(input_ids=ids, attention_mask=mask, **settings)  # warm-up, not measured
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_name(0) if cuda else 'CPU'}, {a.model}, batch {a.batch}, prompts "
          f"{a.prompt // 2}-{a.prompt} tokens, max_new_tokens {a.new}, greedy", flush=True)
    ok, records = True, []
    with wattlab.Meter(devices=a.device, db=a.db) as meter, torch.no_grad():
        gens = [measure_generate(meter, model, input_ids=ids, attention_mask=mask, **settings)
                for _ in range(a.repeats)]
        for i, g in enumerate(gens):
            r = g.result
            expected = torch_counts(torch, g.sequences, ids.shape[1])
            counted = g.tokens_per_sequence == expected
            ended = sum(1 for n in expected if n < a.new)
            ok = ok and r.final and counted and g.energy_per_token_j is not None
            tag = " SIMULATED" if r.simulated else ""
            if g.energy_per_token_j is None:
                print(f"generate {i}: {g.tokens} new tokens, no estimate {[x.code for x in r.issues]}{tag}")
            else:
                print(f"generate {i}: {g.tokens} new tokens ({len(expected)} sequences, {ended} ended at EOS; "
                      f"prompts {g.prompt_tokens} tokens) in {r.dur_s:.3f} s: {r.energy_j:.2f} J ± "
                      f"{r.uncertainty_j:.2f} J (95 %; gain ± {r.systematic_j:.2f} J), "
                      f"{g.energy_per_token_j * 1e3:.3f} mJ/token ± "
                      f"{g.energy_per_token_u95_j * 1e3:.3f} mJ/token, {r.estimator}"
                      f"{'' if r.final else ' PROVISIONAL'}{tag}")
            if not counted:
                print(f"FAIL generate {i}: the helper counted {g.tokens_per_sequence}, torch {expected}")
            records.append(g.to_dict())
    per_token = [x["energy_per_token_j"] for x in records if x["energy_per_token_j"] is not None]
    if len(per_token) >= 2:
        mean = statistics.mean(per_token)
        cv = statistics.stdev(per_token) / mean * 100
        print(f"J/token over {len(per_token)} calls: mean {mean * 1e3:.3f} mJ, CV {cv:.2f} % (spread between calls)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"calls": records, "transformers": transformers.__version__, "torch": torch.__version__}, f,
                      indent=1)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
