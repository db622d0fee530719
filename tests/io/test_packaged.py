"""The data files tagger ships and the models users fit (io.packaged): read as json reads them."""

from __future__ import annotations

import pytest


def test_model_json_is_read_as_json_reads_it_nan_and_big_integers_too():
    import gc
    import json
    import math

    from tagger.io.packaged import parse_json

    data = {"trees": [{"threshold": [0.1, 1e-300, 2.5e300], "value": [-0.0, 3]}], "n": "é"}
    text = json.dumps(data).encode()
    assert parse_json(text) == json.loads(text)
    # json writes what orjson does not read; a model written so still loads
    odd = parse_json(b'{"a": NaN, "b": Infinity, "c": 123456789012345678901234567890}')
    assert (
        math.isnan(odd["a"]) and odd["b"] == math.inf and odd["c"] == 123456789012345678901234567890
    )
    for broken in (b'{"a": ', b"\xff\xfe", b"[1, 2"):
        with pytest.raises(ValueError):
            parse_json(broken)
        assert gc.isenabled()  # paused while it read, and on again after it failed
