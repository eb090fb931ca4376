"""What the GPU-machine scripts of the integrations share (trainer_h200.py, generate_h200.py,
lightning_h200.py): importing the frameworks with a clear message where they are missing, a small
causal language model with random weights built from an inline configuration (no download, no
network), random token data, and the line that says what a record measured."""
import importlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Small shapes of two real architectures (config.json fields), sized to train in seconds on one GPU.
CONFIGS = {
    "llama": ("LlamaConfig", "LlamaForCausalLM",
              dict(vocab_size=8192, hidden_size=512, intermediate_size=1536, num_hidden_layers=6,
                   num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=1024,
                   rms_norm_eps=1e-5, initializer_range=0.02, tie_word_embeddings=False,
                   bos_token_id=1, eos_token_id=2, pad_token_id=0)),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel",
             dict(vocab_size=8192, n_embd=512, n_layer=6, n_head=8, n_positions=1024, initializer_range=0.02,
                  bos_token_id=1, eos_token_id=2, pad_token_id=0)),
}


def require(script, *modules):
    """The modules imported, or exit status 2 with a message naming each one missing."""
    found, missing = [], []
    for name in modules:
        try:
            found.append(importlib.import_module(name))
        except ImportError as e:
            missing.append(f"{name} ({e})")
    if missing:
        print(f"{script}: needs {', '.join(modules)}; missing: {'; '.join(missing)}. "
              "Run it where they are installed (the GPU machine).", file=sys.stderr)
        sys.exit(2)
    return found


def build(torch, transformers, family, device):
    """The model of `family` with random weights set explicitly (normal(0, initializer_range) for
    matrices, 1 for norm weights, 0 for biases), on `device`, and its configuration."""
    config_name, model_name, fields = CONFIGS[family]
    config = getattr(transformers, config_name)(**fields)
    torch.manual_seed(0)
    model = getattr(transformers, model_name)(config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim >= 2:
                p.normal_(0.0, config.initializer_range)
            elif "norm" in name.lower() or "ln_" in name.lower():
                p.fill_(1.0)
            else:
                p.zero_()
    return model.to(device), config


def random_tokens(torch, rows, length, vocab_size, seed=0):
    """Token ids drawn uniformly from [3, vocab_size): no pad (0), BOS (1) or EOS (2) inside."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(3, vocab_size, (rows, length), generator=g)


def describe(r):
    """One record (a step's, an epoch's) as a line: what it is, its energy ± U95, how it was made."""
    tag = " SIMULATED" if r["simulated"] else ""
    state = "" if r["final"] else " PROVISIONAL"
    if r["energy_j"] is None:
        return (f"{r['kind']} {r['step']:>5} (epoch {r['epoch']}): {r['dur_s']:.3f} s, no estimate "
                f"{r['issues']}{state}{tag}")
    return (f"{r['kind']} {r['step']:>5} (epoch {r['epoch']}): {r['dur_s']:.3f} s, {r['energy_j']:.3f} J "
            f"± {r['energy_u95_j']:.3f} J (95 %; gain ± {r['systematic_j']:.3f} J), mean {r['mean_power_w']:.1f} W, "
            f"{r['estimator']}{state}{tag}")
