"""TaggerConfig is the one source of settings and defaults: the command line, the Python API, the
spaCy component and worker processes read it."""

from __future__ import annotations

import dataclasses
import pickle

import click
import pytest
import spacy

import tagger.tagging.spacy_component  # noqa: F401  (registers the factory)
from tagger import Paper, Tagger, TaggerConfig
from tagger.cli import main

from .conftest import MINI_TAXONOMY, HashEmbedder

FIELDS = [field.name for field in dataclasses.fields(TaggerConfig)]


@pytest.mark.parametrize(
    ("option", "value", "wanted"),
    [
        ("top_n", 0, "an int >= 1"),
        ("max_words", 2.5, "an int >= 1"),
        ("diversity", 1.5, "a float in [0, 1]"),
        ("min_score", float("nan"), "a float in [0, 1]"),
        ("max_tags", True, "an int >= 1"),
        ("embedding_model", "", "a non-empty str"),
        ("embedding_backend", "cuda", "one of 'onnx-int8', 'onnx', 'torch', 'static'"),
    ],
)
def test_invalid_settings_are_refused_with_a_clear_message(option, value, wanted):
    with pytest.raises(ValueError) as caught:
        TaggerConfig(**{option: value})
    assert str(caught.value) == (
        f"The {option!r} parameter of TaggerConfig must be {wanted}. Got {value!r} instead."
    )


def test_the_config_is_frozen_and_keyword_only():
    config = TaggerConfig(min_score=0.4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.min_score = 0.5
    with pytest.raises(TypeError):
        TaggerConfig(10)
    assert dataclasses.replace(config, top_n=3).as_dict() == {
        **TaggerConfig().as_dict(),
        "min_score": 0.4,
        "top_n": 3,
    }
    assert all(TaggerConfig.help(name) for name in FIELDS)


def test_command_line_defaults_and_ranges_are_the_configs():
    tag = main.commands["tag"]
    options = {param.name: param for param in tag.params if isinstance(param, click.Option)}
    shared = [name for name in FIELDS if name in options]
    assert shared == [
        "top_n",
        "diversity",
        "min_score",
        "max_tags",
        "model",
        "batch_size",
        "embedding_backend",
    ]
    for name in shared:  # a file setting's empty default is no option given (None) on the line
        assert (options[name].default or "") == (getattr(TaggerConfig(), name) or ""), name
        said = TaggerConfig.help(name)
        if "; empty:" in said:  # a file setting: none given is the one shipped
            said = f"{said.split('; empty:')[0]}. Default: the one shipped."
        assert options[name].help == said
    assert (options["diversity"].type.min, options["diversity"].type.max) == (0, 1)
    assert list(options["embedding_backend"].type.choices) == [
        "onnx-int8",
        "onnx",
        "torch",
        "static",
    ]


def test_spacy_component_takes_every_setting_with_the_configs_defaults():
    nlp = spacy.blank("en")
    component = nlp.add_pipe(
        "taxonomy_tagger",
        config={"taxonomy": str(MINI_TAXONOMY), "min_score": 0.4, "specific_at": 0.6},
    )
    assert component.tagger.config == TaggerConfig(min_score=0.4, specific_at=0.6)
    defaults = {
        k: v
        for k, v in nlp.config["components"]["taxonomy_tagger"].items()
        if k not in ("factory", "taxonomy", "min_score", "specific_at")
    }
    assert defaults == {
        k: v for k, v in TaggerConfig().as_dict().items() if k not in ("min_score", "specific_at")
    }
    with pytest.raises(Exception, match="min_scor"):
        spacy.blank("en").add_pipe("taxonomy_tagger", config={"min_scor": 0.4})


def test_workers_are_started_from_the_configuration_not_live_objects():
    """A worker gets (taxonomy, config): both pickle small, with no model inside."""
    tagger = Tagger.from_taxonomy(MINI_TAXONOMY, TaggerConfig(min_score=0.3))
    tagger.tag(Paper(abstract="Graph neural networks for multi-agent reinforcement learning."))
    sent = pickle.dumps((tagger.taxonomy, tagger.config))
    assert len(sent) < 50_000
    taxonomy, config = pickle.loads(sent)
    assert config == TaggerConfig(min_score=0.3) and taxonomy.sha256 == tagger.taxonomy.sha256
    with pytest.raises(ValueError, match="cannot use an embedder object passed to the Tagger"):
        list(
            Tagger.from_taxonomy(MINI_TAXONOMY, embedder=HashEmbedder()).tag_many(
                [Paper(abstract="x")], workers=2
            )
        )
