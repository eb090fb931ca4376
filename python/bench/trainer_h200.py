#!/usr/bin/env python3
"""A real transformers Trainer run with wattlab's callback: a small causal LM with random weights
(tiny_lm.py: built from an inline configuration, no download), random token data, a few hundred
optimizer steps over two epochs, and wattlab.integrations.transformers.WattlabTrainerCallback
attached first. Prints the Trainer's logs with their energy keys, every step's and epoch's energy
± its 95 % uncertainty, and checks what the callback promises:

  - every step has a final result, and the logs cover every step exactly once;
  - each log's energy is the sum of the steps it covers (their U95 in quadrature);
  - an epoch's energy is at least the sum of its steps (it also holds data loading and logging),
    within the quadrature of their U95.

    cmake --build --preset release --target wattlab_shared
    WATTLAB_LIBRARY=build/release/src/capi/libwattlab.so.1 python3 python/bench/trainer_h200.py --json trainer.json
    (--device sim runs the meter on the simulated GPU; the model still trains where torch puts it)

Exit status 0: every check passed; 1: one failed (the line says which); 2: torch or transformers
missing, or bad usage.
"""
import argparse
import json
import math
import sys
import tempfile

import tiny_lm


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="auto", help="wattlab devices: auto | nvml | sim (default auto)")
    ap.add_argument("--db", help="store the run in this SQLite file")
    ap.add_argument("--model", choices=sorted(tiny_lm.CONFIGS), default="llama")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--steps-per-epoch", type=int, default=150)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=512, help="tokens per sequence")
    ap.add_argument("--logging-steps", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2, help="DataLoader workers (forked after the meter opens)")
    ap.add_argument("--json", help="write the records and the log history here")
    return ap.parse_args()


class RandomTokens:
    """A map-style dataset of random sequences: the labels are the inputs (causal LM)."""

    def __init__(self, ids):
        self.ids = ids

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def checks(cb, history, global_step):
    """(ok, lines): the callback's promises checked against its records and the log history."""
    lines, ok = [], True

    def check(good, text):
        nonlocal ok
        ok = ok and good
        lines.append(("PASS " if good else "FAIL ") + text)

    check(len(cb.steps) == global_step and all(r["final"] for r in cb.steps),
          f"{len(cb.steps)} step records for {global_step} steps, {sum(r['final'] for r in cb.steps)} final")
    missing = [r for r in cb.steps + cb.epochs if r["energy_j"] is None]
    check(not missing, f"{len(missing)} windows without an estimate"
          + (f" (the first one's issues: {missing[0]['issues']})" if missing else ""))
    if missing:
        return False, lines
    logs = [h for h in history if "energy_steps" in h]
    logged = sum(h["energy_steps"] for h in logs)
    check(logged == global_step, f"the logs cover {logged} steps of {global_step}, in {len(logs)} logs")
    by_step = {r["step"]: r for r in cb.steps}
    last, worst = 0, 0.0
    for h in logs:
        covered = [by_step[s] for s in range(last + 1, h["energy_last_step"] + 1) if s in by_step]
        worst = max(worst, abs(h["energy_j"] - sum(r["energy_j"] for r in covered)))
        last = h["energy_last_step"]
    check(worst < 1e-6, f"each log's energy is the sum of its steps' (largest difference {worst:.2e} J)")
    for e in cb.epochs:
        steps = [r for r in cb.steps if r["epoch"] == e["epoch"]]
        sum_j = sum(r["energy_j"] for r in steps)
        bound = math.sqrt(e["energy_u95_j"] ** 2 + sum(r["energy_u95_j"] ** 2 for r in steps))
        check(e["final"] and e["energy_j"] >= sum_j - bound,
              f"epoch {e['epoch']}: {e['energy_j']:.1f} J ± {e['energy_u95_j']:.1f} J, its {len(steps)} steps "
              f"{sum_j:.1f} J (outside the steps: {e['energy_j'] - sum_j:.1f} J ± {bound:.1f} J)")
    return ok, lines


def main():
    a = parse()
    torch, transformers = tiny_lm.require("trainer_h200.py", "torch", "transformers")
    from wattlab.integrations.transformers import WattlabTrainerCallback

    cuda = torch.cuda.is_available()
    model, config = tiny_lm.build(torch, transformers, a.model, "cpu")  # the Trainer moves it
    data = RandomTokens(tiny_lm.random_tokens(torch, a.steps_per_epoch * a.batch, a.seq, config.vocab_size))
    with tempfile.TemporaryDirectory() as out:
        args = transformers.TrainingArguments(
            output_dir=out, per_device_train_batch_size=a.batch, num_train_epochs=a.epochs,
            logging_steps=a.logging_steps, save_strategy="no", report_to="none", bf16=cuda,
            dataloader_num_workers=a.workers, disable_tqdm=True, seed=0)
        trainer = transformers.Trainer(model=model, args=args, train_dataset=data)
        cb = WattlabTrainerCallback(devices=a.device, db=a.db).attach(trainer)
        print(f"transformers {transformers.__version__}, torch {torch.__version__}, "
              f"{torch.cuda.get_device_name(0) if cuda else 'CPU'}, {a.model} "
              f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters, batch {a.batch} x {a.seq} tokens",
              flush=True)
        trainer.train()
    history = trainer.state.log_history
    for h in history:
        if "energy_steps" in h:
            tag = " SIMULATED" if h.get("energy_simulated") else ""
            line = (f"log at step {h['step']}: loss {h.get('loss', float('nan')):.4f}, {h['energy_j']:.2f} J ± "
                    f"{h['energy_u95_j']:.2f} J (95 %) over {h['energy_steps']} steps through step "
                    f"{h['energy_last_step']}, {h['energy_per_step_j']:.3f} J/step")
            if "energy_epoch_j" in h:
                line += f"; epoch {h['energy_epoch']}: {h['energy_epoch_j']:.1f} J ± {h['energy_epoch_u95_j']:.1f} J"
            print(line + tag)
    for r in cb.steps + cb.epochs:
        print(tiny_lm.describe(r))
    ok, lines = checks(cb, history, trainer.state.global_step)
    print("\n".join(lines))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"steps": cb.steps, "epochs": cb.epochs, "log_history": history,
                       "transformers": transformers.__version__, "torch": torch.__version__}, f, indent=1)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
