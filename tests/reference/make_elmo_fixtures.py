#!/usr/bin/python3
"""Regenerate the PyTorch parity fixtures of kglm's ELMo: tests/reference/data/elmo-ops.safetensors (the
ops) and tests/reference/data/elmo-tiny/ (a whole bidirectional model: options.json, reference.safetensors).

    /usr/bin/python3 tests/reference/make_elmo_fixtures.py [--out DIR]

Plain torch (Debian's python3-torch, CPU), float64, weights in the layouts of bilm-tf's weights.hdf5
(TensorFlow's): what the C++ test converts is what the checkpoint reader will convert.
  * lstm: TensorFlow's LSTMCell(num_proj, cell_clip, proj_clip), written in torch ops (nn.LSTM has
    no clipping): z = [x, h]·W_0 + B; i, j, f, o = split(z); c = clip(σ(f + 1)·c + σ(i)·tanh(j));
    h = clip((σ(o)·tanh(c))·W_P_0). Five steps of three streams, from a given state.
  * char encoder: character embeddings, three convolution widths (torch conv1d on W_cnn moved from
    TensorFlow's [1, w, e, F] to torch's [F, e, w]), max over positions, ReLU, one highway layer
    (y = g·relu(x·W_transform + b_transform) + (1 − g)·x, g = σ(x·W_carry + b_carry)), the projection.
  * sampled softmax: tf.nn.sampled_softmax_loss's logits with subtract_log_q (TensorFlow's expected
    counts of a unique log-uniform draw) and remove_accidental_hits, one given draw for every row.
  * Adagrad: TensorFlow's clip_by_global_norm, then torch.optim.Adagrad with eps=0 (TensorFlow's
    ApplyAdagrad), lr 0.2, accumulators from 1.0: three steps on two parameters.
  * the model (elmo-tiny): the character encoder, two projected LSTM layers per direction with the
    residual into the second, the full softmax shared by both directions; two batches of 2 windows
    of 3 steps, the LSTM state carried from the first into the second (detached, as bilm-tf's
    truncated back-propagation): both batches' losses and the second batch's gradients, in the
    bilm-tf names and layouts of weights.hdf5 (plus softmax/W and softmax/b); and the weights as the
    weights.hdf5 that bilm-tf's dump_weights writes with h5py (no softmax).
Each case stores its inputs, a weighting `wy` of its outputs (the loss is Σ wy·out, or the softmax
loss), the outputs, and the gradients of every input, all rounded to F32 from the float64 values.
"""

import argparse
import json
import math
import os
import sys
from collections import OrderedDict

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_min import read_safetensors, write_safetensors  # noqa: E402

torch.set_default_dtype(torch.float64)


def uniform(shape, lo, hi, gen):
    return lo + (hi - lo) * torch.rand(shape, generator=gen)


def lstm_case(gen, out):
    steps, streams, inputs, cell, proj = 5, 3, 6, 7, 4
    cell_clip, proj_clip = 0.8, 0.3
    x = uniform((steps, streams, inputs), -1, 1, gen).requires_grad_()
    w0 = uniform((inputs + proj, 4 * cell), -0.6, 0.6, gen).requires_grad_()
    b = uniform((4 * cell,), -0.5, 0.5, gen).requires_grad_()
    wp = uniform((cell, proj), -0.6, 0.6, gen).requires_grad_()
    h0 = uniform((streams, proj), -proj_clip, proj_clip, gen)
    c0 = uniform((streams, cell), -cell_clip, cell_clip, gen)
    wy = uniform((steps, streams, proj), -1, 1, gen)
    h, c, hs, clipped = h0, c0, [], [0, 0]
    for t in range(steps):
        z = torch.cat([x[t], h], dim=1) @ w0 + b
        i, j, f, o = z.split(cell, dim=1)
        c = torch.sigmoid(f + 1.0) * c + torch.sigmoid(i) * torch.tanh(j)
        clipped[0] += int((c.abs() > cell_clip).sum())
        c = c.clamp(-cell_clip, cell_clip)
        p = (torch.sigmoid(o) * torch.tanh(c)) @ wp
        clipped[1] += int((p.abs() > proj_clip).sum())
        h = p.clamp(-proj_clip, proj_clip)
        hs.append(h)
    hs = torch.stack(hs)
    assert 0 < clipped[0] < steps * streams * cell and 0 < clipped[1] < steps * streams * proj, clipped
    (wy * hs).sum().backward()
    for name, t in [("x", x), ("W_0", w0), ("B", b), ("W_P_0", wp), ("h0", h0), ("c0", c0), ("wy", wy),
                    ("h", hs), ("c_last", c)]:
        out["lstm." + name] = t.detach()
    for name, t in [("x", x), ("W_0", w0), ("B", b), ("W_P_0", wp)]:
        out["lstm.grad." + name] = t.grad
    out["lstm.sizes"] = torch.tensor([steps, streams, inputs, cell, proj], dtype=torch.int32)
    out["lstm.clips"] = torch.tensor([cell_clip, proj_clip])
    return clipped


def char_encoder_case(gen, out):
    words, chars, embed, characters, projection = 4, 9, 5, 261, 6
    filters = [(1, 3), (2, 4), (3, 2)]
    ids = torch.randint(0, characters, (words, chars), generator=gen, dtype=torch.int64)
    table = uniform((characters, embed), -1, 1, gen).requires_grad_()
    convs = [(uniform((1, w, embed, n), -0.5, 0.5, gen).requires_grad_(), uniform((n,), -0.2, 0.2, gen).requires_grad_())
             for w, n in filters]
    total = sum(n for _, n in filters)
    carry = uniform((total, total), -0.5, 0.5, gen).requires_grad_()
    b_carry = uniform((total,), -0.5, 0.5, gen).requires_grad_()
    transform = uniform((total, total), -0.5, 0.5, gen).requires_grad_()
    b_transform = uniform((total,), -0.5, 0.5, gen).requires_grad_()
    w_proj = uniform((total, projection), -0.5, 0.5, gen).requires_grad_()
    b_proj = uniform((projection,), -0.2, 0.2, gen).requires_grad_()
    wy = uniform((words, projection), -1, 1, gen)
    embedded = table[ids]                   # [N, L, e]
    pooled = []
    for w_cnn, b_cnn in convs:
        weight = w_cnn[0].permute(2, 1, 0)  # [1, w, e, F] -> [F, e, w]
        conv = torch.nn.functional.conv1d(embedded.transpose(1, 2), weight, b_cnn)  # [N, F, positions]
        pooled.append(conv.max(dim=2).values)
    x = torch.relu(torch.cat(pooled, dim=1))
    g = torch.sigmoid(x @ carry + b_carry)
    y = g * torch.relu(x @ transform + b_transform) + (1 - g) * x
    token = y @ w_proj + b_proj
    (wy * token).sum().backward()
    out["char.ids"] = ids.to(torch.int32)
    out["char.filters"] = torch.tensor(filters, dtype=torch.int32)
    named = [("char_embed", table), ("W_carry", carry), ("b_carry", b_carry), ("W_transform", transform),
             ("b_transform", b_transform), ("W_proj", w_proj), ("b_proj", b_proj)]
    for k, (w_cnn, b_cnn) in enumerate(convs):
        named += [(f"W_cnn_{k}", w_cnn), (f"b_cnn_{k}", b_cnn)]
    for name, t in named:
        out["char." + name] = t.detach()
        out["char.grad." + name] = t.grad
    out["char.wy"] = wy
    out["char.token"] = token.detach()


def log_expected_count(k, vocabulary, count, tries):
    p = math.log1p(1.0 / (k + 1)) / math.log(vocabulary + 1.0)
    if tries == count:
        return math.log(p * count)
    return math.log(-math.expm1(tries * math.log1p(-p)))


def sampled_softmax_case(gen, out):
    rows, dim, vocabulary, tries = 6, 4, 20, 9
    sample = [5, 0, 13, 2, 8]
    targets = [3, 13, 0, 19, 7, 1]  # rows 1 and 2 hit a sampled class
    h = uniform((rows, dim), -1, 1, gen).requires_grad_()
    w = uniform((vocabulary, dim), -1, 1, gen).requires_grad_()
    b = uniform((vocabulary,), -0.5, 0.5, gen).requires_grad_()
    t = torch.tensor(targets)
    s = torch.tensor(sample)
    log_q = lambda ids: torch.tensor([log_expected_count(int(k), vocabulary, len(sample), tries) for k in ids])
    true_logits = (h * w[t]).sum(1) + b[t] - log_q(t)
    sampled = h @ w[s].T + b[s] - log_q(s)
    sampled = sampled.masked_fill(t[:, None] == s[None, :], float("-inf"))
    logits = torch.cat([true_logits[:, None], sampled], dim=1)
    loss = torch.nn.functional.cross_entropy(logits, torch.zeros(rows, dtype=torch.int64), reduction="sum")
    loss.backward()
    for name, v in [("h", h), ("w", w), ("b", b)]:
        out["softmax." + name] = v.detach()
        out["softmax.grad." + name] = v.grad
    out["softmax.targets"] = t.to(torch.int32)
    out["softmax.sample"] = s.to(torch.int32)
    out["softmax.tries"] = torch.tensor([float(tries)])
    out["softmax.loss"] = loss.detach().reshape(1)


TINY = dict(cell=7, projection=5, layers=2, cell_clip=1.0, proj_clip=0.9, filters=[[1, 4], [2, 3], [3, 5]],
            highways=1, char_embedding=4, max_characters=8, vocabulary=11, windows=2, steps=3)


def tiny_options():
    t = TINY
    return {"lstm": {"dim": t["cell"], "projection_dim": t["projection"], "n_layers": t["layers"],
                     "cell_clip": t["cell_clip"], "proj_clip": t["proj_clip"], "use_skip_connections": True},
            "char_cnn": {"activation": "relu", "filters": t["filters"], "n_highway": t["highways"],
                         "embedding": {"dim": t["char_embedding"]}, "n_characters": 261,
                         "max_characters_per_token": t["max_characters"]},
            "bidirectional": True, "dropout": 0.0, "all_clip_norm_val": 10.0, "n_epochs": 1, "n_train_tokens": 0,
            "batch_size": t["windows"], "n_tokens_vocab": t["vocabulary"], "unroll_steps": t["steps"],
            "n_negative_samples_batch": 4}


def model_case(gen, out_dir):
    t = TINY
    e, p, c, v = t["char_embedding"], t["projection"], t["cell"], t["vocabulary"]
    f = sum(n for _, n in t["filters"])
    w = OrderedDict()
    w["char_embed"] = uniform((261, e), -1, 1, gen)
    for k, (width, n) in enumerate(t["filters"]):
        w[f"CNN/W_cnn_{k}"] = uniform((1, width, e, n), -0.4, 0.4, gen)
        w[f"CNN/b_cnn_{k}"] = uniform((n,), -0.1, 0.1, gen)
    for k in range(t["highways"]):
        w[f"CNN_high_{k}/W_carry"] = uniform((f, f), -0.4, 0.4, gen)
        w[f"CNN_high_{k}/W_transform"] = uniform((f, f), -0.4, 0.4, gen)
        w[f"CNN_high_{k}/b_carry"] = uniform((f,), -2.2, -1.8, gen)
        w[f"CNN_high_{k}/b_transform"] = uniform((f,), -0.1, 0.1, gen)
    w["CNN_proj/W_proj"] = uniform((f, p), -0.4, 0.4, gen)
    w["CNN_proj/b_proj"] = uniform((p,), -0.1, 0.1, gen)
    for d in range(2):
        for l in range(t["layers"]):
            cell = f"RNN_{d}/RNN/MultiRNNCell/Cell{l}/LSTMCell/"
            w[cell + "W_0"] = uniform((2 * p, 4 * c), -0.5, 0.5, gen)
            w[cell + "B"] = uniform((4 * c,), -0.3, 0.3, gen)
            w[cell + "W_P_0"] = uniform((c, p), -0.5, 0.5, gen)
    w["softmax/W"] = uniform((v, p), -0.6, 0.6, gen)
    w["softmax/b"] = uniform((v,), -0.2, 0.2, gen)
    for x in w.values():
        x.requires_grad_()

    def encode(ids):
        x = w["char_embed"][ids]
        pooled = []
        for k, (width, n) in enumerate(t["filters"]):
            conv = torch.nn.functional.conv1d(x.transpose(1, 2), w[f"CNN/W_cnn_{k}"][0].permute(2, 1, 0),
                                              w[f"CNN/b_cnn_{k}"])
            pooled.append(conv.max(dim=2).values)
        x = torch.relu(torch.cat(pooled, dim=1))
        for k in range(t["highways"]):
            g = torch.sigmoid(x @ w[f"CNN_high_{k}/W_carry"] + w[f"CNN_high_{k}/b_carry"])
            x = g * torch.relu(x @ w[f"CNN_high_{k}/W_transform"] + w[f"CNN_high_{k}/b_transform"]) + (1 - g) * x
        return x @ w["CNN_proj/W_proj"] + w["CNN_proj/b_proj"]

    def direction(d, ids, targets, state):
        b, steps = t["windows"], t["steps"]
        x = encode(ids).reshape(steps, b, p)
        new_state = []
        for l in range(t["layers"]):
            cell = f"RNN_{d}/RNN/MultiRNNCell/Cell{l}/LSTMCell/"
            h, cs = state[l]
            hs = []
            for step in range(steps):
                z = torch.cat([x[step], h], dim=1) @ w[cell + "W_0"] + w[cell + "B"]
                i, j, fg, o = z.split(c, dim=1)
                cs = (torch.sigmoid(fg + 1.0) * cs + torch.sigmoid(i) * torch.tanh(j)).clamp(-t["cell_clip"], t["cell_clip"])
                h = ((torch.sigmoid(o) * torch.tanh(cs)) @ w[cell + "W_P_0"]).clamp(-t["proj_clip"], t["proj_clip"])
                hs.append(h)
            hs = torch.stack(hs)
            x = hs + x if l > 0 else hs
            new_state.append((h.detach(), cs.detach()))
        logits = x.reshape(steps * b, p) @ w["softmax/W"].T + w["softmax/b"]
        loss = torch.nn.functional.cross_entropy(logits, targets, reduction="sum")
        return loss, new_state

    rows = t["windows"] * t["steps"]
    zero = [(torch.zeros(t["windows"], p), torch.zeros(t["windows"], c)) for _ in range(t["layers"])]
    states = [zero, zero]
    ref = OrderedDict()
    for batch in range(2):
        total = 0
        for d in range(2):
            ids = torch.randint(0, 261, (rows, t["max_characters"]), generator=gen)
            targets = torch.randint(0, v, (rows,), generator=gen)
            loss, states[d] = direction(d, ids, targets, states[d])
            ref[f"batch{batch}.dir{d}.characters"] = ids.to(torch.int32)
            ref[f"batch{batch}.dir{d}.targets"] = targets.to(torch.int32)
            ref[f"batch{batch}.dir{d}.loss"] = loss.detach().reshape(1)
            total = total + loss
        if batch == 1:
            total.backward()
    for name, x in w.items():
        ref["weight." + name] = x.detach()
        ref["grad." + name] = x.grad
    os.makedirs(out_dir, exist_ok=True)
    tensors = OrderedDict((k, x.to(torch.float32) if x.is_floating_point() else x) for k, x in ref.items())
    path = os.path.join(out_dir, "reference.safetensors")
    write_safetensors(path, tensors, {"generator": "tests/reference/make_elmo_fixtures.py"})
    # weights.hdf5 as bilm-tf's dump_weights writes it with h5py: float32 datasets named by path, no softmax.
    import h5py
    with h5py.File(os.path.join(out_dir, "weights.hdf5"), "w", track_order=True) as h5:
        for name, x in w.items():
            if not name.startswith("softmax/"):
                h5.create_dataset(name, data=x.detach().to(torch.float32).numpy(), track_times=False)
    with open(os.path.join(out_dir, "options.json"), "w") as fh:
        json.dump(tiny_options(), fh, indent=2)
        fh.write("\n")
    return path


def adagrad_case(gen, out):
    """TensorFlow's clip_by_global_norm then torch.optim.Adagrad with eps=0 (= TensorFlow's ApplyAdagrad)."""
    p0 = uniform((3, 5), -1, 1, gen).to(torch.float32)
    p1 = uniform((4,), -1, 1, gen).to(torch.float32)
    out["adagrad.init.p0"], out["adagrad.init.p1"] = p0.clone(), p1.clone()
    params = [p0.clone().double().requires_grad_(), p1.clone().double().requires_grad_()]
    opt = torch.optim.Adagrad(params, lr=0.2, initial_accumulator_value=1.0, eps=0.0)
    clip = 1.0
    for step in range(3):
        g0 = uniform((3, 5), -1, 1, gen).to(torch.float32)
        g1 = uniform((4,), -1, 1, gen).to(torch.float32)
        out[f"adagrad.grad.{step}.p0"], out[f"adagrad.grad.{step}.p1"] = g0, g1
        norm = math.sqrt(float((g0.double() ** 2).sum() + (g1.double() ** 2).sum()))
        scale = clip / max(norm, clip)
        params[0].grad, params[1].grad = g0.double() * scale, g1.double() * scale
        opt.step()
        out[f"adagrad.after.{step}.p0"], out[f"adagrad.after.{step}.p1"] = params[0].detach().clone(), params[1].detach().clone()
        out[f"adagrad.norm.{step}"] = torch.tensor([norm])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(20261127)
    raw = OrderedDict()
    clipped = lstm_case(gen, raw)
    char_encoder_case(gen, raw)
    sampled_softmax_case(gen, raw)
    model_path = model_case(gen, os.path.join(args.out, "elmo-tiny"))
    adagrad_case(gen, raw)
    tensors = OrderedDict((k, v.to(torch.float32) if v.is_floating_point() else v) for k, v in raw.items())
    print(f"{model_path}: {os.path.getsize(model_path)} bytes")
    path = os.path.join(args.out, "elmo-ops.safetensors")
    write_safetensors(path, tensors, {"generator": "tests/reference/make_elmo_fixtures.py"})
    back, _ = read_safetensors(path)
    assert all(torch.equal(back[k], v) for k, v in tensors.items())
    print(f"{path}: {len(tensors)} tensors, {os.path.getsize(path)} bytes; LSTM clipped cells {clipped[0]}, "
          f"projections {clipped[1]}; sampled softmax loss {float(raw['softmax.loss']):.6f}")


if __name__ == "__main__":
    main()
