"""Sampling on the GPU path: `sample`'s choices, made by the kernels of
`deepseek_recipe_engine.kernels.sampling` with one transfer to the host per step.

Called right after a step's kernels are queued, so the host work here (each request's uniform
number, and the token bitmasks of constrained requests) runs while the GPU computes the step.
Bitmasks (a constraint's allowed tokens, less any banned ones) are applied on the device. Rows are
sampled by the row-wise kernels, so a row's token and logprobs depend on its own logits only; rows
with `top_p < 1` are first sorted (exact, stable). Rows whose logits processor cannot give a
bitmask are sampled by `sample` on the host.
"""

from __future__ import annotations

import numpy as np
import torch

from deepseek_recipe_engine.kernels.sampling import apply_bitmask, sample_rows
from deepseek_recipe_engine.request import TokenBitmask, TokenLogprob
from deepseek_recipe_engine.sampler import MAX_TOP_LOGPROBS, Sampled, SamplingRow, sample, uniform


def _to_device(array: np.ndarray, device: torch.device) -> torch.Tensor:
    """Copy without waiting for the device's queued work (through pinned host memory)."""
    host = torch.from_numpy(np.ascontiguousarray(array))
    if device.type != "cuda":
        return host.to(device)
    return host.pin_memory().to(device, non_blocking=True)


def _bitmasks(rows: list[SamplingRow], vocab: int) -> np.ndarray:
    """[rows, words] int32: each row's allowed tokens (every token for rows without a mask),
    without its banned ones."""
    words = np.full((len(rows), -(-vocab // 32)), -1, dtype=np.int32)
    for index, row in enumerate(rows):
        if isinstance(row.logits_processor, TokenBitmask):
            mask = row.logits_processor.token_bitmask(list(row.token_ids))[: words.shape[1]]
            words[index] = 0
            words[index, : mask.shape[0]] = mask
        bits = words[index].view(np.uint32)
        for token in row.banned_token_ids:
            bits[token // 32] &= ~np.uint32(1 << (token % 32))
    return words


def _masked(row: SamplingRow) -> bool:
    """Whether a row needs a bitmask: a constrained row, or one with banned tokens."""
    return isinstance(row.logits_processor, TokenBitmask) or bool(row.banned_token_ids)


class _Launch:
    """Rows sampled by one kernel launch: all unsorted rows, or all rows with a nucleus."""

    def __init__(
        self, indices: list[int], rows: list[SamplingRow], vocab: int, device: torch.device
    ) -> None:
        self.indices = indices
        chosen = [rows[i] for i in indices]
        params = [
            (r.temperature, r.top_p, uniform(r.seed, r.position) if r.temperature > 0 else 0.0)
            for r in chosen
        ]
        self.params = _to_device(np.array(params, dtype=np.float32).reshape(-1, 3).T, device)
        masked = any(_masked(r) for r in chosen)
        self.masks = _to_device(_bitmasks(chosen, vocab), device) if masked else None

    def run(self, logits: torch.Tensor, *, nucleus: bool) -> torch.Tensor:
        """[3, rows] float64 on the device: token ids, their logprobs, the log-normalisers."""
        raw = logits if len(self.indices) == logits.shape[0] else logits[self.indices]
        temperature, top_p, draws = self.params
        if nucleus:
            choice = raw if self.masks is None else apply_bitmask(raw, self.masks)
            values, order = torch.sort(choice, dim=-1, descending=True, stable=True)
            result = sample_rows(raw, temperature, top_p, draws, choice=values, order=order)
        else:
            mask_index = None
            if self.masks is not None:
                mask_index = torch.arange(len(self.indices), device=raw.device, dtype=torch.int32)
            result = sample_rows(
                raw, temperature, top_p, draws, masks=self.masks, mask_index=mask_index
            )
        return torch.stack([part.double() for part in result])


def sample_on_device(logits: torch.Tensor, rows: list[SamplingRow]) -> list[Sampled]:
    """Choose one token per row of `logits` [rows, vocab] (fp32, on the kernels' device), as
    `sample` does on the host."""
    device, vocab = logits.device, logits.shape[1]
    on_host = [
        i
        for i, r in enumerate(rows)
        if r.logits_processor is not None and not isinstance(r.logits_processor, TokenBitmask)
    ]
    on_device = [i for i in range(len(rows)) if i not in set(on_host)]
    launches = []
    for nucleus in (False, True):
        indices = [
            i for i in on_device if (rows[i].temperature > 0 and rows[i].top_p < 1) is nucleus
        ]
        if indices:
            launches.append((_Launch(indices, rows, vocab, device), nucleus))
    results = [launch.run(logits, nucleus=nucleus) for launch, nucleus in launches]
    top_rows = [i for i in on_device if rows[i].logprobs and rows[i].top_logprobs > 0]
    top_count = min(MAX_TOP_LOGPROBS, max((rows[i].top_logprobs for i in top_rows), default=0))
    pieces = [result.flatten() for result in results]
    if top_rows:
        values, ids = torch.topk(logits[top_rows], top_count, dim=-1)
        pieces += [values.double().flatten(), ids.double().flatten()]
    fetched = torch.cat(pieces).cpu().numpy() if pieces else np.zeros(0)  # the step's one wait

    sampled: dict[int, Sampled] = {}
    norms: dict[int, np.float32] = {}
    offset = 0
    for launch, _ in launches:
        count = len(launch.indices)
        tokens, logprobs, lse = fetched[offset : offset + 3 * count].reshape(3, count)
        offset += 3 * count
        for column, index in enumerate(launch.indices):
            token = int(tokens[column])
            norms[index] = np.float32(lse[column])
            logprob = None
            if rows[index].logprobs:
                logprob = TokenLogprob(token, float(logprobs[column]), [])
            sampled[index] = Sampled(token, logprob)
    if top_rows:
        size = len(top_rows) * top_count
        values = fetched[offset : offset + size].reshape(len(top_rows), top_count)
        ids = fetched[offset + size : offset + 2 * size].reshape(len(top_rows), top_count)
        for index, row_values, row_ids in zip(top_rows, values, ids, strict=True):
            keep = rows[index].top_logprobs
            chosen = sampled[index].logprob
            assert chosen is not None
            alternatives = [
                (int(i), float(np.float32(v) - norms[index]))
                for i, v in zip(row_ids[:keep], row_values[:keep], strict=True)
            ]
            sampled[index] = Sampled(
                chosen.token_id, TokenLogprob(chosen.token_id, chosen.logprob, alternatives)
            )
    if on_host:
        host_results = sample(logits[on_host].cpu(), [rows[i] for i in on_host])
        sampled.update(zip(on_host, host_results, strict=True))
    return [sampled[i] for i in range(len(rows))]
