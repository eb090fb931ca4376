#!/usr/bin/env python3
"""A real PyTorch Lightning fit with wattlab's callback: a small causal transformer in plain torch
with random weights, random token data, two epochs with gradient accumulation, Lightning's
CSVLogger, and wattlab.integrations.lightning.WattlabLightningCallback. Prints every step's and
epoch's energy ± its 95 % uncertainty and the rows the logger wrote, and checks:

  - every optimizer step has one final window (spanning its accumulated batches);
  - the logger got each step's energy once, at the step Lightning logs that step's loss at, and
    each epoch's.

    WATTLAB_LIBRARY=build/release/src/capi/libwattlab.so.1 python3 python/bench/lightning_h200.py

Exit status 0: every check passed; 1: one failed; 2: torch or Lightning missing, or bad usage.
"""
import argparse
import csv
import importlib
import os
import sys
import tempfile

import tiny_lm


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="auto", help="wattlab devices: auto | nvml | sim (default auto)")
    ap.add_argument("--db", help="store the run in this SQLite file")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batches", type=int, default=200, help="batches per epoch")
    ap.add_argument("--accumulate", type=int, default=2, help="accumulate_grad_batches")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=256)
    return ap.parse_args()


def lightning_package():
    for name in ("lightning.pytorch", "pytorch_lightning"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    print("lightning_h200.py: needs lightning (lightning.pytorch or pytorch_lightning); neither imports. "
          "Run it where it is installed (the GPU machine).", file=sys.stderr)
    sys.exit(2)


def model_class(torch, L, vocab_size):
    nn = torch.nn

    class TinyLM(L.LightningModule):
        def __init__(self, d=512, layers=4, heads=8):
            super().__init__()
            self.embed = nn.Embedding(vocab_size, d)
            layer = nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True, norm_first=True)
            self.body = nn.TransformerEncoder(layer, layers)
            self.head = nn.Linear(d, vocab_size)

        def training_step(self, batch, batch_idx):
            (x,) = batch
            causal = nn.Transformer.generate_square_subsequent_mask(x.shape[1], device=x.device)
            logits = self.head(self.body(self.embed(x), mask=causal, is_causal=True))
            loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, vocab_size), x[:, 1:].reshape(-1))
            self.log("loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-4)

    return TinyLM


def main():
    a = parse()
    (torch,) = tiny_lm.require("lightning_h200.py", "torch")
    L = lightning_package()
    from wattlab.integrations.lightning import WattlabLightningCallback

    vocab = 8192
    data = torch.utils.data.TensorDataset(tiny_lm.random_tokens(torch, a.batches * a.batch, a.seq, vocab))
    loader = torch.utils.data.DataLoader(data, batch_size=a.batch, num_workers=2)
    cuda = torch.cuda.is_available()
    cb = WattlabLightningCallback(devices=a.device, db=a.db)
    with tempfile.TemporaryDirectory() as out:
        logger = importlib.import_module(L.__name__ + ".loggers").CSVLogger(out)
        trainer = L.Trainer(max_epochs=a.epochs, accelerator="gpu" if cuda else "cpu", devices=1,
                            precision="bf16-mixed" if cuda else "32-true", logger=logger, callbacks=[cb],
                            accumulate_grad_batches=a.accumulate, log_every_n_steps=10,
                            enable_checkpointing=False, enable_progress_bar=False)
        torch.manual_seed(0)
        trainer.fit(model_class(torch, L, vocab)(), loader)
        with open(os.path.join(logger.log_dir, "metrics.csv")) as f:
            rows = list(csv.DictReader(f))
    print(f"{L.__name__} {getattr(L, '__version__', '(version unknown)')}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_name(0) if cuda else 'CPU'}, {trainer.global_step} optimizer steps")
    for r in cb.steps + cb.epochs:
        print(tiny_lm.describe(r))
    step_rows = sorted(int(r["step"]) for r in rows if r.get("energy_step_j"))
    epoch_rows = [r for r in rows if r.get("energy_epoch_j")]
    for r in epoch_rows:
        print(f"logger row at step {r['step']}: epoch {r['epoch']} {float(r['energy_epoch_j']):.1f} J "
              f"± {float(r['energy_epoch_u95_j']):.1f} J")
    n = trainer.global_step
    results = [
        (len(cb.steps) == n and all(r["final"] for r in cb.steps),
         f"{len(cb.steps)} step windows for {n} optimizer steps, {sum(r['final'] for r in cb.steps)} final"),
        (all(r["counts"].get("batches") == a.accumulate for r in cb.steps),
         f"each step window spans {a.accumulate} batches"),
        (step_rows == list(range(n)), f"the logger got {len(step_rows)} step energies, at steps 0..{n - 1} once each"),
        (len(epoch_rows) == a.epochs, f"the logger got {len(epoch_rows)} epoch energies of {a.epochs}"),
    ]
    for good, text in results:
        print(("PASS " if good else "FAIL ") + text)
    ok = all(good for good, _ in results)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
