"""The training package's own modules under attack (issue 28): any argument, a package error.

Every public function of checkpoint, atomic, config, runs and corpus, given a hypothesis-drawn
argument in one position, either works or raises a FromScratchError (an OSError is allowed for
a path the system refuses); no TypeError, KeyError or AttributeError leaks, and a refused
TrainConfig setting names the setting.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_from_scratch.errors import FromScratchError
from llm_from_scratch.nn.decoder import Decoder
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import (
    TrainConfig,
    book_prose_split,
    load_checkpoint,
    load_corpus,
    load_run,
    save_checkpoint,
    save_corpus,
)
from llm_from_scratch.training.atomic import leftover_temporaries, write_json_atomic

FEW = settings(max_examples=60, deadline=None)
garbage = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 10),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.binary(max_size=3),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.just(object()),
    st.just(SplitMix64(1)),
)


def _calls(folder: Path) -> list[tuple[str, Any]]:
    model = Decoder(5, 4, 1, 2, 8, rng=SplitMix64(0))
    ckpt = save_checkpoint(folder / "c.npz", model, step=0, rng=SplitMix64(1))
    return [
        ("save path", lambda v: save_checkpoint(v, model, step=0)),
        ("save model", lambda v: save_checkpoint(folder / "d.npz", v, step=0)),
        ("save optimizer", lambda v: save_checkpoint(folder / "d.npz", model, v, step=0)),
        ("save step", lambda v: save_checkpoint(folder / "d.npz", model, step=v)),
        ("save rng", lambda v: save_checkpoint(folder / "d.npz", model, step=0, rng=v)),
        ("save extra", lambda v: save_checkpoint(folder / "d.npz", model, step=0, extra=v)),
        ("load path", lambda v: load_checkpoint(v, model)),
        ("load model", lambda v: load_checkpoint(ckpt, v)),
        ("load optimizer", lambda v: load_checkpoint(ckpt, model, v)),
        ("load rng", lambda v: load_checkpoint(ckpt, model, rng=v)),
        ("json path", lambda v: write_json_atomic(v, {})),
        ("json data", lambda v: write_json_atomic(folder / "a.json", v)),
        ("json ascii", lambda v: write_json_atomic(folder / "a.json", {}, ensure_ascii=v)),
        ("leftovers folder", lambda v: leftover_temporaries(v, ["log.json"])),
        ("leftovers names", lambda v: leftover_temporaries(folder, v)),
        ("from_json", lambda v: TrainConfig.from_json(v)),
        ("check_size", lambda v: TrainConfig().check_size(v)),
        ("memory", lambda v: TrainConfig().check_size(8, v)),
        ("load_run", lambda v: load_run(v)),
        ("load_corpus", lambda v: load_corpus(v)),
        ("save_corpus", lambda v: save_corpus(v, v)),
        ("book_prose_split", lambda v: book_prose_split(v)),
        ("book_prose_split fraction", lambda v: book_prose_split([folder / "x.md"], v)),
    ]


CALL_NAMES = [name for name, _ in _calls(Path(tempfile.mkdtemp()))]


@FEW
@given(which=st.sampled_from(CALL_NAMES), value=garbage)
def test_any_argument_works_or_raises_a_package_error(which: str, value: Any) -> None:
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as root:
        folder = Path(root)
        (folder / "x.md").write_text("Some prose for the split.\n")
        call = dict(_calls(folder))[which]
        os.chdir(folder)  # a drawn string is a relative path: files it names land in the temp dir
        try:
            call(value)
        except FromScratchError:
            pass
        except OSError:
            assert "path" in which or "folder" in which or which in {"load_run", "from_json"}
        finally:
            os.chdir(here)


FIELDS = {f.name: str(f.type) for f in dataclasses.fields(TrainConfig)}


@FEW
@given(name=st.sampled_from(sorted(FIELDS)), value=garbage)
def test_any_setting_value_is_accepted_or_refused_by_name(name: str, value: Any) -> None:
    try:
        config = TrainConfig(**{name: value})
    except FromScratchError as error:
        assert name in str(error) or "sizes" in str(error) or "half-lengths" in str(error)
        return
    kind = {"int": int, "float": float, "str": str, "bool": bool}[FIELDS[name]]
    assert isinstance(getattr(config, name), kind)
    assert (kind is bool) == isinstance(getattr(config, name), bool)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("grad_clip", 0.0),
        ("grad_clip", -1.0),
        ("grad_clip", float("nan")),
        ("lr", float("inf")),
        ("beta1", 1.0),
        ("seed", -1),
        ("seed", 2**64),
        ("steps", 2**63),
        ("validation_fraction", 0.0),
        ("positions", "learned"),
        ("output", ""),
        ("output", "a\0b"),
        ("context", 10**8),
    ],
)
def test_settings_the_run_would_only_refuse_later_are_refused_at_once(
    name: str, value: Any
) -> None:
    with pytest.raises(FromScratchError, match=name if name != "context" else "too large"):
        TrainConfig(**{name: value})
