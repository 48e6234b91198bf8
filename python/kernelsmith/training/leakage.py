"""The leakage guard: does a revision mostly copy a program that its prompt showed?

Prompts show the parent and, next to it, other programs for inspiration (often better ones). Training
on a step whose improvement was copied from such an exemplar teaches copying, not optimisation: at
inference time there is no better exemplar to copy. The guard measures, on token n-grams, how much of
what the child *added* to its parent(s) is found in one other code block of the prompt.

Why "added": an inspiration usually shares much of its code with the parent (same lineage, same task),
so plain overlap between the child and an inspiration is high for every child. What tells copying is
that the new code came from the exemplar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Set, Tuple

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?[fFuUlL]*|\.\d+[fF]?|\S")
_FENCE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([^\n`]*)$")


def tokenize(code: str) -> List[str]:
    """Identifiers, numbers and single punctuation characters; whitespace and layout are ignored."""
    return _TOKEN.findall(code)


def ngrams(tokens: Sequence[str], n: int) -> Set[Tuple[str, ...]]:
    """The set of n-token tuples of a token list (the whole list as one tuple when shorter than n); raises ValueError
    for n <= 0."""
    if n <= 0:
        raise ValueError(f"n-gram size must be positive, got {n}")
    if len(tokens) < n:
        return {tuple(tokens)} if tokens else set()
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def code_blocks(text: str) -> List[str]:
    """The fenced code blocks of a markdown text (``` or ~~~ fences), in order; an unclosed block runs to
    the end. Used on prompts, which the prompt builder writes with plain fences."""
    blocks: List[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence = match.group(1)
        body: List[str] = []
        i += 1
        while i < len(lines):
            closing = lines[i].strip()
            if closing.startswith(fence[0] * len(fence)) and closing.strip(fence[0]) == "":
                break
            body.append(lines[i])
            i += 1
        blocks.append("\n".join(body))
        i += 1
    return blocks


@dataclass
class LeakageReport:
    """How much of a child's new code one other prompt block holds."""

    score: float  # share of the child's new n-grams found in the best-matching other block (0..1)
    containment: float  # share of all the child's n-grams found in that block (0..1)
    novel_ngrams: int  # n-grams of the child absent from its parent(s)
    source_block: int  # index of the best-matching block among the prompt's code blocks, -1 when none
    parent_blocks: int  # blocks recognised as the parent(s) and left out
    other_blocks: int  # blocks compared

    def leaks(self, threshold: float, min_novel_ngrams: int) -> bool:
        """True when the child has at least min_novel_ngrams new n-grams and more than `threshold` of them come from
        one other prompt block."""
        return self.novel_ngrams >= min_novel_ngrams and self.score > threshold


def _same_program(block_tokens: List[str], parent_tokens: Iterable[List[str]]) -> bool:
    return any(block_tokens == tokens for tokens in parent_tokens)


def leakage(
    child_source: str,
    parent_sources: Sequence[str],
    prompt_texts: Sequence[str],
    n: int = 8,
    extra_blocks: Optional[Sequence[str]] = None,
) -> LeakageReport:
    """Compares the child with every code block of the prompt that is not one of its parents.

    ``parent_sources``: the parent and, for a crossover, the second parent; blocks with the same tokens
    are the parents' and are left out, and their n-grams are what the child did not add.
    ``extra_blocks``: more programs to compare with (e.g. the inspirations' stored sources, for prompts
    that were trimmed)."""
    child_tokens = tokenize(child_source)
    parent_token_lists = [tokenize(source) for source in parent_sources if source]
    parent_grams: Set[Tuple[str, ...]] = set()
    for tokens in parent_token_lists:
        parent_grams |= ngrams(tokens, n)
    child_grams = ngrams(child_tokens, n)
    novel = child_grams - parent_grams

    blocks: List[str] = []
    for text in prompt_texts:
        blocks.extend(code_blocks(text))
    blocks.extend(extra_blocks or [])

    best = LeakageReport(0.0, 0.0, len(novel), -1, 0, 0)
    for index, block in enumerate(blocks):
        block_tokens = tokenize(block)
        if not block_tokens:
            continue
        if _same_program(block_tokens, parent_token_lists):
            best.parent_blocks += 1
            continue
        best.other_blocks += 1
        block_grams = ngrams(block_tokens, n)
        score = len(novel & block_grams) / len(novel) if novel else 0.0
        containment = len(child_grams & block_grams) / len(child_grams) if child_grams else 0.0
        if (score, containment) > (best.score, best.containment):
            best.score = score
            best.containment = containment
            best.source_block = index
    return best
