// Drag-and-drop upload with one request and one progress bar per file, sent one after another so that exhibit
// labels follow the order in which the files were chosen. htmx has no per-file upload progress,
// hence this small script. The server answers each file with the exhibit's list row, which replaces or joins the
// table; the WebSocket then keeps that row current while the worker processes the file.
(function () {
  "use strict";
  const PARALLEL = 1;

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function placeRow(html) {
    const template = document.createElement("template");
    template.innerHTML = "<table><tbody>" + html + "</tbody></table>";
    const row = template.content.querySelector("tr");
    if (!row) return;
    const existing = document.getElementById(row.id);
    const body = document.getElementById("exhibit-rows");
    const empty = body.querySelector("tr.empty");
    if (empty) empty.remove();
    if (existing) existing.replaceWith(row); else body.appendChild(row);
    if (window.htmx) window.htmx.process(row);
  }

  function uploadOne(url, file, origin, custodian, item) {
    return new Promise(function (resolve) {
      const bar = item.querySelector("progress");
      const note = item.querySelector(".note");
      const form = new FormData();
      form.append("file", file, file.name);
      form.append("origin", origin);
      form.append("custodian", custodian);
      const xhr = new XMLHttpRequest();
      xhr.open("POST", url);
      xhr.setRequestHeader("X-CSRFToken", csrfToken());
      xhr.upload.onprogress = function (event) {
        if (event.lengthComputable) bar.value = event.loaded / event.total;
      };
      xhr.onload = function () {
        let body = {};
        try { body = JSON.parse(xhr.responseText); } catch (e) { body = {}; }
        if (xhr.status === 201) {
          bar.value = 1;
          item.dataset.status = body.status;
          note.textContent = body.status === "queued" ? "uploaded; processing is shown in the exhibit list" : body.status + ": " + body.reason;
          placeRow(body.row_html);
        } else {
          item.dataset.status = "error";
          note.textContent = "not uploaded: " + (body.error || ("server answered " + xhr.status));
        }
        resolve();
      };
      xhr.onerror = function () {
        item.dataset.status = "error";
        note.textContent = "not uploaded: the connection failed. Try this file again.";
        resolve();
      };
      xhr.send(form);
    });
  }

  function start(files) {
    const section = document.getElementById("upload");
    const url = section.dataset.uploadUrl;
    const origin = document.getElementById("upload-origin").value;
    const custodian = document.getElementById("upload-custodian").value;
    const list = document.getElementById("upload-progress");
    const queue = Array.from(files).map(function (file) {
      const item = document.createElement("li");
      item.innerHTML = '<span class="name"></span> <progress max="1" value="0"></progress> <span class="note">waiting</span>';
      item.querySelector(".name").textContent = file.name;
      list.appendChild(item);
      return { file: file, item: item };
    });
    function next() {
      const job = queue.shift();
      if (!job) return Promise.resolve();
      job.item.querySelector(".note").textContent = "uploading";
      return uploadOne(url, job.file, origin, custodian, job.item).then(next);
    }
    for (let i = 0; i < PARALLEL; i++) next();
  }

  // The WebSocket appends a row it has not sent before to #exhibit-rows. This page may already show that row,
  // placed from the upload's answer: replace it rather than add a second copy (and drop the "no materials" row).
  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    const target = event.detail.target;
    if (!target || target.id !== "exhibit-rows") return;
    const empty = target.querySelector("tr.empty");
    if (empty) empty.remove();
    event.detail.fragment.querySelectorAll("tr[id]").forEach(function (row) {
      const existing = document.getElementById(row.id);
      if (!existing) return;
      existing.replaceWith(row);
      if (window.htmx) window.htmx.process(row);
    });
  });

  document.addEventListener("DOMContentLoaded", function () {
    const zone = document.getElementById("dropzone");
    const input = document.getElementById("upload-input");
    if (!zone) return;
    ["dragenter", "dragover"].forEach(function (name) {
      zone.addEventListener(name, function (event) { event.preventDefault(); zone.classList.add("over"); });
    });
    ["dragleave", "drop"].forEach(function (name) {
      zone.addEventListener(name, function (event) { event.preventDefault(); zone.classList.remove("over"); });
    });
    zone.addEventListener("drop", function (event) { start(event.dataTransfer.files); });
    input.addEventListener("change", function () { start(input.files); input.value = ""; });
  });
})();
