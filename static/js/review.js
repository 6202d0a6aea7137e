// Draft review keyboard and text clicks. htmx does the loading (the margin's links fetch the side panel, forms
// swap the review body); what htmx cannot do is keep a "current item" and move it with keys, or pick which of
// several overlapping findings a click on the text means. Keys: j / k next / previous item in the margin,
// o open the current item's source page, w focus its waive (or confirm) reason.
(function () {
  "use strict";

  let currentKey = null;
  let focusReasonAfterSwap = false;
  // The item the keys asked for last, while no click or form has filled the panel since.
  let lastKeyLoad = null;
  let keyLoading = false;

  function items() {
    return Array.from(document.querySelectorAll("#margin .margin-item[data-key]"));
  }

  function itemFor(key) {
    return key ? document.querySelector('#margin .margin-item[data-key="' + key + '"]') : null;
  }

  function spansFor(key) {
    return Array.from(document.querySelectorAll("#draft-text .seg")).filter(function (seg) {
      const keys = (seg.dataset.keys || "").split(" ").concat((seg.dataset.starts || "").split(" "));
      return keys.indexOf(key) >= 0;
    });
  }

  function mark(key) {
    document.querySelectorAll("#draft-text .seg.current, #margin .current").forEach(function (el) {
      el.classList.remove("current");
    });
    currentKey = key;
    const item = itemFor(key);
    if (!item) return;
    item.classList.add("current");
    item.scrollIntoView({ block: "nearest" });
    const spans = spansFor(key);
    spans.forEach(function (seg) { seg.classList.add("current"); });
    if (spans.length) spans[0].scrollIntoView({ block: "center" });
  }

  function load(key, openSource) {
    const item = itemFor(key);
    if (!item || !window.htmx) return;
    mark(key);
    // Sent from the panel, whose hx-sync="this:replace" aborts a request still in flight: the last key wins.
    lastKeyLoad = { key: key, openSource: openSource };
    keyLoading = true;
    try {
      window.htmx.ajax("GET", item.dataset.url + (openSource ? "?open=1" : ""),
        { source: "#panel", target: "#panel", swap: "innerHTML" });
    } finally {
      keyLoading = false;
    }
  }

  function step(delta) {
    const list = items();
    if (!list.length) return;
    let index = list.findIndex(function (item) { return item.dataset.key === currentKey; });
    index = index < 0 ? (delta > 0 ? 0 : list.length - 1) : Math.min(list.length - 1, Math.max(0, index + delta));
    load(list[index].dataset.key, false);
  }

  function panelKey() {
    const body = document.querySelector("#panel .panel-body[data-key]");
    return body ? body.dataset.key : null;
  }

  function focusReason() {
    const reason = document.getElementById("resolve-reason");
    if (reason) reason.focus();
    return Boolean(reason);
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target.closest && target.closest("input, textarea, select, [contenteditable]")) {
      if (event.key === "Escape") target.blur();
      return;
    }
    if (!document.getElementById("margin")) return;
    if (event.key === "j") { step(1); event.preventDefault(); }
    else if (event.key === "k") { step(-1); event.preventDefault(); }
    else if (event.key === "o") {
      if (!currentKey) step(1);
      if (currentKey) load(currentKey, true);
      event.preventDefault();
    } else if (event.key === "w") {
      if (!currentKey) return;
      event.preventDefault();
      if (panelKey() === currentKey && focusReason()) return;
      focusReasonAfterSwap = true;
      load(currentKey, false);
    }
  });

  // A click on highlighted text opens the item it belongs to: of several overlapping ones, a finding before an
  // attack, and of those the one starting nearest before the click (the innermost, usually).
  document.addEventListener("click", function (event) {
    const seg = event.target.closest && event.target.closest("#draft-text .seg[data-keys]");
    if (!seg || (window.getSelection && String(window.getSelection()))) return;
    const keys = seg.dataset.keys.split(" ");
    const findings = keys.filter(function (k) { return k[0] === "f"; });
    const pool = findings.length ? findings : keys;
    const order = items().map(function (item) { return item.dataset.key; });
    pool.sort(function (a, b) { return order.indexOf(b) - order.indexOf(a); });
    load(pool[0], true);
  });

  // Only the panel request made last may fill the panel: pressing j twice quickly must not let the first answer
  // land after the second one and leave the panel (and the current item) one step behind.
  let panelRequests = 0;
  document.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.target && event.detail.target.id === "panel") {
      event.detail.xhr.reviewSeq = ++panelRequests;
      if (!keyLoading) lastKeyLoad = null;
    }
  });
  document.addEventListener("htmx:beforeSwap", function (event) {
    const seq = event.detail.xhr && event.detail.xhr.reviewSeq;
    if (seq && seq !== panelRequests) event.detail.shouldSwap = false;
  });

  // Whatever put an item in the panel (a margin link, a key, a form), follow it; re-mark after the review body
  // is swapped (a waiver re-renders it).
  document.addEventListener("htmx:afterSettle", function () {
    const key = panelKey();
    if (lastKeyLoad && key && key !== lastKeyLoad.key && !lastKeyLoad.retried) {
      // An answer to an earlier key press landed last after all: ask once more for the item the keys chose.
      const again = lastKeyLoad;
      load(again.key, again.openSource);
      if (lastKeyLoad) lastKeyLoad.retried = true;
      return;
    }
    if (key) mark(key); else if (currentKey) mark(currentKey);
    if (focusReasonAfterSwap) {
      focusReasonAfterSwap = false;
      focusReason();
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    const key = panelKey();
    if (key) mark(key);
  });
})();
