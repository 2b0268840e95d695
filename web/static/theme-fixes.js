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
})();
