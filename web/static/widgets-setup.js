// Loaded (by myst-nb's nb_ipywidgets_js) after require.js and before the widget manager, on
// pages that embed widget state. Everything is served from this book's _static/ folder.
(function () {
  "use strict";
  // This script's folder, e.g. "../_static/": require.js resolves module paths from it, so
  // the widget manager's fonts and anywidget load from _static/vendor/ on every page depth.
  var here = document.currentScript.src.replace(/[^/]*$/, "");
  window.requirejs.config({
    baseUrl: here,
    paths: {
      "@jupyter-widgets/html-manager/dist": "vendor/html-manager",
      anywidget: "vendor/anywidget/index",
    },
  });
  // html-manager 1.0 typesets through the MathJax 2 API (MathJax.Hub.Queue); the book loads
  // MathJax 3. Translate the one call it makes once MathJax 3 has replaced its config object.
  function installHubShim() {
    var mathjax = window.MathJax;
    if (!mathjax || mathjax.Hub || !mathjax.typesetPromise) return;
    mathjax.Hub = {
      Queue: function (job) {
        var element = Array.isArray(job) ? job[2] : undefined;
        mathjax.typesetPromise(element ? [element] : undefined).catch(function (error) {
          console.warn("MathJax typeset failed", error);
        });
      },
    };
  }
  // Runs before the manager renders: its own "load" listener is added later, by require.js.
  window.addEventListener("load", installHubShim);
})();
