"""`econ library tag NAME@V TAG...`: label a version already saved (the one sent to the board)
without saving it again."""

from __future__ import annotations

import json

from test_library import SEED, SEED_NAME, econ, edited

from econ.library import Ref, open_library


def test_a_saved_version_is_labelled_without_a_new_version(library_url, tmp_path, capsys):
    econ(capsys, "library", "save", SEED, "--tag", "draft")
    econ(capsys, "library", "save", edited(tmp_path, "gpu_count = 72", "gpu_count = 144"))
    rc, out, err = econ(capsys, "library", "tag", f"{SEED_NAME}@1", "board-2026q3", "draft")
    assert rc == 0 and err == "", err
    assert out == f"{SEED_NAME}@1 tagged: board-2026q3, draft\n"
    with open_library(library_url) as library:
        history = library.history(SEED_NAME)
        assert [(v.version, v.tags) for v in history] == [(1, ["board-2026q3", "draft"]), (2, [])]
        # the label finds version 1, although version 2 is newer
        [listed] = library.list(tag="board-2026q3")
        assert listed.version == 1
        assert library.get(Ref(SEED_NAME, 1)).text == SEED.read_text()
    # a label given again is kept once; JSON gives the version's details
    rc, out, _ = econ(capsys, "library", "tag", f"{SEED_NAME}@1", "draft", "--format", "json")
    assert rc == 0 and json.loads(out)["tags"] == ["board-2026q3", "draft"]


def test_bad_tags_and_versions_are_refused_and_nothing_is_added(library_url, capsys):
    econ(capsys, "library", "save", SEED)
    for args, said in (
        ([f"{SEED_NAME}@2", "x"], f"{SEED_NAME!r} has no version 2"),
        ([SEED_NAME, "x"], "expected NAME@VERSION"),
        # (TAG is a positional argument here: the message names no option --tag)
        ([f"{SEED_NAME}@1", "ok", "has space"], "error: tag 'has space': expected a label of"),
        (["nope@1", "x"], "no scenario 'nope'"),
    ):
        rc, _, err = econ(capsys, "library", "tag", *args)
        assert rc == 3 and said in err and "Traceback" not in err, (args, err)
    with open_library(library_url) as library:
        assert library.history(SEED_NAME)[0].tags == []
