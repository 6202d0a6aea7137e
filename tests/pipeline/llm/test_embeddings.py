"""Embeddings and reranking: the GGUF written from all-MiniLM-L6-v2 (pipeline/embedder_gguf.py), the real embedder
on llama-server (marked live), and ModelClient.embed / rerank against scripted servers for every failure."""

import math
import zipfile

import gguf
import numpy as np
import pytest

from pipeline import embedder_gguf
from pipeline.embedded import EMBEDDER, EMBEDDER_PARALLEL, start_embedded_embedder
from pipeline.embedder_gguf import embedder_model_path, model_zip
from pipeline.llm import HostNotAllowed, ModelClient, ModelServerError, ServerLoading, ServerUnavailable, StreamTimeout
from pipeline.llm.client import ServerConfig
from tests.support.fake_embedder import DIMS, bag_vector, fake_embedder
from tests.support.processes import free_port
from tests.support.scripted_server import LOOPBACK_HOSTS, Reply, ScriptedServer, json_reply

RENT = "The tenant failed to pay rent for August."
RENT_AGAIN = "Rent for the month of August was not paid by the lessee."
APPEALS = "The court of appeals reviews claim construction de novo."
LOADING = b'{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}'


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory):
    """A cache folder holding the converted embedder, converted once for the whole run."""
    folder = tmp_path_factory.mktemp("models")
    embedder_model_path(folder)
    return folder


@pytest.fixture(scope="session")
def embedder(model_cache, tmp_path_factory):
    """The real embedder (llama-server, the production command line), started once for the run."""
    server = start_embedded_embedder(cache_dir=model_cache, log_path=tmp_path_factory.mktemp("llama") / "embed.log")
    yield server
    server.stop()


@pytest.fixture
def live_client(embedder):
    client = ModelClient(ServerConfig(allowed_hosts=LOOPBACK_HOSTS,
                                      base_url=embedder.base_url, model=EMBEDDER.alias, name="embedded embedder",
                                      parallel_slots=EMBEDDER_PARALLEL))
    yield client
    client.close()


@pytest.fixture
def server():
    with ScriptedServer() as scripted:
        yield scripted


def client_for(server, backend="llama.cpp", **kwargs) -> ModelClient:
    context = {"context_tokens": 512} if backend == "ollama" else {}
    return ModelClient(ServerConfig(allowed_hosts=LOOPBACK_HOSTS,
                                    base_url=server.url, backend=backend, model="minilm", name="scripted embedder",
                                    **context), **kwargs)


def field(reader: gguf.GGUFReader, key: str):
    return reader.fields[key].contents()


# ---- the conversion -------------------------------------------------------------------------------------------

def test_conversion_is_a_bert_gguf_as_llama_cpp_converts_it(model_cache):
    reader = gguf.GGUFReader(str(embedder_model_path(model_cache)))
    assert field(reader, "general.architecture") == "bert"
    assert (field(reader, "bert.block_count"), field(reader, "bert.embedding_length")) == (6, 384)
    assert (field(reader, "bert.context_length"), field(reader, "bert.feed_forward_length")) == (512, 1536)
    assert field(reader, "bert.attention.head_count") == 12
    assert math.isclose(field(reader, "bert.attention.layer_norm_epsilon"), 1e-12, rel_tol=1e-6)
    assert field(reader, "bert.attention.causal") is False
    assert field(reader, "bert.pooling_type") == gguf.PoolingType.MEAN
    assert field(reader, "tokenizer.ggml.model") == "bert"
    tokens, types = field(reader, "tokenizer.ggml.tokens"), field(reader, "tokenizer.ggml.token_type")
    assert len(tokens) == len(types) == 30522
    # Phantom space: [CLS] kept, "the" (1996) gains U+2581, the continuation "##s" (2015) loses its "##".
    assert (tokens[101], tokens[1996], tokens[2015]) == ("[CLS]", "\u2581the", "s")
    assert not any(token.startswith("##") for token in tokens)
    assert [types[i] for i in (0, 100, 101, 102, 103)] == [gguf.TokenType.CONTROL] * 5
    assert types[1996] == gguf.TokenType.NORMAL
    special = {key: field(reader, f"tokenizer.ggml.{key}") for key in (
        "bos_token_id", "eos_token_id", "unknown_token_id", "seperator_token_id", "padding_token_id", "mask_token_id",
        "add_bos_token", "add_eos_token")}
    assert special == {"bos_token_id": 101, "eos_token_id": 102, "unknown_token_id": 100, "seperator_token_id": 102,
                       "padding_token_id": 0, "mask_token_id": 103, "add_bos_token": True, "add_eos_token": True}
    tensors = {tensor.name: tensor for tensor in reader.tensors}
    assert len(tensors) == 5 + 6 * 16 and not any("pooler" in name for name in tensors)
    assert tensors["token_embd.weight"].tensor_type == gguf.GGMLQuantizationType.F16
    assert list(tensors["token_embd.weight"].shape) == [384, 30522]
    assert tensors["blk.5.ffn_up.weight"].tensor_type == gguf.GGMLQuantizationType.F16
    for name in ("position_embd.weight", "token_types.weight", "token_embd_norm.weight", "blk.0.attn_q.bias",
                 "blk.5.layer_output_norm.weight"):
        assert tensors[name].tensor_type == gguf.GGMLQuantizationType.F32, name


def test_conversion_is_cached_by_the_zip_digest_and_written_whole(model_cache, tmp_path, monkeypatch):
    first = embedder_model_path(model_cache)
    stamp = first.stat().st_mtime_ns
    assert embedder_model_path(model_cache) == first and first.stat().st_mtime_ns == stamp  # not converted again

    # Another package version (another ZIP): converted again under a new name, the old file removed.
    other = tmp_path / "model.zip"
    with zipfile.ZipFile(model_zip()) as source, zipfile.ZipFile(other, "w") as target:
        for item in source.infolist():
            if item.filename != "model.safetensors":
                target.writestr(item, source.read(item))
        target.writestr("README.md", "another version")
    monkeypatch.setattr(embedder_gguf, "model_zip", lambda: other)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / first.name).write_bytes(b"a conversion of the previous version")
    written = []

    def fake_convert(source, out):
        written.append(out)
        out.write_bytes(b"GGUF" + source.read_bytes()[:16])
        return out

    monkeypatch.setattr(embedder_gguf, "convert", fake_convert)
    second = embedder_model_path(cache)
    assert second != first and second.name.startswith("all-minilm-l6-v2-")
    assert written[0].parent == cache and written[0].name.startswith(".") and not written[0].exists()  # renamed
    assert [p.name for p in cache.iterdir()] == [second.name]

    def broken_convert(source, out):
        out.write_bytes(b"half a file")
        raise OSError("disk full")

    second.unlink()
    monkeypatch.setattr(embedder_gguf, "convert", broken_convert)
    with pytest.raises(OSError, match="disk full"):
        embedder_model_path(cache)
    assert list(cache.iterdir()) == []  # neither the part nor a final file is left


# ---- the real embedder -------------------------------------------------------------------------------------------

def cosine(a, b) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.mark.live
def test_real_embedder_gives_unit_vectors_that_rank_by_meaning(live_client):
    embedded = live_client.embed([RENT, RENT_AGAIN, APPEALS])
    assert embedded.model == EMBEDDER.alias
    assert [len(v) for v in embedded.vectors] == [384] * 3
    assert np.allclose(np.linalg.norm(embedded.vectors, axis=1), 1.0, atol=1e-4)  # llama.cpp normalises
    rent, rent_again, appeals = embedded.vectors
    assert cosine(rent, rent_again) > 0.6 and cosine(rent, appeals) < 0.2
    assert cosine(rent, rent_again) - cosine(rent, appeals) > 0.4
    assert embedded.prompt_tokens == 11 + 16 + 12  # word pieces with [CLS] and [SEP], as Hugging Face counts them
    assert embedded.duration_ms > 0


@pytest.mark.live
def test_real_embedder_batches_keep_input_order(live_client):
    texts = [RENT, APPEALS, "Exhibit 12 is the lease.", RENT_AGAIN, "Summary judgment was denied."]
    alone = [live_client.embed([text]).vectors[0] for text in texts]
    batched = live_client.embed(texts, batch_size=2)
    assert len(batched.vectors) == len(texts)
    for text, one, together in zip(texts, alone, batched.vectors, strict=True):
        assert cosine(one, together) > 0.9999, text
    assert batched.prompt_tokens == sum(live_client.embed([t]).prompt_tokens for t in texts)


def reference_embedding(ids: list[int]) -> np.ndarray:
    """all-MiniLM-L6-v2 computed in float32 numpy from the package's safetensors (BERT, mean pooling, unit
    length), to check the converted GGUF computes the same model."""
    from safetensors.numpy import load

    with zipfile.ZipFile(model_zip()) as archive:
        w = load(archive.read("model.safetensors"))

    def norm(x, name):
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[f"{name}.weight"] + w[f"{name}.bias"]

    def dense(x, name):
        return x @ w[f"{name}.weight"].T + w[f"{name}.bias"]

    n, heads, size = len(ids), 12, 32
    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = norm(x, "embeddings.LayerNorm")
    erf = np.vectorize(math.erf)
    for layer in range(6):
        p = f"encoder.layer.{layer}"
        q, k, v = (dense(x, f"{p}.attention.self.{part}").reshape(n, heads, size).transpose(1, 0, 2)
                   for part in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attended = (scores / scores.sum(-1, keepdims=True) @ v).transpose(1, 0, 2).reshape(n, heads * size)
        x = norm(x + dense(attended, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm")
        hidden = dense(x, f"{p}.intermediate.dense")
        x = norm(x + dense(0.5 * hidden * (1 + erf(hidden / math.sqrt(2))), f"{p}.output.dense"),
                 f"{p}.output.LayerNorm")
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


@pytest.mark.live
def test_real_embedder_tokenizes_and_computes_as_the_original_model(embedder, live_client):
    import httpx

    text = "Hello, unaffable world!"
    ids = httpx.post(f"{embedder.base_url}/tokenize", json={"content": text, "add_special": True}).json()["tokens"]
    # As Hugging Face's tokenizer.json gives them (checked with the tokenizers library): [CLS] hello , una ##ffa ##ble
    # world ! [SEP].
    assert ids == [101, 7592, 1010, 14477, 20961, 3468, 2088, 999, 102]
    assert cosine(live_client.embed([text]).vectors[0], reference_embedding(ids)) > 0.9999


@pytest.mark.live
def test_real_embedder_refuses_an_input_beyond_its_context_and_has_no_reranker(live_client):
    with pytest.raises(ModelServerError, match=r"input \(602 tokens\) is larger than the max context size \(512"):
        live_client.embed(["word " * 600])
    with pytest.raises(ModelServerError, match="does not support reranking"):
        live_client.rerank(RENT, [RENT_AGAIN])


# ---- scripted servers: the wire formats and every failure ------------------------------------------------------

def test_llama_cpp_batches_are_sent_in_order_and_counted(server):
    batches = fake_embedder(server)
    texts = ["one rent", "two appeals", "three lease", "four motion", "five court"]
    embedded = client_for(server).embed(texts, batch_size=2)
    assert batches == [texts[0:2], texts[2:4], texts[4:5]]
    assert embedded.vectors == [bag_vector(t) for t in texts] and len(embedded.vectors[0]) == DIMS
    assert embedded.prompt_tokens == 10 and embedded.model == "minilm"
    assert all(body["model"] == "minilm" for path, body in server.requests if path == "/v1/embeddings")


def test_no_model_named_lets_llama_cpp_name_its_own(server):
    fake_embedder(server)
    client = ModelClient(ServerConfig(allowed_hosts=LOOPBACK_HOSTS, base_url=server.url, name="scripted embedder"))
    assert client.embed(["a"]).model == "fake-embedder"
    assert "model" not in server.requests[-1][1]


@pytest.mark.parametrize("backend", ["llama.cpp", "openai"])
def test_answers_out_of_order_are_put_in_input_order(server, backend):
    server.routes["/v1/embeddings"] = lambda body: json_reply(
        {"data": [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]}],
         "model": "served-name", "usage": {"prompt_tokens": 7}})
    embedded = client_for(server, backend).embed(["first", "second"])
    assert embedded.vectors == [[1.0, 0.0], [0.0, 1.0]]
    assert (embedded.model, embedded.prompt_tokens) == ("served-name", 7)


def test_nothing_to_embed_sends_nothing(server):
    embedded = client_for(server).embed([])
    assert embedded.vectors == [] and server.requests == []


@pytest.mark.parametrize(("answer", "message"), [
    ({"data": [{"index": 0, "embedding": [1.0, 0.0]}]}, "sent 1 vectors for 2 texts"),
    ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [0.0]}]}, "expected form"),
    ({"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0]}]}, "bad vector for text 1"),
    ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": ["x"]}]}, "not all finite numbers"),
    ({"data": [{"index": 0, "embedding": []}, {"index": 1, "embedding": []}]}, "bad vector for text 0"),
    ({"object": "list"}, "expected form"),
    ([1, 2], "not an object"),
])
def test_malformed_answers_are_errors_that_say_what_was_wrong(server, answer, message):
    server.routes["/v1/embeddings"] = lambda body: json_reply(answer)
    with pytest.raises(ModelServerError, match=message) as caught:
        client_for(server).embed(["a", "b"])
    assert caught.value.status == "error"


def test_an_answer_that_is_not_json_is_an_error(server):
    server.routes["/v1/embeddings"] = lambda body: Reply(pieces=[b'{"data": [{"index": 0, "embe'],
                                                         content_type="application/json")
    with pytest.raises(ModelServerError, match="not JSON"):
        client_for(server).embed(["a"])


def test_a_refusal_carries_the_server_message(server):
    server.routes["/v1/embeddings"] = lambda body: json_reply(
        {"error": {"code": 500, "message": "input (702 tokens) is too large to process", "type": "server_error"}},
        status=500)
    with pytest.raises(ModelServerError, match=r"HTTP 500 input \(702 tokens\) is too large"):
        client_for(server).embed(["a"])


def test_loading_server_is_waited_for_then_used(server):
    calls = []

    def route(body):
        calls.append(body)
        if len(calls) <= 2:
            return Reply(status=503, pieces=[LOADING], content_type="application/json")
        return json_reply({"data": [{"index": 0, "embedding": [0.6, 0.8]}]})

    server.routes["/v1/embeddings"] = route
    assert client_for(server, loading_wait_s=10).embed(["a"]).vectors == [[0.6, 0.8]]
    assert len(calls) == 3


def test_loading_too_long_is_server_loading(server):
    server.routes["/v1/embeddings"] = lambda body: Reply(status=503, pieces=[LOADING], content_type="application/json")
    with pytest.raises(ServerLoading, match="still loading its model") as caught:
        client_for(server, loading_wait_s=0).embed(["a"])
    assert caught.value.status == "loading"


def test_connection_refused_is_server_unavailable():
    client = ModelClient(ServerConfig(allowed_hosts=LOOPBACK_HOSTS,
                                      base_url=f"http://127.0.0.1:{free_port()}", name="embedder"))
    with pytest.raises(ServerUnavailable, match="Could not connect to embedder") as caught:
        client.embed(["a"])
    assert caught.value.status == "down"
    with pytest.raises(ServerUnavailable):
        client.rerank("q", ["a"])


def test_a_silent_server_is_a_timeout(server):
    server.routes["/v1/embeddings"] = lambda body: Reply(hold_s=2.0, content_type="application/json")
    with pytest.raises(StreamTimeout, match="did not answer /v1/embeddings within 0 s") as caught:
        client_for(server, read_timeout_s=0.3).embed(["a"])
    assert caught.value.status == "timeout"


def test_the_host_allowlist_stops_a_client_before_any_call():
    with pytest.raises(HostNotAllowed):
        ModelClient(ServerConfig(base_url="http://203.0.113.7:8080", name="remote embedder"))


def test_ollama_embed(server):
    def route(body):
        return json_reply({"model": "all-minilm", "embeddings": [[len(t), 1.0] for t in body["input"]],
                           "prompt_eval_count": 4 * len(body["input"])})

    server.routes["/api/embed"] = route
    embedded = client_for(server, "ollama").embed(["ab", "abc", "abcd"], batch_size=2)
    assert embedded.vectors == [[2.0, 1.0], [3.0, 1.0], [4.0, 1.0]]
    assert (embedded.prompt_tokens, embedded.model) == (12, "all-minilm")
    assert [body for _, body in server.requests] == [
        {"model": "minilm", "input": ["ab", "abc"], "options": {"num_ctx": 512}},
        {"model": "minilm", "input": ["abcd"], "options": {"num_ctx": 512}}]


def test_ollama_wrong_count_and_no_token_count(server):
    server.routes["/api/embed"] = lambda body: json_reply({"embeddings": [[1.0, 0.0]]})
    assert client_for(server, "ollama").embed(["a"]).prompt_tokens is None
    with pytest.raises(ModelServerError, match="sent 1 vectors for 2 texts"):
        client_for(server, "ollama").embed(["a", "b"])


def test_rerank_scores_come_back_in_document_order(server):
    def route(body):
        scores = [len(set(body["query"].split()) & set(d.split())) / 3 for d in body["documents"]]
        results = sorted(({"index": i, "relevance_score": s} for i, s in enumerate(scores)),
                         key=lambda r: -r["relevance_score"])
        return json_reply({"model": "reranker", "object": "list", "results": results[:body["top_n"]]})

    server.routes["/v1/rerank"] = route
    documents = ["rent was paid", "unpaid rent for august", "claim construction"]
    scores = client_for(server).rerank("unpaid rent august", documents)
    assert scores == pytest.approx([1 / 3, 1.0, 0.0])
    assert server.requests[-1][1] == {"model": "minilm", "query": "unpaid rent august", "documents": documents,
                                      "top_n": 3}


@pytest.mark.parametrize(("results", "message"), [
    ([{"index": 0, "relevance_score": 0.5}], "scored 1 of 2 documents"),
    ([{"index": 0, "relevance_score": 0.5}, {"index": 0, "relevance_score": 0.1}], "index 0"),
    ([{"index": 0, "relevance_score": 0.5}, {"index": 5, "relevance_score": 0.1}], "index 5"),
    ([{"index": 0, "relevance_score": "high"}, {"index": 1, "relevance_score": 0.1}], "score 'high'"),
    ([{"index": 0}, {"index": 1}], "expected form"),
])
def test_rerank_answers_that_do_not_score_each_document_are_errors(server, results, message):
    server.routes["/v1/rerank"] = lambda body: json_reply({"results": results})
    with pytest.raises(ModelServerError, match=message):
        client_for(server).rerank("q", ["a", "b"])


def test_rerank_not_offered(server):
    server.routes["/v1/rerank"] = lambda body: json_reply(
        {"error": {"code": 501, "message": "This server does not support reranking. Start it with `--reranking`",
                   "type": "not_supported_error"}}, status=501)
    with pytest.raises(ModelServerError, match="HTTP 501 This server does not support reranking"):
        client_for(server).rerank("q", ["a"])
    assert client_for(server).rerank("q", []) == []
    with pytest.raises(ModelServerError, match="Ollama has no reranking endpoint"):
        client_for(server, "ollama").rerank("q", ["a"])
    assert len(server.requests) == 1  # neither the empty nor the Ollama rerank sent anything
