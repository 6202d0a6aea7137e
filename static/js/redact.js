// Draw a redaction box on the page image: drag over the image, and the form's coordinates (points on the page
// as displayed) are filled in. Without JavaScript the same form takes typed coordinates.
(function () {
  function setup(figure) {
    const image = figure.querySelector("img");
    const form = document.getElementById("redaction-form");
    if (!image || !form) return;
    const widthPt = parseFloat(figure.dataset.widthPt), heightPt = parseFloat(figure.dataset.heightPt);
    const marquee = document.createElement("div");
    marquee.className = "redaction-draft";
    marquee.hidden = true;
    figure.appendChild(marquee);
    let start = null;
    function point(event) {
      const box = image.getBoundingClientRect();
      const x = Math.min(Math.max(event.clientX - box.left, 0), box.width);
      const y = Math.min(Math.max(event.clientY - box.top, 0), box.height);
      return {x: x, y: y, w: box.width, h: box.height};
    }
    function show(a, b) {
      const left = Math.min(a.x, b.x), top = Math.min(a.y, b.y);
      marquee.style.left = (100 * left / a.w) + "%";
      marquee.style.top = (100 * top / a.h) + "%";
      marquee.style.width = (100 * Math.abs(b.x - a.x) / a.w) + "%";
      marquee.style.height = (100 * Math.abs(b.y - a.y) / a.h) + "%";
      marquee.hidden = false;
      const scaleX = widthPt / a.w, scaleY = heightPt / a.h;
      form.elements.x0.value = (left * scaleX).toFixed(2);
      form.elements.y0.value = (top * scaleY).toFixed(2);
      form.elements.x1.value = (Math.max(a.x, b.x) * scaleX).toFixed(2);
      form.elements.y1.value = (Math.max(a.y, b.y) * scaleY).toFixed(2);
    }
    image.addEventListener("dragstart", function (event) { event.preventDefault(); });
    image.addEventListener("pointerdown", function (event) {
      start = point(event);
      image.setPointerCapture(event.pointerId);
    });
    image.addEventListener("pointermove", function (event) { if (start) show(start, point(event)); });
    image.addEventListener("pointerup", function (event) {
      if (!start) return;
      show(start, point(event));
      start = null;
      form.elements.reason.focus();
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("figure[data-redact]").forEach(setup);
  });
})();
