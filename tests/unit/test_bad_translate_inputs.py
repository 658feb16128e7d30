"""Bad input of the ``translate`` step (issue 37, cases 5, 11 and 12), through the real
``wordorder`` command line, on a checkpoint ``wordorder train`` made: another subword model of
the same size, an output that is a folder, a source line far beyond any sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_checks import check, left_over, run

from wordorder.cli import main


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> dict[str, Path]:
    """A checkpoint trained for a few updates with subword model ``a``, another subword model
    ``b`` of the same size but other text, and a source encoded with ``a``."""
    from wordorder.text.subword import SubwordModel
    from wordorder.text.subword_train import train_sentencepiece

    root = tmp_path_factory.mktemp("trained")
    files: dict[str, Path] = {}
    for name, text in (
        ("a", "".join(f"a{i} b{i % 7} c{i % 3}\n" for i in range(300))),
        ("b", "".join(f"x{i % 11} y{i} z{i % 5}\n" for i in range(300))),
    ):
        (root / f"{name}.txt").write_text(text, encoding="utf-8")
        files[name] = train_sentencepiece([root / f"{name}.txt"], root / f"spm_{name}", 320)
    a, b = SubwordModel(files["a"]), SubwordModel(files["b"])
    assert a.vocab_size == b.vocab_size
    lines = (root / "a.txt").read_text(encoding="utf-8").splitlines()[:40]
    for name, part in (("train", lines), ("dev", lines[:5])):
        for side in ("src", "tgt"):
            files[f"{name}.{side}"] = root / f"{name}.{side}"
            files[f"{name}.{side}"].write_text(
                "".join(" ".join(a.encode(line.split())) + "\n" for line in part), encoding="utf-8"
            )
    # the other experiment's source: the same text, encoded with its subword model
    files["dev.b"] = root / "dev.b"
    files["dev.b"].write_text(
        "".join(" ".join(b.encode(line.split())) + "\n" for line in lines[:5]), encoding="utf-8"
    )
    files["dev.ref"] = root / "dev.ref"
    files["dev.ref"].write_text("\n".join(lines[:5]) + "\n", encoding="utf-8")
    files["model"] = root / "out" / "best.pt"
    options = {"device": "cpu", "batch_tokens": 400, "max_steps": 4, "eval_every": 4}
    argv = ["train", "--train-src", files["train.src"], "--train-tgt", files["train.tgt"]]
    argv += ["--dev-src", files["dev.src"], "--dev-ref", files["dev.ref"], "--spm", files["a"]]
    argv += ["--model-options", json.dumps({"preset": "tiny"}), "--threads", "1"]
    argv += ["--train-options", json.dumps(options), "--output", files["model"]]
    assert main([str(x) for x in argv]) == 0
    return files


def translate(files: dict[str, Path], spm: Path, source: Path, out: Path, capsys):
    argv = ["translate", "--checkpoint", files["model"], "--spm", spm, "--input", source]
    argv += ["--lang", "de", "--output", out / "h", "--output-tok", out / "h.tok"]
    argv += ["--options", json.dumps({"device": "cpu", "beam_size": 2})]
    return run(argv, capsys)


def test_the_checkpoints_subword_model_decodes(trained, tmp_path, capsys):
    code, errors = translate(trained, trained["a"], trained["dev.src"], tmp_path / "out", capsys)
    assert code == 0 and errors == []
    assert len((tmp_path / "out" / "h").read_text(encoding="utf-8").splitlines()) == 5


def test_another_subword_model_of_the_same_size(trained, tmp_path, capsys):
    """Case 5: the checkpoint keeps its subword model's digest (its pieces in id order); a
    source and a subword model of another experiment would decode to fluent nonsense."""
    code, errors = translate(trained, trained["b"], trained["dev.b"], tmp_path / "out", capsys)
    check(
        "another experiment's subword model of the same size",
        code,
        errors,
        "best.pt",
        f"the subword model {trained['b']} (--spm) has other pieces than the one the checkpoint "
        "was trained with",
    )
    assert left_over(tmp_path / "out") == []


def test_an_output_that_is_a_folder(trained, tmp_path, capsys):
    """Case 11: refused before decoding, no temporary left in the parent folder."""
    out = tmp_path / "out"
    (out / "h").mkdir(parents=True)
    (out / "h" / "kept").write_text("a file of the user's\n", encoding="utf-8")
    code, errors = translate(trained, trained["a"], trained["dev.src"], out, capsys)
    check("translate --output <a folder>", code, errors, f"{out / 'h'}: the output is a folder")
    assert sorted(p.name for p in out.iterdir()) == ["h"]
    assert [p.name for p in (out / "h").iterdir()] == ["kept"]


def test_a_source_line_of_thousands_of_subwords(trained, tmp_path, capsys):
    """Case 12: a 9,999-piece line took 221 s to decode; refused, naming its line."""
    source = tmp_path / "long.src"
    line = trained["dev.src"].read_text(encoding="utf-8").splitlines()[0]
    source.write_text(f"{line}\n{' '.join([line] * 1000)}\n", encoding="utf-8")
    code, errors = translate(trained, trained["a"], source, tmp_path / "out", capsys)
    check(
        "a test source line of thousands of subwords",
        code,
        errors,
        f"{source}:2:",
        "more than decode.max_source_len (1,024)",
    )
    assert left_over(tmp_path / "out") == []


@pytest.mark.parametrize("clash", ["input", "output-tok", "link to input"])
def test_an_output_that_is_an_input_or_the_other_output(trained, tmp_path, capsys, clash):
    """Issue 49, case 9: ``--output`` equal to ``--input`` (or a link to it) or to
    ``--output-tok`` was written over without a word; refused before decoding, naming both
    options, the user's file unchanged."""
    source = tmp_path / "test.src"
    source.write_bytes(trained["dev.src"].read_bytes())
    out, said = source, "--output is the same file as --input"
    if clash == "output-tok":
        out, said = tmp_path / "h.tok", "--output-tok is the same file as --output"
    elif clash == "link to input":
        out = tmp_path / "link"
        out.symlink_to(source)
    argv = ["translate", "--checkpoint", trained["model"], "--spm", trained["a"]]
    argv += ["--input", source, "--lang", "de", "--output", out]
    argv += ["--output-tok", tmp_path / "h.tok", "--options", json.dumps({"device": "cpu"})]
    code, errors = run(argv, capsys)
    check(f"translate --output <{clash}>", code, errors, said)
    assert source.read_bytes() == trained["dev.src"].read_bytes()
    assert not (tmp_path / "h.tok").exists()


def test_threads_below_one(trained, tmp_path, capsys):
    """Issue 49, case 12: ``--threads -4`` ended in torch's traceback; argparse's usage line."""
    argv = ["translate", "--checkpoint", trained["model"], "--spm", trained["a"]]
    argv += ["--input", trained["dev.src"], "--lang", "de", "--output", tmp_path / "h"]
    argv += ["--output-tok", tmp_path / "h.tok", "--threads", "-4"]
    with pytest.raises(SystemExit) as exit_:
        main([str(a) for a in argv])
    assert exit_.value.code == 2
    assert "argument --threads: expected 1 or more, got -4" in capsys.readouterr().err
    assert not (tmp_path / "h").exists()


def _older_checkpoint(trained: dict[str, Path], tmp_path: Path, spm_path: str) -> Path:
    """The trained checkpoint as older versions wrote it: no digest of the subword pieces."""
    import torch

    obj = torch.load(trained["model"], weights_only=True)
    del obj["meta"]["spm_vocab"]
    obj["meta"]["spm"] = spm_path
    path = tmp_path / "old.pt"
    torch.save(obj, path)
    return path


def test_an_older_checkpoint_is_checked_against_the_subword_model_it_names(
    trained, tmp_path, capsys
):
    """Issue 49, case 5: a checkpoint without the digest decoded with another experiment's
    subword model without a word. The subword model its meta names, where it still is, gives
    the digest; where it is gone, a warning names the checkpoint."""
    old = _older_checkpoint(trained, tmp_path, str(trained["a"]))
    files = {**trained, "model": old}
    code, errors = translate(files, trained["b"], trained["dev.b"], tmp_path / "out", capsys)
    check("an older checkpoint, another subword model", code, errors, "has other pieces")
    code, errors = translate(files, trained["a"], trained["dev.src"], tmp_path / "out", capsys)
    assert code == 0 and errors == []


def test_an_older_checkpoint_whose_subword_model_is_gone_warns(trained, tmp_path, capsys, caplog):
    old = _older_checkpoint(trained, tmp_path, str(tmp_path / "gone.model"))
    files = {**trained, "model": old}
    code, errors = translate(files, trained["b"], trained["dev.b"], tmp_path / "out", capsys)
    assert code == 0 and errors == []
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any(
        f"{old} keeps no digest of its subword model and the one it names "
        f"({tmp_path / 'gone.model'}) is gone: --spm {trained['b']} cannot be checked" in m
        for m in warned
    ), warned


def test_several_sources_in_one_call_translate_as_each_alone(trained, tmp_path, capsys):
    """The swap-noise rule decodes every noise level of a test set with one model load
    (``--input`` A B): each output is the one a call of its own writes."""
    other = tmp_path / "other.src"
    other.write_text(
        "".join(reversed(trained["dev.src"].read_text(encoding="utf-8").splitlines(True))),
        encoding="utf-8",
    )
    sources = [trained["dev.src"], other]
    argv = ["translate", "--checkpoint", trained["model"], "--spm", trained["a"], "--lang", "de"]
    argv += ["--options", json.dumps({"device": "cpu", "beam_size": 2}), "--threads", "1"]
    both = [tmp_path / "both" / f"{n}.{k}" for n in (0, 1) for k in ("h", "tok")]
    code, errors = run(
        [
            *argv,
            "--input",
            *sources,
            "--output",
            both[0],
            both[2],
            "--output-tok",
            both[1],
            both[3],
        ],
        capsys,
    )
    assert code == 0 and errors == []
    for n, source in enumerate(sources):
        code, _ = run(
            [*argv, "--input", source, "--output", tmp_path / "h", "--output-tok", tmp_path / "t"],
            capsys,
        )
        assert code == 0
        assert both[2 * n].read_text(encoding="utf-8") == (tmp_path / "h").read_text("utf-8")
        assert both[2 * n + 1].read_text(encoding="utf-8") == (tmp_path / "t").read_text("utf-8")
    assert both[0].read_text(encoding="utf-8") != both[2].read_text(encoding="utf-8")


@pytest.mark.parametrize("case", ["counts", "features", "long line in the second"])
def test_several_sources_are_refused_together(trained, tmp_path, capsys, case):
    """One --output and --output-tok per --input, features with one source only, and a bad
    second source stops the call before anything is written."""
    long = tmp_path / "long.src"
    line = trained["dev.src"].read_text(encoding="utf-8").splitlines()[0]
    long.write_text(f"{line}\n{' '.join([line] * 1000)}\n", encoding="utf-8")
    out = tmp_path / "out"
    argv = ["translate", "--checkpoint", trained["model"], "--spm", trained["a"], "--lang", "de"]
    argv += ["--options", json.dumps({"device": "cpu"}), "--input", trained["dev.src"]]
    argv += [long if case == "long line in the second" else trained["dev.b"]]
    argv += ["--output", out / "a", out / "b", "--output-tok", out / "a.tok"]
    argv += [] if case == "counts" else [out / "b.tok"]
    argv += ["--features", json.dumps({"pos": str(long)})] if case == "features" else []
    said = {
        "counts": "2 --input, 2 --output and 1 --output-tok files",
        "features": "--features with 2 --input files",
        "long line in the second": f"{long}:2:",
    }[case]
    code, errors = run(argv, capsys)
    check(f"translate, several sources: {case}", code, errors, said)
    assert left_over(out) == []
