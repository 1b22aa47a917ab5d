"""Paged KV cache bookkeeping: fixed-size blocks, reference counts and prefix caching.

A full block is identified by a hash chained over the token ids of every block before it, so two
sequences share a block only when their whole prefix up to that block is equal (the stored token
ids are compared too, so a hash collision can never share wrong data). Blocks are registered in the
prefix cache only once their latents are computed. Free blocks that still hold cached content are
reused least-recently-freed first, after the blocks that hold nothing.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Sequence as Tokens
from dataclasses import dataclass

import torch

from deepseek_recipe_engine.sequence import Sequence


def chain_hash(previous: int | None, token_ids: Tokens[int]) -> int:
    """Hash of a full block, given the hash of the block before it (None for the first)."""
    return hash((previous, tuple(token_ids)))


@dataclass
class Block:
    """One cache block: its users and, once registered, the content it is cached under."""

    block_id: int
    ref_count: int = 0
    hash: int | None = None
    token_ids: tuple[int, ...] = ()


class BlockManager:
    """Hands out cache blocks to sequences and reuses cached prefixes."""

    def __init__(self, num_blocks: int, block_size: int) -> None:
        self.block_size = block_size
        self.blocks = [Block(i) for i in range(num_blocks)]
        self.free_empty: deque[int] = deque(range(num_blocks))
        self.free_cached: OrderedDict[int, None] = OrderedDict()  # oldest first
        self.cached: dict[int, int] = {}  # chain hash -> block id

    @property
    def num_free_blocks(self) -> int:
        """Blocks no sequence uses (including those that still hold cached content)."""
        return len(self.free_empty) + len(self.free_cached)

    def blocks_for(self, num_tokens: int) -> int:
        """Blocks needed to hold `num_tokens` tokens."""
        return -(-num_tokens // self.block_size)

    def can_allocate(self, seq: Sequence) -> bool:
        """Whether `seq` fits even if none of its prefix is cached."""
        return self.blocks_for(len(seq)) <= self.num_free_blocks

    def allocate(self, seq: Sequence) -> int:
        """Give `seq` blocks for all its tokens, reusing cached full blocks of its prefix.

        Returns the number of reused tokens. The block holding the last token is never reused,
        since that token must be computed to produce the next logits.
        """
        size, tokens = self.block_size, seq.token_ids
        reusable = (len(tokens) - 1) // size
        previous: int | None = None
        for index in range(reusable):
            chunk = tokens[index * size : (index + 1) * size]
            block_hash = chain_hash(previous, chunk)
            block_id = self.cached.get(block_hash)
            if block_id is None or self.blocks[block_id].token_ids != tuple(chunk):
                break
            self._take(block_id)
            seq.block_table.append(block_id)
            seq.block_hashes.append(block_hash)
            previous = block_hash
        reused = len(seq.block_table) * size
        while len(seq.block_table) < self.blocks_for(len(tokens)):
            seq.block_table.append(self._take_free())
        seq.num_computed_tokens = reused
        return reused

    def can_append(self, seq: Sequence) -> bool:
        """Whether the next token of `seq` has room (in its last block or a free one)."""
        return len(seq) <= len(seq.block_table) * self.block_size or self.num_free_blocks > 0

    def append_slot(self, seq: Sequence) -> None:
        """Make room for the newest token of `seq`, taking a block when the last one is full."""
        if len(seq) > len(seq.block_table) * self.block_size:
            seq.block_table.append(self._take_free())

    def register_computed(self, seq: Sequence) -> None:
        """Add the full, computed blocks of `seq` to the prefix cache."""
        size = self.block_size
        for index in range(len(seq.block_hashes), seq.num_computed_tokens // size):
            previous = seq.block_hashes[-1] if seq.block_hashes else None
            chunk = tuple(seq.token_ids[index * size : (index + 1) * size])
            block_hash = chain_hash(previous, chunk)
            seq.block_hashes.append(block_hash)
            block = self.blocks[seq.block_table[index]]
            if block_hash not in self.cached and block.hash is None:
                block.hash, block.token_ids = block_hash, chunk
                self.cached[block_hash] = block.block_id

    def free(self, seq: Sequence) -> None:
        """Release every block of `seq`; cached ones stay reusable until evicted."""
        for block_id in reversed(seq.block_table):
            block = self.blocks[block_id]
            block.ref_count -= 1
            if block.ref_count == 0:
                if block.hash is None:
                    self.free_empty.append(block_id)
                else:
                    self.free_cached[block_id] = None
        seq.block_table.clear()
        seq.block_hashes.clear()
        seq.num_computed_tokens = 0

    def slot(self, seq: Sequence, position: int) -> int:
        """Cache slot of the token at `position` of `seq`."""
        size = self.block_size
        return seq.block_table[position // size] * size + position % size

    def slots(self, seq: Sequence, start: int, end: int) -> torch.Tensor:
        """Cache slot of each position in [start, end) of `seq`."""
        return torch.tensor([self.slot(seq, p) for p in range(start, end)], dtype=torch.long)

    def _take(self, block_id: int) -> None:
        block = self.blocks[block_id]
        if block.ref_count == 0:
            del self.free_cached[block_id]
        block.ref_count += 1

    def _take_free(self) -> int:
        if self.free_empty:
            block_id = self.free_empty.popleft()
        else:
            block_id, _ = self.free_cached.popitem(last=False)
            evicted = self.blocks[block_id]
            if evicted.hash is not None and self.cached.get(evicted.hash) == block_id:
                del self.cached[evicted.hash]
            evicted.hash, evicted.token_ids = None, ()
        self.blocks[block_id].ref_count = 1
        return block_id
