"""The book's Decoder loaded from each family's folder equals transformers, float64, eager.

Logits on right-padded prompts of different lengths (the family's attention mask: each prompt's
valid positions), 32 greedy tokens from the book's KV-cache generation against
``model.generate(do_sample=False)``, the gradient of a cross-entropy loss with respect to every
weight against torch autograd, and the save_pretrained round trip.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import no_grad
from llm_from_scratch.generation import generate
from llm_from_scratch.hub import load_pretrained, save_pretrained
from llm_from_scratch.hub.mapping import plan, to_hf
from llm_from_scratch.hub.spec import parameter_shapes
from llm_from_scratch.training.loss import cross_entropy

from .reference import VOCAB, load_reference

torch = pytest.importorskip("torch")

PROMPTS = [
    [5, 17, 33, 8, 61, 2, 40, 12, 9],
    [44, 3, 27, 50, 19],
    [11, 60, 7, 38, 25, 4, 56, 13, 30, 47, 21, 6],
]
LOGIT_GAP = 1e-10  # relative: max |book − reference| / max |reference|
GRADIENT_GAP = 1e-9  # relative to each weight's largest |gradient|


def _padded(prompts: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.array([len(p) for p in prompts])
    ids = np.zeros((len(prompts), lengths.max()), dtype=np.int64)
    for b, p in enumerate(prompts):
        ids[b, : len(p)] = p
    return ids, lengths


@pytest.fixture(scope="module")
def loaded(reference_folders) -> dict:
    return {f: load_pretrained(folder) for f, folder in reference_folders.items()}


def _relative_gap(book: np.ndarray, reference: np.ndarray) -> float:
    return float(np.max(np.abs(book - reference)) / np.max(np.abs(reference)))


def _reference_logits(model, ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    mask = (np.arange(ids.shape[1])[None, :] < lengths[:, None]).astype(np.int64)
    with torch.no_grad():
        out = model(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask))
    return out.logits.numpy()


def test_logits_on_padded_prompts(reference_models, loaded, family: str) -> None:
    ids, lengths = _padded(PROMPTS)
    reference = _reference_logits(reference_models[family], ids, lengths)
    with no_grad():
        book = loaded[family](ids, lengths).value
    for b, n in enumerate(lengths):  # each prompt's valid positions
        assert _relative_gap(book[b, :n], reference[b, :n]) < LOGIT_GAP


def test_as_shipped(reference_folders, loaded, family: str) -> None:
    """transformers unmodified (float32 RMSNorm, softmax, router and RoPE angles) agrees to
    float32 rounding; float64 throughout, it agrees to 1e-10 (above)."""
    shipped = load_reference(reference_folders[family], family, as_shipped=True)
    ids, lengths = _padded(PROMPTS)
    reference = _reference_logits(shipped, ids, lengths)
    with no_grad():
        book = loaded[family](ids, lengths).value
    for b, n in enumerate(lengths):
        assert _relative_gap(book[b, :n], reference[b, :n]) < 1e-6


def test_logits_are_not_trivially_equal(reference_models, loaded) -> None:
    """The check can fail: another family's weights give logits far from this one's."""
    ids, lengths = _padded(PROMPTS[:1])
    reference = _reference_logits(reference_models["llama"], ids, lengths)
    with no_grad():
        other = loaded["mistral"](ids, lengths).value
    assert _relative_gap(other, reference) > 1e-2


def test_greedy_32_tokens(reference_models, loaded, family: str) -> None:
    """No end token on either side: 32 tokens each, past Mistral's window of 4."""
    reference = reference_models[family]
    saved = reference.generation_config.eos_token_id
    reference.generation_config.eos_token_id = None  # the saved config's end token stops early
    try:
        for prompt in PROMPTS[:2]:
            with torch.no_grad():
                out = reference.generate(
                    torch.tensor([prompt]), do_sample=False, max_new_tokens=32, pad_token_id=0
                )
            expected = out[0, len(prompt) :].numpy()
            book = generate(loaded[family], [prompt], max_new_tokens=32, do_sample=False)
            assert len(expected) == 32
            np.testing.assert_array_equal(book.new_tokens[0], expected)
    finally:
        reference.generation_config.eos_token_id = saved


def test_gradients_of_every_weight(reference_models, loaded, family: str) -> None:
    ids = np.array([p[:5] for p in PROMPTS], dtype=np.int64)  # (3, 5)
    targets = np.roll(ids, -1, axis=1)
    targets[:, -1] = 1
    model = loaded[family]
    model.zero_grad()
    loss = cross_entropy(model(ids), targets)
    loss.backward()
    reference = reference_models[family]
    reference.zero_grad()
    logits = reference(input_ids=torch.tensor(ids)).logits
    torch_loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, VOCAB), torch.tensor(targets).reshape(-1)
    )
    torch_loss.backward()
    assert abs(loss.value - torch_loss.item()) < 1e-12 * abs(torch_loss.item())
    spec = model.hub_spec
    declared = dict(parameter_shapes(spec))
    book_grads = {n: p.grad for n, p in model.named_parameters()}
    torch_grads = {n: p.grad.numpy() for n, p in reference.named_parameters()}
    checked = 0
    for entry in plan(spec, declared):
        name = entry.hf.replace("block_sparse_moe.gate.", "mlp.gate.")  # Mixtral's router
        expected = torch_grads.get(name)
        if expected is None:  # Mixtral: torch fuses the experts; compared below
            continue
        got = to_hf(entry, [book_grads[b] for b in entry.book])
        scale = np.max(np.abs(expected))
        assert np.max(np.abs(got - expected)) <= GRADIENT_GAP * scale, entry.hf
        checked += 1
    if family == "mixtral":
        checked += _mixtral_expert_gradients(spec, book_grads, torch_grads)
    assert checked == len(torch_grads)


def _mixtral_expert_gradients(spec, book_grads: dict, torch_grads: dict) -> int:
    """torch stores experts fused: gate_up_proj [E, 2F, D] and down_proj [E, D, F]."""
    checked = 0
    for i in range(spec.num_layers):
        stem = f"model.layers.{i}.mlp.experts"
        gate_up, down = torch_grads[f"{stem}.gate_up_proj"], torch_grads[f"{stem}.down_proj"]
        book = f"decoder.blocks.{i}.ffn.experts"
        gate = [book_grads[f"{book}.{e}.gate.weight"].T for e in range(spec.num_experts)]
        up = [book_grads[f"{book}.{e}.up.weight"].T for e in range(spec.num_experts)]
        ours_gate_up = np.stack([np.concatenate(pair) for pair in zip(gate, up, strict=True)])
        ours_down = np.stack(
            [book_grads[f"{book}.{e}.down.weight"].T for e in range(spec.num_experts)]
        )
        for got, expected in ((ours_gate_up, gate_up), (ours_down, down)):
            assert np.max(np.abs(got - expected)) <= GRADIENT_GAP * np.max(np.abs(expected))
            checked += 1
    return checked


def test_save_pretrained_round_trip(loaded, family: str, tmp_path) -> None:
    """book → folder → transformers gives the book's logits; the folder loads back equal."""
    model = loaded[family]
    folder = save_pretrained(model, tmp_path / family, family)
    reference = load_reference(folder, family)
    ids, lengths = _padded(PROMPTS)
    with no_grad():
        book = model(ids, lengths).value
    again = _reference_logits(reference, ids, lengths)
    for b, n in enumerate(lengths):
        assert _relative_gap(book[b, :n], again[b, :n]) < LOGIT_GAP
    reloaded = load_pretrained(folder)
    for (n1, p1), (n2, p2) in zip(
        model.named_parameters(), reloaded.named_parameters(), strict=True
    ):
        assert n1 == n2
        np.testing.assert_array_equal(p1.value, p2.value)
