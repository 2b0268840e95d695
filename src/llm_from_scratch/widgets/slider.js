// Precomputed slider view (anywidget): every frame was computed in Python for one slider value;
// moving the slider only swaps frames, so it works in the static book with no kernel.
let instances = 0;

function h(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

function render({ model, el }) {
  const texts = model.get("value_texts");
  const frames = model.get("frames");
  const uid = `lfs-slider-${Date.now().toString(36)}-${(instances += 1)}`;
  const range = h("input", {
    type: "range",
    id: `${uid}-range`,
    min: "0",
    max: String(frames.length - 1),
    step: "1",
  });
  const value = h("output", { class: "lfs-slider__value", for: range.id });
  // As wide as the longest value text, so the track keeps its length and place as values change.
  value.style.minWidth = `${Math.max(...texts.map((text) => Array.from(text).length))}ch`;
  const frame = h("div", { class: "lfs-slider__frame" });
  const root = h("div", { class: "lfs-slider", "data-lm-suppress-shortcuts": "true" }, [
    h("div", { class: "lfs-slider__control" }, [
      h("label", { for: range.id }, [model.get("label")]),
      range,
      value,
    ]),
    frame,
  ]);

  const show = (index) => {
    range.value = String(index);
    range.setAttribute("aria-valuetext", texts[index]);
    value.textContent = texts[index];
    frame.innerHTML = frames[index]; // trusted: computed by the package in Python
  };
  const onInput = () => {
    const index = Number(range.value);
    show(index);
    model.set("index", index);
    try {
      model.save_changes(); // no-op without a kernel (static book)
    } catch {
      // A static page has no comm to sync through; the view stays correct regardless.
    }
  };
  const onModelChange = () => show(model.get("index"));
  range.addEventListener("input", onInput);
  range.addEventListener("keydown", (event) => event.stopPropagation());
  model.on("change:index", onModelChange);
  show(model.get("index"));
  el.replaceChildren(root);
  return () => model.off("change:index", onModelChange);
}

export default { render };
