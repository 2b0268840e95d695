// Renders the book's widgets from the widget state myst-nb embeds in each page, with no kernel.
// Every widget in the book is an anywidget (its view is an ES module, stored in the state as
// `_esm`, with its stylesheet as `_css`), so this small loader replaces the 3.6 MB
// @jupyter-widgets/html-manager bundle and require.js: it gives each view the part of the
// anywidget model API the views use (get, set, on, off, save_changes) over the stored state.
// The build stores each page's distinct modules and stylesheets once, in the state's
// `lfs_shared` table, and each model names its own ("lfs-shared:0"): web/book_assets.py.
(function () {
  "use strict";
  var STATE = 'script[type="application/vnd.jupyter.widget-state+json"]';
  var VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]';

  function modelOf(state) {
    var listeners = {};
    function emit(event) {
      (listeners[event] || []).slice().forEach(function (callback) {
        callback();
      });
    }
    return {
      get: function (key) {
        return state[key];
      },
      set: function (key, value) {
        var changed = state[key] !== value;
        state[key] = value;
        if (changed) emit("change:" + key);
      },
      on: function (event, callback) {
        (listeners[event] = listeners[event] || []).push(callback);
      },
      off: function (event, callback) {
        if (!event) listeners = {};
        else
          listeners[event] = (listeners[event] || []).filter(function (other) {
            return callback && other !== callback;
          });
      },
      save_changes: function () {}, // a static page has no kernel to sync with
      send: function () {},
    };
  }

  function start() {
    var stateTag = document.querySelector(STATE);
    if (!stateTag) return;
    var documentState = JSON.parse(stateTag.textContent);
    var models = documentState.state;
    var shared = documentState.lfs_shared || {};
    function resolve(text) {
      return typeof text === "string" && Object.prototype.hasOwnProperty.call(shared, text)
        ? shared[text]
        : text;
    }
    var modules = new Map();
    var styles = new Set();
    document.querySelectorAll(VIEW).forEach(function (tag) {
      var id = JSON.parse(tag.textContent).model_id;
      var entry = models[id];
      if (!entry || entry.model_name !== "AnyModel" || !resolve(entry.state._esm)) {
        console.warn("widget " + id + " is not an anywidget; it is not shown");
        return;
      }
      var state = Object.assign({}, entry.state);
      state._esm = resolve(state._esm);
      state._css = resolve(state._css);
      var area = document.createElement("div");
      area.className = "widget-subarea";
      var el = document.createElement("div");
      el.className = "lm-Widget jupyter-widgets";
      area.append(el);
      tag.before(area);
      if (state._css && !styles.has(state._css)) {
        styles.add(state._css);
        var style = document.createElement("style");
        style.textContent = state._css;
        document.head.append(style);
      }
      if (!modules.has(state._esm)) {
        var url = URL.createObjectURL(new Blob([state._esm], { type: "text/javascript" }));
        modules.set(state._esm, import(url));
      }
      modules
        .get(state._esm)
        .then(function (module) {
          var widget = module.default || module;
          if (typeof widget === "function") widget = widget();
          var model = modelOf(state);
          return Promise.resolve(widget.initialize && widget.initialize({ model: model })).then(
            function () {
              return widget.render({ model: model, el: el });
            }
          );
        })
        .catch(function (error) {
          console.error("widget " + id + " failed to render", error);
        });
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
