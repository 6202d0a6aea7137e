"""The topology admin's forms: a board and a model server, each checked against the rules table
(:mod:`pipeline.topology.rules`) where the GPUs are chosen.

A model's ``clean()`` cannot see many-to-many values before they are saved, so the rules are checked in the form's
``_post_clean``, after the instance holds the form's values, with the GPUs from the form and the topology read once
by :func:`pipeline.topology.selectors.snapshot_load` (as Django's ``UserCreationForm._post_clean`` calls
``validate_password``). Errors land on the field each rule names (``gpus``, ``context_tokens``) or above the form.
"""

from pathlib import Path

from django import forms
from django.core.exceptions import ValidationError

from .models import Board, ModelServer, sampling_valid
from .topology.foresight import GgufHeaderError, header_from_path, header_from_upload, view_forecast
from .topology.rules import board_errors, server_errors
from .topology.selectors import snapshot_load
from .topology.snapshot import Snapshot, server_view


def _chosen_gpu_ids(form: forms.ModelForm) -> list[int]:
    return [gpu.pk for gpu in form.cleaned_data.get("gpus") or []]


class BoardForm(forms.ModelForm):
    """A board of one host's GPUs; refused when the rules table finds an error in it (a GPU in two boards, GPUs
    of another host)."""

    class Meta:
        model = Board
        fields = ["host", "name", "kind", "gpus"]

    def _post_clean(self) -> None:
        gpu_ids = _chosen_gpu_ids(self)
        super()._post_clean()
        if errors := board_errors(self.instance, gpu_ids, snapshot_load()):
            self.add_error(None, ValidationError(errors))


class ModelServerForm(forms.ModelForm):
    """A model server with its write-only API key, its GGUF header (read from the model path or an upload) and
    the question asked before enabling a server whose decode forecast is under its floor. Refused when the rules
    table finds an error; warnings are shown after saving (:class:`pipeline.admin.ModelServerAdmin`)."""

    api_key = forms.CharField(
        label="API key", required=False, strip=True, widget=forms.PasswordInput(render_value=False),
        help_text="llama-server --api-key. Write-only: stored in a 0600 file outside the database, never shown. "
                  "Leave blank to keep the current key.",
    )
    clear_api_key = forms.BooleanField(label="remove the API key", required=False)
    gguf_header_file = forms.FileField(
        label="GGUF header", required=False,
        help_text="Upload the model's GGUF, or only its first 64 MiB (head -c 64M model.gguf > header.gguf), when "
                  "the model path is not on this machine. Only the header is read; nothing is kept.",
    )
    enable_despite_forecast = forms.BooleanField(
        label="enable despite the forecast", required=False,
        help_text="Needed to enable a server whose decode-speed forecast is under its floor.",
    )

    class Meta:
        model = ModelServer
        fields = "__all__"

    def clean(self):
        cleaned = super().clean()
        self._read_header(cleaned)
        return cleaned

    def _read_header(self, cleaned) -> None:
        """Read the GGUF header from the upload, else from the model path when it changed (or no header is
        stored yet) and the file is on this machine; a changed path that is not here drops the old header."""
        upload, path = cleaned.get("gguf_header_file"), (cleaned.get("model_path") or "").strip()
        field = "gguf_header_file" if upload else "model_path"
        try:
            if upload:
                shape = header_from_upload(upload)
            elif path and ("model_path" in self.changed_data or not self.instance.gguf_header) \
                    and Path(path).is_absolute() and Path(path).exists():
                shape = header_from_path(path)
            else:
                if "model_path" in self.changed_data:
                    self.instance.gguf_header = {}
                return
        except GgufHeaderError as error:
            self.add_error(field, str(error))
            return
        self.instance.gguf_header = shape.to_json()

    def _post_clean(self) -> None:
        gpu_ids = _chosen_gpu_ids(self)
        super()._post_clean()
        snapshot = snapshot_load()
        # Sampling settings the model refuses are reported alone, as its clean() stops there.
        if sampling_valid(self.instance.sampling):
            if errors := server_errors(self.instance, gpu_ids, snapshot):
                self.add_error(None, ValidationError(errors))
        self._ask_before_enabling_slow(gpu_ids, snapshot)

    def _ask_before_enabling_slow(self, gpu_ids: list[int], snapshot: Snapshot) -> None:
        """Refuse to enable a server whose decode forecast is under its floor unless the box says so; a server
        already enabled keeps going (the rules table shows the warning)."""
        server = self.instance
        if not server.enabled or self.cleaned_data.get("enable_despite_forecast"):
            return
        if server.pk and ModelServer.objects.filter(pk=server.pk, enabled=True).exists():
            return
        view = server_view(server, gpu_ids)
        result = view_forecast(snapshot.with_server(view), view).forecast
        if result is not None and result.forecast_tok_s < server.decode_floor:
            self.add_error("enabled", (
                f"Decode is forecast at {result.forecast_tok_s:.1f} tok/s, under this server's floor of "
                f"{server.decode_floor:g} tok/s ({result.summary()}). Tick \"enable despite the forecast\" to "
                "enable it anyway, or leave it disabled."))
