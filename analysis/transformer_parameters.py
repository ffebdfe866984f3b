#!/usr/bin/python3
"""Parameter counts of Tessera's transformer zoo models against PyTorch modules of the same
configuration, built here for the purpose from torch.nn's own layers.

    transformer_parameters.py TESSERA [--config NAME ...]

For each configuration (GPT-2 small to XL, BERT-large, and small ones) this asks
`TESSERA describe` for the zoo model's parameter count (--json) and builds the PyTorch twin:
GPT-2 as in Radford et al. (2019) and Hugging Face's GPT2LMHeadModel (token and position
embeddings, pre-norm blocks of attention and a 4x GELU MLP, a final LayerNorm, the language-model
head tied to the token embedding); BERT-large as Devlin et al. (2019) with the masked-language-model
head (its transform and the decoder tied to the word embedding, with its own bias), without the
pooler and next-sentence head. Attention is torch.nn.MultiheadAttention (in_proj 3C x C,
out_proj C x C, with biases). Prints one line per configuration and exits 1 on any mismatch,
2 on bad input. Needs PyTorch (Debian's python3-torch; run with /usr/bin/python3).
"""

import argparse
import json
import subprocess
import sys
import tempfile

import torch
from torch import nn

CONFIGS = {
    # name: (zoo model, options)
    "gpt2": ("gpt2", {}),
    "gpt2_medium": ("gpt2", {"layers": 24, "hidden": 1024, "heads": 16}),
    "gpt2_large": ("gpt2", {"layers": 36, "hidden": 1280, "heads": 20}),
    "gpt2_xl": ("gpt2", {"layers": 48, "hidden": 1600, "heads": 25}),
    "gpt_tiny": ("gpt2", {"layers": 2, "hidden": 64, "heads": 4, "sequence_length": 16,
                          "vocabulary": 97}),
    "bert_large": ("bert", {}),
    "bert_tiny": ("bert", {"layers": 2, "hidden": 64, "heads": 4, "sequence_length": 16,
                           "vocabulary": 101}),
}

GPT2_DEFAULTS = {"layers": 12, "hidden": 768, "heads": 12, "sequence_length": 1024,
                 "vocabulary": 50257}
BERT_DEFAULTS = {"layers": 24, "hidden": 1024, "heads": 16, "sequence_length": 512,
                 "vocabulary": 30522}

# Every parameter on PyTorch's meta device: its shape without storage, so GPT-2 XL's 1.6e9
# parameters are counted without allocating and initialising 6 GB.
META = {"device": "meta"}


class Block(nn.Module):
    """One transformer block: attention and a 4x MLP, each with its LayerNorm."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.attention_norm = nn.LayerNorm(hidden, **META)
        self.attention = nn.MultiheadAttention(hidden, heads, bias=True, **META)
        self.mlp_norm = nn.LayerNorm(hidden, **META)
        self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden, **META), nn.GELU(),
                                 nn.Linear(4 * hidden, hidden, **META))


class Gpt2(nn.Module):
    def __init__(self, layers, hidden, heads, sequence_length, vocabulary):
        super().__init__()
        self.tokens = nn.Embedding(vocabulary, hidden, **META)
        self.positions = nn.Embedding(sequence_length, hidden, **META)
        self.blocks = nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.final_norm = nn.LayerNorm(hidden, **META)
        self.head = nn.Linear(hidden, vocabulary, bias=False, **META)
        self.head.weight = self.tokens.weight  # tied


class Bert(nn.Module):
    def __init__(self, layers, hidden, heads, sequence_length, vocabulary):
        super().__init__()
        self.words = nn.Embedding(vocabulary, hidden, **META)
        self.positions = nn.Embedding(sequence_length, hidden, **META)
        self.token_types = nn.Embedding(2, hidden, **META)
        self.embedding_norm = nn.LayerNorm(hidden, **META)
        self.blocks = nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.transform = nn.Linear(hidden, hidden, **META)
        self.transform_norm = nn.LayerNorm(hidden, **META)
        self.decoder = nn.Linear(hidden, vocabulary, bias=True, **META)
        self.decoder.weight = self.words.weight  # tied; the bias is its own


def twin(model, options):
    defaults = GPT2_DEFAULTS if model == "gpt2" else BERT_DEFAULTS
    config = {**defaults, **options}
    return (Gpt2 if model == "gpt2" else Bert)(**config)


def count(module):
    """Parameters, each tensor once (tied weights are one tensor)."""
    return sum(p.numel() for p in module.parameters())


def tessera_count(tessera, model, options):
    scenario = {"name": f"{model}-parameters", "model": {"zoo": model, "options": options,
                                                         "mini_batch": 1}}
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as handle:
        json.dump(scenario, handle)  # JSON is YAML
        handle.flush()
        described = subprocess.run([tessera, "describe", handle.name, "--json"],
                                   capture_output=True, text=True, check=False)
    if described.returncode != 0:
        raise RuntimeError(f"tessera describe {model} {options}: {described.stderr.strip()}")
    return json.loads(described.stdout)["parameters"]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tessera", help="the tessera binary")
    parser.add_argument("--config", action="append", choices=sorted(CONFIGS),
                        help="only these configurations (default: all)")
    args = parser.parse_args(argv)
    mismatches = 0
    for name in args.config or CONFIGS:
        model, options = CONFIGS[name]
        expected = count(twin(model, options))
        try:
            obtained = tessera_count(args.tessera, model, options)
        except RuntimeError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        verdict = "as in PyTorch" if obtained == expected else "MISMATCH"
        mismatches += obtained != expected
        print(f"{name}: Tessera {obtained:,} parameters, PyTorch {expected:,}: {verdict}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
