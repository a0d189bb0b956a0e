"""A local mirror of every file a paper config downloads, for the dress rehearsal.

The paper configs (``workflow/config/paper-{en,zh}.yaml``) fetch their inputs by URL with the
``download`` rule, checked by checksum. The rehearsal runs them in miniature with every URL served
by a local HTTP server (:mod:`pipeline.rehearsal.file_server`), so that the download stage and its
checks run for real. :func:`build` makes the files that server serves and the source lists that
point at it.

Sources mirrored: every entry of ``workflow/data/evaluation-sources.yaml``,
``finetune-sources.yaml`` and ``classification-sources.yaml`` (all of them, not only the
configured tasks'), and the config's own: ``corpus.<lang>.dumps.<part>`` (the dump, its
``index``, their ``checksums_url``), ``bilstm.vectors_url`` and ``bilstm.downloads``.

What is served for each:

- **a byte-identical copy** where the data root holds a file with the source's checksum (at the
  same path, or any path of its ``SHA256SUMS``); the mirror holds a symlink to it (``link=False``:
  a copy). A source joined from ``parts`` is served as parts cut from the data root's joined file
  at line boundaries, so that the download stage's ``--join`` rebuilds it byte for byte (checked
  here with the stage's own join).
- **a small stand-in in the source's official format**, made from real data of the data root,
  where no copy exists (:mod:`pipeline.rehearsal.stand_ins` says which and from what; a source
  without a checksum is served from the same path of the data root if it is there). The dumps'
  ``checksums_url`` serves a ``<sha1>  <basename>`` list naming the stand-ins under the basenames
  of their mirror URLs.

Everything is deterministic (same data root, config and ``base_url`` → same bytes): zip members
sorted with a fixed 1980-01-01 time stamp, gzip with mtime 0, bz2 level 9.

Layout: each file lies in ``mirror`` under its original URL's host and path
(``https://archive.org/download/x/y.bz2`` → ``archive.org/download/x/y.bz2``), served at
``base_url + "/" + that path``: every basename is kept, which a ``checksums_url`` list needs. The
rewritten ``evaluation-sources.yaml``, ``finetune-sources.yaml`` and
``classification-sources.yaml`` go to ``sources_dir`` (default: ``mirror/../sources``), same keys
and structure as the originals, each URL the mirror's and each checksum the served file's (a
checksum key set to null or absent, as for the PPDB pack, CLUE's archives or the BiLSTM's SNLI
train CSV, is filled in with a sha256). :class:`Mirror` holds the config with its own sources
rewritten the same way.
"""

from __future__ import annotations

import copy
import hashlib
import shutil
import tempfile
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from pipeline.download import ALGORITHMS, JOINS
from pipeline.errors import InputError
from pipeline.rehearsal.stand_ins import DUMP_EXCERPTS, DataRoot, StandIns, digests_of, multistream
from pipeline.rehearsal.work_folder import MarkedFolder
from pipeline.tasks.semeval5a import INSTANCE_LINES

SOURCE_FILES = ("evaluation-sources.yaml", "finetune-sources.yaml", "classification-sources.yaml")
# its record; every file it serves lies under its host's folder (relative_path: HOST/PATH), none at its top
MIRROR = MarkedFolder(".rehearsal-mirror", "pipeline.rehearsal.mirror", "a mirror built here", ("*/**",))


@dataclass
class Mirror:
    """What :func:`build` made.

    ``files``: path under ``root`` → sha256 of every served file; ``origins``: the same paths → what
    each is (a copy of which data-root file, or a stand-in made from what); ``downloads``: every
    path under the data root that the rewritten sources and ``config`` let the download rule fetch →
    its rewritten spec (what ``source_flags`` / ``checksum_flags`` of
    ``workflow/rules/functions/download.smk`` read) and ``sha256`` the checksum of the file that
    download writes (a joined file for parts); ``config``: a deep copy of the input config with its
    own sources pointing at the mirror (the workflow reads the rewritten lists where its config key
    ``sources`` names ``sources_dir``: the caller sets it).
    """

    root: Path
    base_url: str
    sources_dir: Path
    config: dict
    files: dict[str, str] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    downloads: dict[str, dict] = field(default_factory=dict)
    sha256: dict[str, str] = field(default_factory=dict)  # path under the data root -> what the download writes

    def url(self, relative: str) -> str:
        return mirror_url(self.base_url, relative)

    def path_of(self, url: str) -> Path:
        """The file in the mirror that a mirror URL serves."""
        prefix = self.base_url.rstrip("/") + "/"
        if not url.startswith(prefix):
            raise ValueError(f"{url} is not a URL of this mirror ({prefix})")
        return self.root / urllib.parse.unquote(url.removeprefix(prefix))

    def copies(self) -> list[str]:
        """Served paths that are byte-identical copies of data-root files."""
        return sorted(path for path, origin in self.origins.items() if origin.startswith("copy of "))

    def served_bytes(self) -> int:
        """Bytes the server serves (symlinked copies included)."""
        return sum((self.root / path).stat().st_size for path in self.files)

    def disk_bytes(self) -> int:
        """Bytes the mirror itself holds (symlinks not followed)."""
        return sum((self.root / path).stat().st_size for path in self.files if not (self.root / path).is_symlink())

    def write_config(self, path: Path) -> Path:
        """Write :attr:`config` as YAML (for ``snakemake --configfile``)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_dump_yaml(self.config), encoding="utf-8")
        return path


def mirror_url(base_url: str, relative: str) -> str:
    return f"{base_url.rstrip('/')}/{urllib.parse.quote(relative)}"


def relative_path(url: str) -> str:
    """Where a source URL's file lies in the mirror: ``HOST/PATH``."""
    parts = urllib.parse.urlsplit(url)
    path = urllib.parse.unquote(parts.path).strip("/")
    segments = [parts.netloc, *path.split("/")]
    if not parts.netloc or not path or parts.query or any(s in ("", ".", "..") for s in segments):
        raise InputError(url, "cannot be mirrored: expected scheme://host/path, without a query or '..'")
    return "/".join(segments)


def _dump_yaml(document) -> str:
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=1 << 16)


# ------------------------------------------------------------------ the builder
class _Builder:
    def __init__(self, data: DataRoot, mirror: Path, base_url: str, link: bool, stand_ins: StandIns):
        self.data = data
        self.mirror = mirror
        self.base_url = base_url
        self.link = link
        self.stand_ins = stand_ins
        self.files: dict[str, str] = {}
        self.origins: dict[str, str] = {}
        self.lists: dict[str, dict[str, str]] = {}  # checksums_url -> {basename: relative path}
        self.digests: dict[str, dict[str, str]] = {}  # path under the data root -> digests of what it gets

    # --- serving
    def _serve(self, relative: str, data: bytes | None, source: Path | None, origin: str) -> dict[str, str]:
        digests = self.data.digests(source) if source is not None else digests_of(data)
        if relative in self.files:
            if self.files[relative] != digests["sha256"]:
                raise InputError(relative, "two sources share this URL but would serve different files")
            return digests
        target = self.mirror / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if source is None:
            target.write_bytes(data)
        elif self.link:
            target.symlink_to(source.resolve())
        else:
            shutil.copyfile(source, target)
        self.files[relative] = digests["sha256"]
        self.origins[relative] = origin
        return digests

    def _stand_in(self, key: str) -> tuple[bytes, str]:
        maker = self.stand_ins.find(key)
        if maker is None:
            raise InputError(
                self.data.root / key, "no byte-identical copy in the data root, and the mirror has no stand-in for it"
            )
        return maker()

    # --- one source
    def entry(self, key: str, spec: dict, maker: Callable[[], tuple[bytes, str]] | None = None) -> dict:
        """The spec of the source fetched to ``key`` (a path under the data root), rewritten for the mirror."""
        if "member" in spec:
            raise InputError(key, "a source read from an archive member (member:) is not mirrored")
        new = dict(spec)
        if "parts" in spec:
            digests = self._parts(key, spec, new)
        else:
            relative = relative_path(spec["url"])
            source = None if maker else self.data.copy_of(key, spec)
            if source is not None:
                digests = self._serve(relative, None, source, f"copy of {source.relative_to(self.data.root)}")
            else:
                data, origin = maker() if maker else self._stand_in(key)
                digests = self._serve(relative, data, None, origin)
            new["url"] = mirror_url(self.base_url, relative)
            if spec.get("checksums_url"):
                basename = new["url"].rsplit("/", 1)[-1]
                self.lists.setdefault(spec["checksums_url"], {})[basename] = relative
                new["checksums_url"] = mirror_url(self.base_url, relative_path(spec["checksums_url"]))
        self.digests[key] = digests
        for algorithm in ALGORITHMS:
            if algorithm in spec:
                new[algorithm] = digests[algorithm]
        if not any(new.get(a) for a in ALGORITHMS) and not new.get("checksums_url"):
            new["sha256"] = digests["sha256"]
        return new

    def _parts(self, key: str, spec: dict, new: dict) -> dict[str, str]:
        """Parts cut from the data root's joined file so that the stage's join rebuilds it exactly."""
        joined = self.data.copy_of(key, spec)
        if joined is None or not any(spec.get(a) for a in ALGORITHMS):
            raise InputError(self.data.root / key, "a source joined from parts needs its joined file (same checksum)")
        data = joined.read_bytes()
        lines = data.removesuffix(b"\n").split(b"\n")
        count = len(spec["parts"])
        if spec["join"] == "sort-by-index":
            header, rows = lines[0], lines[1:]
            chunks = [[header] + rows[0::count]] + [rows[k::count] for k in range(1, count)]
        else:
            size = -(-len(lines) // count)
            chunks = [lines[k * size : (k + 1) * size] for k in range(count)]
        with tempfile.TemporaryDirectory() as folder:  # the download stage's own join, to be sure
            parts = []
            for number, chunk in enumerate(chunks):
                path = Path(folder) / f"part{number}"
                path.write_bytes(b"\n".join(chunk) + b"\n")
                parts.append((spec["parts"][number], path))
            JOINS[spec["join"]](parts, Path(folder) / "joined")
            if (Path(folder) / "joined").read_bytes() != data:
                raise InputError(joined, f"cannot be cut into parts that --join {spec['join']} rebuilds byte for byte")
            new["parts"] = []
            for number, (url, path) in enumerate(parts):
                relative = relative_path(url)
                origin = f"part {number + 1} of {count} of {joined.relative_to(self.data.root)} (real; --join {spec['join']} rebuilds it)"
                self._serve(relative, path.read_bytes(), None, origin)
                new["parts"].append(mirror_url(self.base_url, relative))
        return self.data.digests(joined)

    def checksum_lists(self) -> None:
        """The ``<digest>  <basename>`` lists that ``checksums_url`` sources are checked against."""
        for url, names in sorted(self.lists.items()):
            algorithm = next((a for a in ("md5", "sha256") if a in url.rsplit("/", 1)[-1].lower()), "sha1")
            lines = []
            for basename, relative in sorted(names.items()):
                path = self.mirror / relative
                lines.append(f"{hashlib.new(algorithm, path.read_bytes()).hexdigest()}  {basename}\n")
            what = f"stand-in: the {algorithm} list of {', '.join(sorted(names))} as served here"
            self._serve(relative_path(url), "".join(lines).encode(), None, what)


def build(mirror_config: dict, repo: Path, data_root: Path, mirror: Path, base_url: str, **options) -> Mirror:
    """:func:`fill` ``mirror``, which must be absent, empty or a mirror built before whose record proves
    every file in it (emptied first: :class:`pipeline.rehearsal.work_folder.MarkedFolder`); the record of
    what it holds is written however the build ends."""
    MIRROR.claim(Path(mirror))
    try:
        return fill(mirror_config, repo, data_root, mirror, base_url, **options)
    finally:
        MIRROR.seal(Path(mirror))


def fill(
    config: dict,
    repo: Path,
    data_root: Path,
    mirror: Path,
    base_url: str,
    *,
    sources_dir: Path | None = None,
    link: bool = True,
    pages_per_stream: int = 100,
    evaluation_lines: int | None = None,
) -> Mirror:
    """Fill ``mirror`` with every file ``config`` and the source lists of ``repo/workflow/data`` can
    download, write the rewritten source lists to ``sources_dir`` (default ``mirror/../sources``) and
    return the :class:`Mirror`. ``mirror`` must be empty, absent or a mirror built before (emptied
    first). ``link``: serve data-root copies as symlinks (else as copies). ``pages_per_stream``: pages
    per bz2 stream of the stand-in dumps (Wikimedia's 100). ``evaluation_lines``: serve each evaluation
    text file of more lines as that many of its lines, evenly spaced (its first line, a header where
    it has one, always kept), instead of the whole copy: small evaluation sets for a rehearsal."""
    repo, data_root, mirror = Path(repo), Path(data_root), Path(mirror)
    sources_dir = Path(sources_dir) if sources_dir is not None else mirror.parent / "sources"
    if not (data_root / "SOURCES.md").is_file() and not (data_root / "SHA256SUMS").is_file():
        raise InputError(data_root, "not the real data root (no SOURCES.md or SHA256SUMS)")
    sources = {}
    for name in SOURCE_FILES:
        path = repo / "workflow" / "data" / name
        if not path.is_file():
            raise InputError(path, "source list not found")
        sources[name] = yaml.safe_load(path.read_text(encoding="utf-8"))
    classify = sources["classification-sources.yaml"]
    members: dict[str, set[str]] = {}
    for spec in classify["files"].values():
        if "archive" in spec:
            members.setdefault(spec["archive"], set()).add(spec["member"])
    data = DataRoot(data_root)
    builder = _Builder(data, mirror, base_url, link, StandIns(data, members))
    downloads: dict[str, dict] = {}

    evaluation = {}
    # a file the BiLSTM downloads too (SNLI's dev and test CSVs) is served whole, as one URL serves one file
    shared = {spec.get("url") for spec in ((config.get("bilstm") or {}).get("downloads") or {}).values()}
    for group, files in sources["evaluation-sources.yaml"].items():
        evaluation[group] = {}
        for key, spec in files.items():
            small = evaluation_lines and spec.get("url") not in shared
            # a file of multi-line records keeps whole records (SemEval-2013 5(a): four lines an instance)
            record = INSTANCE_LINES if group == "semeval5a" else 1
            maker = _evenly_spaced(data.copy_of(key, spec), evaluation_lines, record) if small else None
            evaluation[group][key] = downloads[key] = builder.entry(key, spec, maker)
    finetune = {key: builder.entry(key, spec) for key, spec in sources["finetune-sources.yaml"].items()}
    downloads.update(finetune)
    archives = {}
    for name, spec in classify["archives"].items():
        archives[name] = downloads[f"downloads/{name}"] = builder.entry(f"downloads/{name}", spec)
    files = {}
    for key, spec in classify["files"].items():
        files[key] = spec if "archive" in spec else builder.entry(key, spec)
        if "url" in spec:
            downloads[key] = files[key]

    config = copy.deepcopy(config)
    _mirror_corpus(config, builder, data, downloads, pages_per_stream)
    _mirror_bilstm(config, builder, downloads)
    checksums = (config.get("finetune") or {}).get("download_checksums") or {}
    for key in checksums:  # the workflow lays these over finetune-sources.yaml's: the served file's
        if key in finetune:
            checksums[key] = finetune[key]["sha256"] = builder.digests[key]["sha256"]
    builder.checksum_lists()

    sources_dir.mkdir(parents=True, exist_ok=True)
    header = f"# {{name}} rewritten by pipeline/rehearsal/mirror.py: served from {base_url}\n"
    rewritten = {
        "evaluation-sources.yaml": evaluation,
        "finetune-sources.yaml": finetune,
        "classification-sources.yaml": {**classify, "archives": archives, "files": files},
    }
    for name, document in rewritten.items():
        (sources_dir / name).write_text(header.format(name=name) + _dump_yaml(document), encoding="utf-8")
    return Mirror(
        root=mirror,
        base_url=base_url,
        sources_dir=sources_dir,
        config=config,
        files=dict(sorted(builder.files.items())),
        origins=dict(sorted(builder.origins.items())),
        downloads=dict(sorted(downloads.items())),
        sha256={key: builder.digests[key]["sha256"] for key in sorted(downloads)},
    )


def _mirror_corpus(config: dict, builder: _Builder, data: DataRoot, downloads: dict, pages_per_stream: int) -> None:
    for lang, section in (config.get("corpus") or {}).items():
        if not isinstance(section, dict) or not isinstance(section.get("dumps"), dict):
            continue
        for part, spec in section["dumps"].items():
            index = spec.get("index") or {}
            if "url" not in spec and "url" not in index:
                continue
            if lang not in DUMP_EXCERPTS:
                raise InputError(f"corpus.{lang}.dumps.{part}", f"no real dump excerpt of language {lang!r} to mirror")
            excerpt = DUMP_EXCERPTS[lang]
            made = {}

            def make(which: int, excerpt=excerpt, made=made):
                if not made:
                    try:
                        made["pair"] = multistream(data.text(excerpt), pages_per_stream)
                    except ValueError as exc:
                        raise InputError(data.path(excerpt), f"not a dump excerpt: {exc}") from None
                what = ("multistream dump", "multistream index")[which]
                return made["pair"][which], f"stand-in: a {what} ({pages_per_stream} pages per stream) of {excerpt}"

            if "url" in spec:
                new = builder.entry(spec["path"], spec, maker=lambda make=make: make(0))
                spec.update({key: new[key] for key in new if key != "index"})
                downloads[spec["path"]] = spec
            if "url" in index:
                new_index = builder.entry(index["path"], index, maker=lambda make=make: make(1))
                index.update(new_index)
                downloads[index["path"]] = index


def _mirror_bilstm(config: dict, builder: _Builder, downloads: dict) -> None:
    bilstm = config.get("bilstm") or {}
    if bilstm.get("vectors_url") and bilstm.get("vectors") != "word2vec":
        spec = {"url": bilstm["vectors_url"]}
        if bilstm.get("vectors_sha256"):
            spec["sha256"] = bilstm["vectors_sha256"]
        new = builder.entry(bilstm["vectors"], spec)
        bilstm["vectors_url"], bilstm["vectors_sha256"] = new["url"], new["sha256"]
        downloads[bilstm["vectors"]] = {"url": new["url"], "sha256": new["sha256"]}
    for key, spec in (bilstm.get("downloads") or {}).items():
        bilstm["downloads"][key] = downloads[key] = builder.entry(key, spec)


def _evenly_spaced(source: Path | None, lines: int, record: int = 1):
    """A stand-in maker: ``lines`` evenly spaced lines of ``source`` (its first line kept), or None where
    the file is short, not text, or absent; in a file of ``record``-line records, whole records evenly
    spaced. Files read side by side (an STS pair's input and gold scores) keep the same line numbers,
    since the spacing depends only on the line count."""
    if source is None or source.suffix in (".json", ".md"):
        return None
    data = source.read_bytes()
    if b"\0" in data[:4096]:
        return None
    rows = data.split(b"\n")
    trailing = rows[-1] == b""
    rows = rows[:-1] if trailing else rows
    if len(rows) <= lines:
        return None
    records = [rows[i : i + record] for i in range(0, len(rows), record)]
    step = len(records) / (lines // record)
    kept = [row for i in range(lines // record) for row in records[int(i * step)]]
    body = b"\n".join(kept) + (b"\n" if trailing else b"")
    return lambda: (body, f"{len(kept)} of the {len(rows)} lines of {source.name}, evenly spaced (real)")
