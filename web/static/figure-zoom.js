// A figure scaled down to fit the column opens at its full size when clicked (or, focused, with
// Enter or Space); the view closes with its button, Escape or a click outside the image.
(function () {
  "use strict";
  var dialog;

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
      if (image.complete) mark(image);
      else image.addEventListener("load", function () { mark(image); });
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
