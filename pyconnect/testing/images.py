"""The container images: pyconnect's, and Apache Kafka's (broker and Java Connect) for comparison and tests.

Both start from the same Debian base, made by ``mmdebstrap`` (no registry image is pulled): Debian's
essential set with a merged /usr, no documentation, manual pages or translations, plus ``tini`` and
``ca-certificates``. Then:

- ``localhost/pyconnect:<version>-<fingerprint>``: + ``python3`` (Debian's CPython 3.11), the locked
  wheels of ``deploy/image/requirements.lock`` (binary wheels only, checked by hash: no compiler) and
  the project's own wheel, without its test support (``pyconnect.testing``, ``benchmarks``); the
  Strimzi entry scripts under ``/opt/kafka``; user 1001 (group 0); ``tini -- pyconnect`` as entry point.
- ``localhost/pyconnect-kafka:<kafka version>-<fingerprint>``: + ``openjdk-17-jre-headless`` and the
  Kafka jars ``make kafka`` caches; ``tini -- kafka-run`` (``server`` or ``connect-distributed FILE``).

**Reproducible**: the base tarball is made with a fixed ``SOURCE_DATE_EPOCH`` (mmdebstrap then writes
identical bytes for identical package versions), Python byte code is compiled with unchecked hashes
(no timestamps), and ``podman build --timestamp`` gives every file and the image config that same
time. Given the same Debian packages and inputs, two builds give the same image ID.

**Cached**: each tag carries a fingerprint of everything that goes in (base recipe, lock file,
Containerfile, scripts, the project's sources, the jars), so :func:`ensure_image` builds only when an
input changed; the base tarball is kept in ``<cache>/images`` under its own fingerprint, and podman's
layer cache keeps the dependency layer when only the project's sources changed.

Shell::

    python -m pyconnect.testing.images build [pyconnect|kafka|all] [--no-cache]
    python -m pyconnect.testing.images tag pyconnect|kafka
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pyconnect import __version__
from pyconnect.errors import ConnectError
from pyconnect.maven_cache import cache_root
from pyconnect.testing.podman import EngineUnavailable, image_exists, podman

REPO = Path(__file__).resolve().parents[2]
IMAGE_DIR = REPO / "deploy" / "image"
SOURCE_DATE_EPOCH = 1748736000
"""2025-06-01T00:00:00Z: the time of every file and of the images' creation."""
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
BASE_PACKAGES = ("ca-certificates", "tini")
DPKG_OPTIONS = (
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/man/*",
    "path-exclude=/usr/share/info/*",
    "path-exclude=/usr/share/locale/*",
)
PYTHON_TAG = "cp311"
APP_SOURCES = ("pyconnect", "connectors", "spark_analytics")
LEFT_OUT = ("pyconnect/testing",)
BUILD_TIMEOUT_S = 1800
INSTALL_HINT = "apt-get install podman buildah mmdebstrap runc uidmap"


class ImageBuildError(ConnectError, RuntimeError):
    """An image could not be built; the message names the step and what to install or fix."""


@dataclass(frozen=True)
class BaseRecipe:
    """What mmdebstrap installs: the shared base plus one image's packages."""

    name: str
    packages: tuple[str, ...]

    def command(self, output: Path) -> list[str]:
        return [
            "mmdebstrap",
            "--variant=essential",
            "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
            '--essential-hook=mkdir -p "$1/usr/share/man/man1"',
            f"--include={','.join((*BASE_PACKAGES, *self.packages))}",
            *(f"--dpkgopt={o}" for o in DPKG_OPTIONS),
            SUITE,
            str(output),
            MIRROR,
        ]

    def fingerprint(self) -> str:
        return fingerprint_text(" ".join(self.command(Path("out.tar"))) + f" {SOURCE_DATE_EPOCH}")


PYTHON_BASE = BaseRecipe("python", ("python3",))
JAVA_BASE = BaseRecipe("java", ("openjdk-17-jre-headless",))


def fingerprint_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def fingerprint_files(files: Iterable[Path], root: Path) -> str:
    """A short hash of the files' paths (relative to ``root``) and contents, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:12]


def app_files(root: Path = REPO) -> list[Path]:
    """The project files that go into its wheel in the image (tests, benchmarks and test support out)."""
    files = [root / "pyproject.toml", root / "README.md"]
    for top in APP_SOURCES:
        for path in (root / top).rglob("*"):
            rel = path.relative_to(root).as_posix()
            if not path.is_file() or "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
                continue
            if any(rel == out or rel.startswith(out + "/") for out in LEFT_OUT):
                continue
            files.append(path)
    return files


def image_dir_files(*names: str) -> list[Path]:
    found: list[Path] = []
    for name in names:
        path = IMAGE_DIR / name
        found.extend(sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path])
    return found


def images_cache() -> Path:
    path = cache_root() / "images"
    path.mkdir(parents=True, exist_ok=True)
    return path


def base_tarball(recipe: BaseRecipe) -> Path:
    """The recipe's root file system as a tar (made once per fingerprint with mmdebstrap)."""
    out = images_cache() / f"base-{recipe.name}-{recipe.fingerprint()}.tar"
    if out.exists():
        return out
    if not shutil.which("mmdebstrap"):
        raise ImageBuildError(f"mmdebstrap is not installed: {INSTALL_HINT}")
    partial = out.with_suffix(".partial.tar")
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(SOURCE_DATE_EPOCH))
    done = subprocess.run(
        recipe.command(partial), env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
    )
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise ImageBuildError(f"mmdebstrap {recipe.name} base failed:\n{tail}")
    partial.rename(out)
    return out


def _pip(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", *args], capture_output=True, text=True, check=False, timeout=900
    )
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise ImageBuildError(f"pip {args[0]} failed:\n{tail}")


def _target_args() -> list[str]:
    platforms = (
        "manylinux_2_28_x86_64",
        "manylinux_2_17_x86_64",
        "manylinux2014_x86_64",
        "manylinux_2_5_x86_64",
    )
    return [
        *(a for p in platforms for a in ("--platform", p)),
        "--python-version",
        "3.11",
        "--implementation",
        "cp",
        "--abi",
        PYTHON_TAG,
        "--abi",
        "abi3",
        "--abi",
        "none",
        "--only-binary=:all:",
    ]


def dependency_wheels() -> Path:
    """The locked wheels, downloaded once per lock file (pip checks every hash)."""
    lock = IMAGE_DIR / "requirements.lock"
    out = images_cache() / f"wheels-{fingerprint_files([lock], IMAGE_DIR)}"
    if not (out / ".complete").exists():
        shutil.rmtree(out, ignore_errors=True)
        _pip(
            "download",
            "-q",
            "--no-deps",
            "--require-hashes",
            "--dest",
            str(out),
            *_target_args(),
            "-r",
            str(lock),
        )
        (out / ".complete").write_text("")
    return out


def strip_symbols(tree: Path) -> None:
    """Drop the symbol tables of the wheels' shared libraries (uvloop's alone shrinks from 13 to 2 MB);
    the code is unchanged, only pip's RECORD hashes no longer match those files."""
    strip = shutil.which("strip")
    if strip is None:
        raise ImageBuildError("strip is not installed: apt-get install binutils")
    libraries = sorted(str(p) for p in tree.rglob("*.so*") if p.is_file())
    if libraries:
        subprocess.run([strip, "--strip-unneeded", *libraries], check=True, capture_output=True, timeout=300)


def _copy_sources(dest: Path) -> None:
    for path in app_files():
        target = dest / path.relative_to(REPO)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    for out in LEFT_OUT:
        shutil.rmtree(dest / out, ignore_errors=True)


def _install(target: Path, *requirements: str, find_links: Path) -> None:
    _pip(
        "install",
        "-q",
        "--no-deps",
        "--no-index",
        "--no-compile",
        "--find-links",
        str(find_links),
        "--target",
        str(target),
        *_target_args(),
        *requirements,
    )


def _stage_pyconnect(context: Path) -> None:
    wheels = dependency_wheels()
    deps = context / "dependencies"
    lock = IMAGE_DIR / "requirements.lock"
    names = [line.split()[0] for line in lock.read_text().splitlines() if line and not line.startswith("#")]
    _install(deps, *names, find_links=wheels)
    shutil.rmtree(deps / "bin", ignore_errors=True)
    strip_symbols(deps)
    with tempfile.TemporaryDirectory(prefix="pyconnect-wheel-") as tmp:
        src = Path(tmp) / "src"
        _copy_sources(src)
        built = Path(tmp) / "dist"
        env = dict(os.environ, SOURCE_DATE_EPOCH=str(SOURCE_DATE_EPOCH))
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "-q",
                "--no-deps",
                "--no-build-isolation",
                "-w",
                str(built),
                str(src),
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=600,
        )
        if done.returncode != 0:
            raise ImageBuildError(
                f"building the pyconnect wheel failed: {done.stderr.strip().splitlines()[-1:]}"
            )
        app = context / "application"
        _install(app, "pyconnect", find_links=built)
        shutil.rmtree(app / "benchmarks", ignore_errors=True)
        shutil.rmtree(app / "bin", ignore_errors=True)
    shutil.copytree(IMAGE_DIR / "strimzi", context / "strimzi")
    shutil.copy2(IMAGE_DIR / "pyconnect", context / "pyconnect")


def _stage_kafka(context: Path) -> None:
    from pyconnect.testing.distribution import ensure_distribution

    dist = ensure_distribution()
    libs = context / "libs"
    libs.mkdir()
    for jar in sorted(dist.libs.glob("*.jar")):
        os.link(jar.resolve(), libs / jar.name)
    shutil.copytree(IMAGE_DIR / "kafka", context / "kafka")


@dataclass(frozen=True)
class ImageSpec:
    """One image: its repository name, base recipe, Containerfile and staged inputs."""

    name: str
    repository: str
    version: str
    recipe: BaseRecipe
    containerfile: str
    inputs: tuple[str, ...]

    def input_fingerprint(self) -> str:
        files = image_dir_files(self.containerfile, *self.inputs)
        parts = [self.recipe.fingerprint(), fingerprint_files(files, IMAGE_DIR), str(SOURCE_DATE_EPOCH)]
        if self.name == "pyconnect":
            parts.append(fingerprint_files(app_files(), REPO))
        else:
            from pyconnect.testing.distribution import distribution_home

            jars = sorted((distribution_home() / "libs").glob("*.jar"))
            parts.append(fingerprint_text(";".join(j.name for j in jars)))
        return fingerprint_text("/".join(parts))

    def tag(self) -> str:
        return f"{self.repository}:{self.version}-{self.input_fingerprint()}"


PYCONNECT = ImageSpec(
    "pyconnect",
    "localhost/pyconnect",
    __version__,
    PYTHON_BASE,
    "Containerfile",
    ("requirements.lock", "strimzi", "pyconnect"),
)


def _kafka_spec() -> ImageSpec:
    from pyconnect.testing.distribution import KAFKA_VERSION

    return ImageSpec(
        "kafka", "localhost/pyconnect-kafka", KAFKA_VERSION, JAVA_BASE, "Containerfile.kafka", ("kafka",)
    )


def spec(name: str) -> ImageSpec:
    if name == "pyconnect":
        return PYCONNECT
    if name == "kafka":
        return _kafka_spec()
    raise ValueError(f"unknown image {name!r}: pyconnect or kafka")


def build(image: ImageSpec, *, no_cache: bool = False, tag: str | None = None) -> str:
    """Build ``image`` (always) and return its tag; ``tag`` overrides the fingerprinted one."""
    target = tag or image.tag()
    tarball = base_tarball(image.recipe)
    with tempfile.TemporaryDirectory(prefix=f"image-{image.name}-", dir=images_cache()) as tmp:
        context = Path(tmp)
        os.link(tarball, context / "base.tar")
        if image.name == "pyconnect":
            _stage_pyconnect(context)
        else:
            _stage_kafka(context)
        args = [
            "build",
            "--timestamp",
            str(SOURCE_DATE_EPOCH),
            "--layers",
            "--pull=never",
            "--network=host",
            "-f",
            str(IMAGE_DIR / image.containerfile),
            "-t",
            target,
        ]
        if no_cache:
            args.append("--no-cache")
        done = podman(*args, str(context), check=False, timeout=BUILD_TIMEOUT_S)
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
            raise ImageBuildError(f"podman build of {image.name} failed:\n{tail}")
    podman("tag", target, f"{image.repository}:latest", check=False)
    return target


def ensure_image(name: str) -> str:
    """The fingerprinted tag of image ``name``, built first when podman does not have it."""
    image = spec(name)
    tag = image.tag()
    if not image_exists(tag):
        build(image)
    return tag


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pyconnect.testing.images")
    sub = parser.add_subparsers(dest="command", required=True)
    build_p = sub.add_parser("build", help="build the images whose inputs changed (or all with --no-cache)")
    build_p.add_argument("which", nargs="?", default="all", choices=("pyconnect", "kafka", "all"))
    build_p.add_argument("--no-cache", action="store_true", help="rebuild even when the tag exists")
    tag_p = sub.add_parser("tag", help="print the fingerprinted tag of an image")
    tag_p.add_argument("which", choices=("pyconnect", "kafka"))
    args = parser.parse_args(argv)
    try:
        if args.command == "tag":
            print(spec(args.which).tag())
            return 0
        names = ("pyconnect", "kafka") if args.which == "all" else (args.which,)
        for name in names:
            print(build(spec(name), no_cache=True) if args.no_cache else ensure_image(name))
        return 0
    except (ImageBuildError, EngineUnavailable, RuntimeError) as exc:
        print(f"pyconnect: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
