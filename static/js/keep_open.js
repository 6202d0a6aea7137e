// A live update redraws a part of the page as the server sees it, and a <details> it redraws comes back open or
// closed as the server chose (the running stage's output open, the others shut). An attorney who opened a
// finished section's output to read it, or shut a running one, keeps that choice: the <details> marked
// data-keep-open="KEY" is set back as the reader last left it, whenever htmx puts new content on the page.
(function () {
  "use strict";
  const chosen = new Map();

  document.addEventListener("click", function (event) {
    const summary = event.target.closest("details[data-keep-open] > summary");
    if (!summary) return;
    const details = summary.parentElement;
    // The click toggles the <details> after this handler: it will be open when it is shut now.
    chosen.set(details.dataset.keepOpen, !details.open);
  });

  document.addEventListener("htmx:load", function (event) {
    const root = event.detail.elt;
    const found = root.matches("details[data-keep-open]") ? [root] : [];
    found.push(...root.querySelectorAll("details[data-keep-open]"));
    for (const details of found) {
      const open = chosen.get(details.dataset.keepOpen);
      if (open !== undefined) details.open = open;
    }
  });
})();
