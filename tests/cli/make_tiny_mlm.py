#!/usr/bin/env python3
"""Writes a tiny XLM-R masked language model directory by hand (stdlib only), for probe tests.

  make_tiny_mlm.py [--hidden H --layers L --heads A --ffn F --positions P] OUT_DIR SPM_MODEL bias PIECE BIAS
      every weight 0, LayerNorm weights 1, lm_head.bias[PIECE] = BIAS: every hidden state is 0,
      so the logits at every position are lm_head.bias itself, and the best token and its
      log-probability are known by hand: BIAS - log(exp(BIAS) + V - 1).
  make_tiny_mlm.py OUT_DIR SPM_MODEL random SEED
      weights drawn N(0, --std) (LayerNorm weights 1 + N(0, --std / 4)) from SEED: a context-dependent
      model for comparing decoders with an independent implementation.
Prints the id of PIECE (bias) or the vocabulary size (random)."""
import argparse
import array
import json
import os
import random
import shutil
import struct
import sys


def spm_pieces(path):
    """The pieces of a SentencePiece model, read from its protobuf (ModelProto.pieces = field 1,
    SentencePiece.piece = field 1), without the sentencepiece module."""
    data = open(path, 'rb').read()

    def varint(buf, i):
        shift = value = 0
        while True:
            b = buf[i]
            i += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value, i

    pieces, i = [], 0
    while i < len(data):
        key, i = varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = varint(data, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = varint(data, i)
            if field == 1:
                sub, j = data[i:i + n], 0
                while j < len(sub):
                    k, j = varint(sub, j)
                    if k >> 3 == 1 and k & 7 == 2:
                        m, j = varint(sub, j)
                        pieces.append(sub[j:j + m].decode('utf-8'))
                        break
                    if k & 7 == 0:
                        _, j = varint(sub, j)
                    elif k & 7 == 5:
                        j += 4
                    elif k & 7 == 1:
                        j += 8
                    else:
                        m, j = varint(sub, j)
                        j += m
            i += n
        else:
            raise SystemExit('unexpected protobuf wire type %d in %s' % (wire, path))
    return pieces


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--ffn", type=int, default=32)
    ap.add_argument("--positions", type=int, default=64)
    ap.add_argument("--std", type=float, default=0.4,
                    help="random: the weights' standard deviation (LayerNorm weights 1 + N(0, std / 4))")
    ap.add_argument("--vocab", type=int, default=0,
                    help="random: the model's vocabulary when larger than the tokenizer's (as XLM-R's 250,002); "
                         "the extra rows repeat the tokenizer's rows, their bias 10 lower")
    ap.add_argument("args", nargs="+")
    a = ap.parse_args()
    out, spm, mode = a.args[0], a.args[1], a.args[2]
    HIDDEN, LAYERS, HEADS, FFN, POSITIONS = a.hidden, a.layers, a.heads, a.ffn, a.positions
    pieces = spm_pieces(spm)
    vocab = len(pieces) + 2  # fairseq: <s> <pad> </s> <unk>, pieces from 4 (offset 1), <mask>
    rows = max(vocab, a.vocab) if mode == 'random' else vocab
    names = {}
    for i, p in enumerate(pieces):
        names.setdefault(p, i + 1)
    for i, p in enumerate(['<s>', '<pad>', '</s>', '<unk>']):
        names[p] = i
    rng = random.Random(int(a.args[3]) if mode == 'random' else 0)

    def tensor(shape, kind):
        n = 1
        for d in shape:
            n *= d
        if kind == 'ones':
            values = [1.0] * n if mode == 'bias' else [1.0 + rng.gauss(0, a.std / 4) for _ in range(n)]
        elif mode == 'bias':
            values = [0.0] * n
        else:
            values = [rng.gauss(0, a.std) for _ in range(n)]
        return shape, values

    def tiled(t, n):
        """t's rows repeated to n rows (cheap: no per-value Python loop)."""
        shape, values = t
        if n == shape[0]:
            return t
        width = len(values) // shape[0]
        whole, part = divmod(n, shape[0])
        return [n] + shape[1:], values * whole + values[:part * width]

    h = HIDDEN
    t = {}
    e = 'roberta.embeddings.'
    t[e + 'word_embeddings.weight'] = tiled(tensor([vocab, h], 'w'), rows)
    t[e + 'position_embeddings.weight'] = tensor([POSITIONS, h], 'w')
    t[e + 'token_type_embeddings.weight'] = tensor([1, h], 'w')
    t[e + 'LayerNorm.weight'] = tensor([h], 'ones')
    t[e + 'LayerNorm.bias'] = tensor([h], 'w')
    for l in range(LAYERS):
        p = 'roberta.encoder.layer.%d.' % l
        for name in ('query', 'key', 'value'):
            t[p + 'attention.self.%s.weight' % name] = tensor([h, h], 'w')
            t[p + 'attention.self.%s.bias' % name] = tensor([h], 'w')
        t[p + 'attention.output.dense.weight'] = tensor([h, h], 'w')
        t[p + 'attention.output.dense.bias'] = tensor([h], 'w')
        t[p + 'attention.output.LayerNorm.weight'] = tensor([h], 'ones')
        t[p + 'attention.output.LayerNorm.bias'] = tensor([h], 'w')
        t[p + 'intermediate.dense.weight'] = tensor([FFN, h], 'w')
        t[p + 'intermediate.dense.bias'] = tensor([FFN], 'w')
        t[p + 'output.dense.weight'] = tensor([h, FFN], 'w')
        t[p + 'output.dense.bias'] = tensor([h], 'w')
        t[p + 'output.LayerNorm.weight'] = tensor([h], 'ones')
        t[p + 'output.LayerNorm.bias'] = tensor([h], 'w')
    t['lm_head.dense.weight'] = tensor([h, h], 'w')
    t['lm_head.dense.bias'] = tensor([h], 'w')
    t['lm_head.layer_norm.weight'] = tensor([h], 'ones')
    t['lm_head.layer_norm.bias'] = tensor([h], 'w')
    # The extra rows' bias is 10 lower, so that they never tie with the tokenizer's rows.
    shape, bias = tiled(tensor([vocab], 'w'), rows)
    t['lm_head.bias'] = shape, bias[:vocab] + [v - 10 for v in bias[vocab:]]
    answer = rows
    if mode == 'bias':
        piece, bias = a.args[3], float(a.args[4])
        answer = names[piece]
        t['lm_head.bias'][1][answer] = bias

    os.makedirs(out, exist_ok=True)
    header, blobs, offset = {}, [], 0
    for name, (shape, values) in t.items():
        blob = array.array('f', values)
        if sys.byteorder != 'little':
            blob.byteswap()
        blob = blob.tobytes()
        header[name] = {'dtype': 'F32', 'shape': shape, 'data_offsets': [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b' ' * ((8 - (8 + len(text)) % 8) % 8)
    with open(os.path.join(out, 'model.safetensors'), 'wb') as f:
        f.write(struct.pack('<Q', len(text)) + text + b''.join(blobs))
    config = {
        'architectures': ['XLMRobertaForMaskedLM'], 'model_type': 'xlm-roberta', 'vocab_size': rows,
        'hidden_size': h, 'num_hidden_layers': LAYERS, 'num_attention_heads': HEADS, 'intermediate_size': FFN,
        'hidden_act': 'gelu', 'hidden_dropout_prob': 0.1, 'attention_probs_dropout_prob': 0.1,
        'max_position_embeddings': POSITIONS, 'type_vocab_size': 1, 'layer_norm_eps': 1e-5,
        'pad_token_id': 1, 'bos_token_id': 0, 'eos_token_id': 2,
    }
    with open(os.path.join(out, 'config.json'), 'w') as f:
        json.dump(config, f, indent=2)
    shutil.copyfile(spm, os.path.join(out, 'sentencepiece.bpe.model'))
    print(answer)


if __name__ == '__main__':
    main()
