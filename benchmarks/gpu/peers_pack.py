"""What ``prepare.sh peers`` packs for ``check.sh peers``, kept small for the device's 64 MiB.

    python benchmarks/gpu/peers_pack.py repack DIR...            # wheels: LZMA members
    python benchmarks/gpu/peers_pack.py pack WORK OUT.tar.xz TRAIN_DATA DECODE_DATA

``repack``: every wheel in DIR rewritten with its members LZMA-compressed instead of deflated,
where that is smaller (the ZIP format allows it and pip's installer, Python's zipfile, reads it;
the installed files are the same bytes). pyonmttok 16.8 -> 10.6 MiB, pulp 15.6 -> 11.8.

``pack``: a tar.xz of a ``--work`` folder of bench_peers*.py holding only what the GPU runs
read: the training comparison's segmented data (TRAIN_DATA: train.src/tgt, spm.model,
vocab.txt), the decoding comparison's sentencepiece model and vocabulary (DECODE_DATA), and the
two trained models with their ``done.json`` (the settings they were trained with): eole's
config, vocabulary and weights (links followed; not its optimizer state) and wordorder's
best.pt. From eole's weights the two sinusoidal position tables (``src_emb.pe.pe``,
``tgt_emb.pe.pe``: 5,000 × d each, as large as the rest of a d-128 model) are left out: eole
computes them when it builds the model and logs their absence from the checkpoint ("Found in
buffers, probably ok"), as wordorder computes its own (its checkpoints never hold them).
"""

from __future__ import annotations

import io
import json
import os
import struct
import sys
import tarfile
import zipfile
from pathlib import Path

MIB = 1 << 20


def repack(folder: Path) -> None:
    for path in sorted(folder.glob("*.whl")):
        tmp = path.with_suffix(".lzma")
        with zipfile.ZipFile(path) as zi, zipfile.ZipFile(tmp, "w", zipfile.ZIP_LZMA) as zo:
            for info in zi.infolist():
                zo.writestr(info, zi.read(info), compress_type=zipfile.ZIP_LZMA)
        before, after = path.stat().st_size, tmp.stat().st_size
        if after < before:
            os.replace(tmp, path)
        else:
            tmp.unlink()
            after = before
        if before > MIB:
            print(f"  {path.name}: {before / MIB:.2f} -> {after / MIB:.2f} MiB")


def without_tensors(data: bytes, drop) -> bytes:
    """A safetensors file's bytes without the tensors whose name ``drop`` accepts (the format:
    an 8-byte little-endian header size, a JSON header of dtype/shape/data_offsets per tensor
    and ``__metadata__``, then the tensors' bytes)."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    body = data[8 + n :]
    out_header, chunks, offset = {}, [], 0
    for name, info in header.items():
        if name == "__metadata__":
            out_header[name] = info
            continue
        if drop(name):
            continue
        start, end = info["data_offsets"]
        chunks.append(body[start:end])
        out_header[name] = {**info, "data_offsets": [offset, offset + end - start]}
        offset += end - start
    raw = json.dumps(out_header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # the header padded to 8 bytes, as safetensors writes it
    return struct.pack("<Q", len(raw)) + raw + b"".join(chunks)


def pack(work: Path, out: Path, train_data: str, decode_data: str) -> None:
    files: dict[str, bytes] = {}

    def add(rel: str, data: bytes | None = None) -> None:
        files[rel] = (work / rel).read_bytes() if data is None else data  # read_bytes follows links

    for name in ("train.src", "train.tgt", "spm.model", "vocab.txt", "done"):
        add(f"{train_data}/{name}")
    for name in ("spm.model", "vocab.txt", "done"):
        add(f"{decode_data}/{name}")
    eole = "runs/model_eole"
    for name in ("done.json", "model/config.json", "model/vocab.json"):
        add(f"{eole}/{name}")
    weights = (work / eole / "model/model.00.safetensors").read_bytes()
    slim = without_tensors(weights, lambda name: name.endswith(".pe.pe"))
    add(f"{eole}/model/model.00.safetensors", slim)
    print(
        f"  eole's weights {len(weights) / MIB:.2f} MiB, {len(slim) / MIB:.2f} without its "
        "position tables"
    )
    for name in ("done.json", "model/best.pt"):
        add(f"runs/model_wordorder/{name}")
    tmp = out.with_name(out.name + ".tmp")
    with tarfile.open(tmp, "w:xz", preset=6) as tar:
        for rel, data in sorted(files.items()):
            info = tarfile.TarInfo(rel)
            info.size, info.mode, info.mtime = len(data), 0o644, int((work / rel).stat().st_mtime)
            tar.addfile(info, io.BytesIO(data))
    os.replace(tmp, out)
    raw = sum(len(d) for d in files.values())
    packed = out.stat().st_size / MIB
    print(f"  {out}: {raw / MIB:.2f} MiB in {len(files)} files, {packed:.2f} packed")


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "repack":
        for folder in sys.argv[2:]:
            repack(Path(folder))
    elif len(sys.argv) == 6 and sys.argv[1] == "pack":
        pack(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4], sys.argv[5])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
