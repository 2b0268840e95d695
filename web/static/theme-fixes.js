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
    // A code block or a table (theme-fixes.css) that scrolls sideways must take keyboard focus,
    // or keyboard users cannot scroll it.
    document.querySelectorAll(".bd-article pre, .bd-article table").forEach(function (pre) {
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

  // Search snippets. Sphinx 7.4's searchtools.js builds each result's snippet from the text of
  // the result page's `[role="main"]` element (Search.htmlToText). The pinned theme marks no
  // element so: every snippet came out empty, with a console warning (newer theme releases mark
  // <main>, whose text starts with the print-only contents list, #jb-print-docs-body). Read the
  // article instead, which holds the page's own text and every section anchor. This runs before
  // searchtools.js starts its search (both wait for the document, this listener is older).
  document.addEventListener("DOMContentLoaded", function () {
    if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") return;
    var sphinxHtmlToText = Search.htmlToText;
    Search.htmlToText = function (htmlString, anchor) {
      var page = new DOMParser().parseFromString(htmlString, "text/html");
      var article = page.querySelector("article.bd-article");
      if (!article) return sphinxHtmlToText(htmlString, anchor);
      // Snippets quote prose: code cells and code blocks are left out.
      article.querySelectorAll(".headerlink, script, style, .cell_input, pre").forEach(function (node) {
        node.remove();
      });
      var block = anchor ? article.querySelector(anchor) : null;
      return (block || article).textContent;
    };
  });

  // Whole words. searchtools.js also counts a query word found inside a longer one: a title
  // or index entry containing it ("rope" in "property"), or, when the word is no indexed term,
  // every term containing it. Only a word that starts where a word starts counts here (the
  // stemmed "attent" still finds "attention"), in the results and in the snippet.
  var WORD_CHAR = /[\p{L}\p{N}_]/u;
  function escapeRegExp(text) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  function wordStart(word) {
    return new RegExp("(?:^|[^\\p{L}\\p{N}_])" + escapeRegExp(word), "u");
  }
  function wordsOnly(entries, query) {
    var kept = {};
    var pattern = wordStart(query);
    Object.keys(entries).forEach(function (entry) {
      var lower = entry.toLowerCase();
      if (!lower.includes(query) || pattern.test(lower)) kept[entry] = entries[entry];
    });
    return kept;
  }
  function exactOnly(terms, words) {
    var copy = Object.assign({}, terms);
    words.forEach(function (word) {
      if (!Object.prototype.hasOwnProperty.call(copy, word)) copy[word] = undefined;
    });
    return copy;
  }
  document.addEventListener("DOMContentLoaded", function () {
    if (typeof Search === "undefined" || typeof Search._performSearch !== "function") return;
    var sphinxSearch = Search._performSearch;
    Search._performSearch = function (query, searchTerms) {
      var index = Search._index;
      var saved = {
        alltitles: index.alltitles,
        indexentries: index.indexentries,
        terms: index.terms,
        titleterms: index.titleterms,
      };
      var lower = query.toLowerCase().trim();
      index.alltitles = wordsOnly(saved.alltitles || {}, lower);
      index.indexentries = wordsOnly(saved.indexentries || {}, lower);
      index.terms = exactOnly(saved.terms || {}, searchTerms);
      index.titleterms = exactOnly(saved.titleterms || {}, searchTerms);
      try {
        return sphinxSearch.apply(this, arguments);
      } finally {
        Object.assign(index, saved);
      }
    };
    // The snippet starts 120 characters before the first whole-word match (as Sphinx's does
    // before its first match anywhere).
    Search.makeSearchSummary = function (htmlText, keywords, anchor) {
      var text = Search.htmlToText(htmlText, anchor);
      if (text === "") return null;
      var lower = text.toLowerCase();
      var start = -1;
      keywords.forEach(function (keyword) {
        var found = wordStart(keyword.toLowerCase()).exec(lower);
        if (found === null) return;
        var at = found.index + (WORD_CHAR.test(found[0][0]) ? 0 : 1);
        if (start < 0 || at < start) start = at;
      });
      var from = Math.max(start - 120, 0);
      var summary = document.createElement("p");
      summary.classList.add("context");
      summary.textContent =
        (from === 0 ? "" : "...") + text.substr(from, 240).trim() + (from + 240 < text.length ? "..." : "");
      return summary;
    };
  });

  // The right-hand contents highlight. Bootstrap's ScrollSpy (the theme's, on <body>) watches
  // each whole <section> with an IntersectionObserver whose thresholds are fractions of the
  // section's own height (0.1, 0.5, 1) inside the top 40% of the window: a section more than
  // about four window-heights tall never shows a tenth of itself there, so while it is read the
  // highlight stays on the section before it, or on nothing. Instead, the current entry is the
  // last one whose heading has passed a reading line a fifth of the way down the window below
  // the sticky header (the scroll padding an anchor jump leaves), a function of the scroll
  // position alone. At the foot of the page, where the last headings cannot reach the line, an
  // entry the reader jumped to (the location hash) wins if its heading is in view.
  var toc = null;
  function tocEntries() {
    return Array.prototype.map
      .call(toc.querySelectorAll("a.nav-link[href^='#']"), function (link) {
        var target = document.getElementById(decodeURIComponent(link.hash.slice(1)));
        var heading = target && target.querySelector(":scope > h1, :scope > h2, :scope > h3, " +
          ":scope > h4, :scope > h5, :scope > h6");
        return { link: link, heading: heading || target };
      })
      .filter(function (entry) {
        return entry.heading;
      });
  }
  function highlight(link) {
    // Bootstrap's classes, as the theme styles them: the link and its <li>, and the entries
    // it is nested in. With no link (no heading reached yet) nothing is highlighted.
    toc.querySelectorAll(".active").forEach(function (node) {
      node.classList.remove("active");
    });
    for (var node = link; node && toc.contains(node); node = node.parentElement) {
      if (node.tagName !== "LI") continue;
      node.classList.add("active");
      var own = node.querySelector(":scope > a.nav-link");
      if (own) own.classList.add("active");
    }
  }
  function currentLink() {
    var entries = tocEntries();
    var padding = parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop) || 0;
    var line = padding + (window.innerHeight - padding) / 5;
    var current = null;
    entries.forEach(function (entry) {
      if (entry.heading.getBoundingClientRect().top <= line) current = entry.link;
    });
    var root = document.documentElement;
    if (window.scrollY + window.innerHeight >= root.scrollHeight - 1 && location.hash) {
      entries.forEach(function (entry) {
        var top = entry.heading.getBoundingClientRect().top;
        if (entry.link.hash === location.hash && top >= 0 && top < window.innerHeight) {
          current = entry.link;
        }
      });
    }
    return current;
  }
  var pending = false;
  function update() {
    pending = false;
    highlight(currentLink());
  }
  function schedule() {
    if (!pending) {
      pending = true;
      window.requestAnimationFrame(update);
    }
  }
  document.addEventListener("DOMContentLoaded", function () {
    toc = document.querySelector(".bd-toc-nav");
    if (!toc || document.body.dataset.bsSpy !== "scroll") return;
    // Bootstrap starts its ScrollSpy on window load from this attribute: it never starts.
    delete document.body.dataset.bsSpy;
    window.addEventListener("scroll", schedule, { passive: true });
    window.addEventListener("resize", schedule);
    window.addEventListener("hashchange", schedule);
    window.addEventListener("load", schedule);
    schedule();
  });
})();
