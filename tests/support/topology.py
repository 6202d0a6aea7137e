"""The admin's model-server form as a browser posts it, for tests of the topology rules at the form."""

from pipeline.models import ModelServer


def server_form(server: ModelServer, **changes) -> dict:
    """Return the POST data of ``server``'s admin change form as saved now (no role rows), with ``changes`` applied."""
    data = {
        "name": server.name, "host": server.host_id or "", "backend": server.backend, "base_url": server.base_url,
        "model_name": server.model_name, "model_path": server.model_path, "enabled": "on",
        "quantization": server.quantization, "kv_cache_type": server.kv_cache_type, "flash_attention": "on",
        "context_tokens": server.context_tokens or "", "parallel_slots": server.parallel_slots,
        "gpu_layers": server.gpu_layers, "extra_args": "", "gpus": [g.pk for g in server.gpus.all()],
        "decode_floor_tok_s": "",
        "api_key": "", "roles-TOTAL_FORMS": "0", "roles-INITIAL_FORMS": "0", "roles-MIN_NUM_FORMS": "0",
        "roles-MAX_NUM_FORMS": "1000",
    }
    data.update(changes)
    return data
