"""Pack the worker's artifact: ``make worker-artifact`` (docs/deploy.md, "The worker").

The worker runs the Lambda functions' artifact: ``make build-ToolsFunction`` (the recipe
``sam build`` calls) installs ``infra/lambda-requirements.txt`` for the platform and copies the
code and your forms beside it, with their bytecode. This module packs such a folder into a
zip that is the same bytes for the same input, wherever and whenever it is built: entries in
sorted order, every date 1980-01-01, permissions 644 (755 where the owner may execute), no
owner or extra fields, one compression level. The name carries the SHA-256 of the bytes
(``formwork-worker-<arch>-<sha256>.zip``): the S3 key the stack reads, and the digest the
container checks before it unpacks anything.

Docker is not needed to build or to run it: the service's container is a public Python 3.11
image that unpacks this zip and runs ``python -m formwork.worker`` (template.yaml,
``WorkerTaskDefinition``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import stat
import sys
import tempfile
import zipfile
from pathlib import Path

EPOCH = (1980, 1, 1, 0, 0, 0)
LEVEL = 6


def entries(stage: Path) -> list[Path]:
    """Every file under ``stage``, sorted by its path inside the zip (symlinks refused: the
    zip would have to say what they point at)."""
    found: list[Path] = []
    for root, dirs, files in os.walk(stage):
        dirs.sort()
        for name in files:
            path = Path(root, name)
            if path.is_symlink():
                raise ValueError(f"{path}: symlinks are not packed")
            found.append(path)
    return sorted(found, key=lambda p: p.relative_to(stage).as_posix())


def pack(stage: Path, into: Path) -> Path:
    """Zip ``stage`` into ``into/<name>.zip`` (see the module); returns its path."""
    into.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=into, suffix=".partial", delete=False) as raw:
        scratch = Path(raw.name)
    try:
        with zipfile.ZipFile(scratch, "w", zipfile.ZIP_DEFLATED, compresslevel=LEVEL) as zf:
            for path in entries(stage):
                info = zipfile.ZipInfo(path.relative_to(stage).as_posix(), EPOCH)
                mode = 0o755 if path.stat().st_mode & stat.S_IXUSR else 0o644
                info.external_attr = (stat.S_IFREG | mode) << 16
                info.create_system = 3  # unix, so the permissions above are read back
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, path.read_bytes(), compresslevel=LEVEL)
        digest = sha256(scratch)
        target = into / f"{artifact_stem(arch_of(stage))}-{digest}.zip"
        scratch.chmod(0o644)
        scratch.replace(target)
    except BaseException:
        scratch.unlink(missing_ok=True)
        raise
    return target


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def arch_of(stage: Path) -> str:
    """The CPU the stage's compiled wheels are for (pydantic-core's wheel tag says it)."""
    for wheel in sorted(stage.glob("pydantic_core-*.dist-info/WHEEL")):
        text = wheel.read_text()
        for arch in ("aarch64", "x86_64"):
            if f"_{arch}" in text:
                return "arm64" if arch == "aarch64" else "x86_64"
    raise ValueError(f"{stage}: no pydantic-core wheel to tell the platform by")


def artifact_stem(arch: str) -> str:
    return f"formwork-worker-{arch}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m formwork.infra.worker_artifact", description=__doc__
    )
    parser.add_argument("stage", type=Path, help="the folder make build-ToolsFunction filled")
    parser.add_argument("--out", type=Path, required=True, help="where to write the zip")
    args = parser.parse_args(argv)
    if not (args.stage / "formwork" / "worker.py").exists():
        print(f"{args.stage}: not a built artifact (no formwork/worker.py)", file=sys.stderr)
        return 2
    path = pack(args.stage, args.out)
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
