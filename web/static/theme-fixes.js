// Loaded in every page's <head>, before the theme's scripts (which run at the end of <body>).
(function () {
  "use strict";
  // pydata-sphinx-theme 0.15.2 (pinned: its ☰ collapses the sidebar on desktop) opens the
  // primary sidebar's "more links" menu on load without checking that the menu exists; the book
  // has none, so every page logged a TypeError (pydata-sphinx-theme #1696). A hidden, empty
  // stand-in gives that call its element. This listener is registered before the theme's own.
  document.addEventListener("DOMContentLoaded", function () {
    var sidebar = document.querySelector(".bd-sidebar-primary");
    if (!sidebar || sidebar.querySelector("[id^=pst-nav-more-links]")) return;
    var stub = document.createElement("div");
    stub.id = "pst-nav-more-links-unused";
    stub.hidden = true;
    sidebar.append(stub);
  });

  // Accessibility repairs, once the theme, Bootstrap's tooltips and sphinx-togglebutton have
  // built their parts (they do so when the document is ready): axe-core then finds nothing
  // serious (tests/browser/test_accessibility.py).
  function repair() {
    // The sidebar toggles are <label for=checkbox> elements that Bootstrap gives an aria-label:
    // announce them as the buttons they are and let the keyboard reach and press them.
    document.querySelectorAll("label.sidebar-toggle").forEach(function (label) {
      label.setAttribute("role", "button");
      label.tabIndex = 0;
      label.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          label.click();
        }
      });
    });
    // An accessible name must contain the visible words ("Search Ctrl+K", "Show code cell
    // source"): drop the labels that replace them.
    document
      .querySelectorAll(".search-button-field[aria-label], summary[aria-label]")
      .forEach(function (node) {
        node.removeAttribute("aria-label");
      });
    // A code block that scrolls sideways must take keyboard focus, or keyboard users cannot
    // scroll it.
    document.querySelectorAll(".bd-article pre").forEach(function (pre) {
      if (pre.scrollWidth > pre.clientWidth || pre.scrollHeight > pre.clientHeight) {
        pre.tabIndex = 0;
      }
    });
    // docutils marks the bibliography role="list" but gives its entries no listitem role (and
    // puts back-reference links directly inside): let it be an ordinary block.
    document.querySelectorAll(".citation-list[role=list]").forEach(function (list) {
      list.removeAttribute("role");
    });
  }
  window.addEventListener("load", repair);

  // The download menu offers the page's executed notebook beside its .md source (the build puts
  // it there and names it in a meta tag: web/book_assets.py).
  document.addEventListener("DOMContentLoaded", function () {
    var meta = document.querySelector('meta[name="lfs:notebook"]');
    var source = document.querySelector("a.btn-download-source-button");
    if (!meta || !source) return;
    var item = source.closest("li").cloneNode(true);
    var link = item.querySelector("a");
    link.href = meta.content;
    link.title = "Download the executed notebook";
    link.setAttribute("download", "");
    link.removeAttribute("target");
    link.querySelector(".btn__text-container").textContent = ".ipynb";
    source.closest("li").after(item);
  });
})();
