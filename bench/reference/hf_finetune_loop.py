"""What the fine-tuning peers (finetune_torch.py, qa_torch.py) share: AdamW with the linear warm-up
(a tenth of the steps) and decay that finetune and the Hugging Face Trainer use, and one training
step as the Trainer runs it (backward, clip_grad_norm_(1.0), optimizer and scheduler steps)."""
import torch
from torch import nn


def adamw_linear(model, lr, steps):
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)  # finetune's default decay: 0
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: s / warm if s < warm else max(0.0, (steps - s) / (steps - warm)))
    return opt, sched


def train_step(model, loss, opt, sched):
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    opt.zero_grad(set_to_none=True)
