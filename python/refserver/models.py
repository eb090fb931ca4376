"""Model shapes spelled out (the published config.json of each model) and random-weight models built
from them: nothing is downloaded, the GPU machine has no weights. torch and transformers are
imported only inside the functions that build a model, so shapes and sizes work without them."""
import time

_LLAMA3 = dict(rope_theta=500000.0, rms_norm_eps=1e-5, hidden_act="silu", initializer_range=0.02,
               attention_bias=False, mlp_bias=False, bos_token_id=128000, eos_token_id=128001)

SHAPES = {
    # meta-llama/Llama-3.1-8B-Instruct: 8.03B parameters, 32 layers, GQA 32/8.
    "llama-8b": dict(family="llama", architecture="LlamaForCausalLM", model_id="random/Llama-3.1-8B-shape",
                     config=dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                                 num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                                 max_position_embeddings=131072, tie_word_embeddings=False, **_LLAMA3)),
    # meta-llama/Llama-3.2-3B-Instruct: 3.21B, 28 layers, GQA 24/8, tied embeddings.
    "llama-3b": dict(family="llama", architecture="LlamaForCausalLM", model_id="random/Llama-3.2-3B-shape",
                     config=dict(vocab_size=128256, hidden_size=3072, intermediate_size=8192, num_hidden_layers=28,
                                 num_attention_heads=24, num_key_value_heads=8, head_dim=128,
                                 max_position_embeddings=131072, tie_word_embeddings=True, **_LLAMA3)),
    # meta-llama/Llama-3.2-1B-Instruct: 1.24B, 16 layers, GQA 32/8, head 64, tied embeddings.
    "llama-1b": dict(family="llama", architecture="LlamaForCausalLM", model_id="random/Llama-3.2-1B-shape",
                     config=dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                                 num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                                 max_position_embeddings=131072, tie_word_embeddings=True, **_LLAMA3)),
    # mistralai/Mixtral-8x7B: 46.7B parameters, 12.9B active (8 experts, top 2).
    "mixtral-8x7b": dict(family="mixtral", architecture="MixtralForCausalLM", model_id="random/Mixtral-8x7B-shape",
                         config=dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                                     num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                                     max_position_embeddings=32768, rms_norm_eps=1e-5, rope_theta=1e6,
                                     hidden_act="silu", initializer_range=0.02, num_local_experts=8,
                                     num_experts_per_tok=2, router_aux_loss_coef=0.0, output_router_logits=False,
                                     tie_word_embeddings=False, sliding_window=None, bos_token_id=1, eos_token_id=2)),
    # A Llama of 0.1M parameters for tests on a CPU.
    "tiny": dict(family="llama", architecture="LlamaForCausalLM", model_id="random/tiny-llama",
                 config=dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=4096,
                             tie_word_embeddings=False, **_LLAMA3)),
}


def head_dim(c):
    return c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]


def param_count(c, active=False):
    """Parameters of a Llama/Mixtral-shaped decoder from its config (active: routed experts only)."""
    h, i, hd = c["hidden_size"], c["intermediate_size"], head_dim(c)
    attn = h * c["num_attention_heads"] * hd * 2 + h * c["num_key_value_heads"] * hd * 2
    experts = c.get("num_local_experts")
    if experts:
        used = c["num_experts_per_tok"] if active else experts
        mlp = used * 3 * h * i + h * experts  # experts and the router
    else:
        mlp = 3 * h * i
    layer = attn + mlp + 2 * h  # two RMSNorms
    embed = c["vocab_size"] * h
    head = 0 if c.get("tie_word_embeddings") else embed
    return embed + c["num_hidden_layers"] * layer + h + head


def kv_bytes_per_token(c, dtype_bytes=2):
    """KV-cache bytes one token holds: K and V of every layer's KV heads."""
    return 2 * c["num_hidden_layers"] * c["num_key_value_heads"] * head_dim(c) * dtype_bytes


def build_random_model(shape, device, dtype_name="bfloat16", seed=0, attn_implementation="sdpa", log=print):
    """Builds the shape's model on `device` and initializes EVERY parameter explicitly: matrices
    normal(0, initializer_range), norms 1, biases 0 (a constructor may leave memory uninitialized
    when it expects a checkpoint). Returns (model, config)."""
    import torch
    import transformers

    spec = SHAPES[shape]
    cfg_cls = getattr(transformers, "LlamaConfig" if spec["family"] == "llama" else "MixtralConfig")
    cfg = cfg_cls(**spec["config"])
    cfg._attn_implementation = attn_implementation
    dtype = getattr(torch, dtype_name)
    t0 = time.monotonic()
    torch.manual_seed(seed)
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # built straight in the target dtype: an fp32 model may not fit
    try:
        with torch.device(device):
            model = getattr(transformers, spec["architecture"])(cfg)
    finally:
        torch.set_default_dtype(old)
    model.to(dtype)
    std = cfg.initializer_range
    n_normal = 0
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim == 1:
                p.fill_(1.0 if "norm" in name.lower() else 0.0)
            else:
                p.normal_(0.0, std)
                n_normal += p.numel()
    model.eval()
    n = sum(p.numel() for p in model.parameters())
    w = next(p for _, p in model.named_parameters() if p.ndim == 2)
    log(f"built {spec['model_id']} on {device}: {n / 1e9:.3f}B parameters in {time.monotonic() - t0:.1f} s; "
        f"normal(0, {std}) on {n_normal / 1e9:.3f}B, sample weight std {w.float().std().item():.4f}")
    return model, cfg


def check_finite(model, cfg, device, log=print):
    """A forward pass must give finite logits, or the weights are not what they claim."""
    import torch

    ids = torch.randint(0, cfg.vocab_size, (2, 16), device=device)
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    ok = bool(torch.isfinite(logits).all().item())
    log(f"finite-output check: {'ok' if ok else 'FAILED'} (logits std {logits.float().std().item():.3f})")
    if not ok:
        raise SystemExit("logits are not finite: the weights are not initialized as expected")
