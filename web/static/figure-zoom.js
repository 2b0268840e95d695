// A figure scaled down to fit the column opens at its full size when clicked (or, focused, with
// Enter or Space); the view closes with its button, Escape or a click outside the image.
// A figure is never shown so small that its smallest text drops below MIN_TEXT_PX (9 CSS px on a
// phone, 11 on a wider screen): it then keeps that width and pans sideways in its own box.
(function () {
  "use strict";
  var dialog;
  var PHONE_PX = 600; // viewports this wide or narrower are phones
  // The text-size record a BookFigure writes into its PNG (llm_from_scratch.figures.style).
  var LEGIBILITY_KEY = "llm-from-scratch:legibility";
  var records = new WeakMap();

  function minTextPx() {
    return window.innerWidth <= PHONE_PX ? 9 : 11;
  }

  // The Legibility record from a PNG's tEXt chunk (before its first IDAT chunk), or null.
  function legibilityOf(buffer) {
    var bytes = new Uint8Array(buffer);
    var view = new DataView(buffer);
    for (var offset = 8; offset + 8 <= bytes.length; ) {
      var length = view.getUint32(offset);
      var kind = String.fromCharCode.apply(null, bytes.subarray(offset + 4, offset + 8));
      if (kind === "IDAT") return null;
      if (kind === "tEXt") {
        var text = String.fromCharCode.apply(null, bytes.subarray(offset + 8, offset + 8 + length));
        var split = text.indexOf("\0");
        if (text.slice(0, split) === LEGIBILITY_KEY) return JSON.parse(text.slice(split + 1));
      }
      offset += 12 + length;
    }
    return null;
  }

  // The narrowest width (CSS px) at which the figure's smallest text is still minTextPx().
  function legibleWidth(image) {
    var record = records.get(image);
    if (!record) return 0;
    var textPx = (record.smallest_font_pt * record.dpi) / 72;
    if (!(textPx > 0) || !isFinite(textPx)) return 0;
    return Math.min(fullWidth(image), Math.ceil((record.width_px * minTextPx()) / textPx));
  }

  // The figure (its link, if Sphinx wrapped it in one) inside a box that scrolls sideways.
  function panBox(image) {
    var outer = trigger(image);
    if (outer.parentElement.classList.contains("lfs-figure-pan")) return;
    var box = document.createElement("div");
    box.className = "lfs-figure-pan";
    outer.before(box);
    box.append(outer);
  }

  function fullWidth(image) {
    // The book's PNGs hold two pixels per CSS pixel; myst-nb writes their full (CSS) size as an
    // inline style width (or a width attribute), which the column's max-width then overrides.
    return parseFloat(image.style.width) || Number(image.getAttribute("width")) || image.naturalWidth;
  }

  function scaledDown(image) {
    return image.getBoundingClientRect().width + 1 < fullWidth(image);
  }

  function viewer() {
    if (dialog) return dialog;
    dialog = document.createElement("dialog");
    dialog.className = "lfs-zoom";
    dialog.setAttribute("aria-label", "Figure at full size");
    var close = document.createElement("button");
    close.type = "button";
    close.className = "lfs-zoom__close";
    close.textContent = "Close";
    close.addEventListener("click", function () {
      dialog.close();
    });
    var frame = document.createElement("div");
    frame.className = "lfs-zoom__frame";
    dialog.append(close, frame);
    dialog.addEventListener("click", function (event) {
      if (event.target === dialog || event.target === frame) dialog.close();
    });
    dialog.addEventListener("close", function () {
      frame.replaceChildren();
      if (dialog.opener) trigger(dialog.opener).focus();
    });
    document.body.append(dialog);
    return dialog;
  }

  function open(image) {
    var view = viewer();
    var copy = document.createElement("img");
    copy.src = image.currentSrc || image.src;
    copy.alt = image.alt;
    copy.style.width = fullWidth(image) + "px";
    view.querySelector(".lfs-zoom__frame").replaceChildren(copy);
    view.opener = image;
    view.showModal();
  }

  // Sphinx wraps a sized image in a link to its PNG, which the keyboard already reaches;
  // otherwise the image itself becomes the (focusable) button.
  function trigger(image) {
    return image.closest("a.reference") || image;
  }

  function mark(image) {
    var legible = legibleWidth(image);
    image.style.minWidth = legible ? legible + "px" : "";
    var zoomable = scaledDown(image);
    image.classList.toggle("lfs-zoomable", zoomable);
    if (trigger(image) !== image) return;
    if (zoomable) {
      image.tabIndex = 0;
      image.setAttribute("role", "button");
      image.setAttribute("aria-label", "Open at full size: " + (image.alt || "figure"));
    } else {
      image.removeAttribute("tabindex");
      image.removeAttribute("role");
      image.removeAttribute("aria-label");
    }
  }

  function setup() {
    var images = document.querySelectorAll(".bd-article .cell_output img, .bd-article figure img");
    images.forEach(function (image) {
      panBox(image);
      if (image.complete) mark(image);
      else image.addEventListener("load", function () { mark(image); });
      fetch(image.src)
        .then(function (response) {
          return response.ok ? response.arrayBuffer() : null;
        })
        .then(function (buffer) {
          var record = buffer && legibilityOf(buffer);
          if (record) records.set(image, record);
        })
        .catch(function () {}) // a page opened from disk cannot fetch: the figure just fits
        .then(function () {
          mark(image);
          image.dataset.lfsLegible = records.has(image) ? "held" : "unknown"; // for the tests
        });
      var target = trigger(image);
      target.addEventListener("click", function (event) {
        if (!image.classList.contains("lfs-zoomable")) return;
        event.preventDefault(); // the in-page viewer instead of the bare PNG
        open(image);
      });
      if (target === image) {
        image.addEventListener("keydown", function (event) {
          if (!image.classList.contains("lfs-zoomable")) return;
          if (event.key === "Enter" || event.key === " ") {
            event.preventDefault();
            open(image);
          }
        });
      }
    });
    window.addEventListener("resize", function () {
      images.forEach(mark);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();
